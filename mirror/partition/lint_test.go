package partition

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLintPure enforces what makes the machine pure (DESIGN.md §4 "No global
// state"; style.md item 18): no IO, no goroutines, no clock reads, no global
// randomness, no mutable package state. The rules apply to the package's
// non-test files.
func TestLintPure(t *testing.T) {
	// raftmeta/mirrorstate is the leaf that holds the states and desired
	// states the machine shares with the controller; its files are held to
	// the same rules.
	allowedImports := map[string]bool{"errors": true, "fmt": true, "slices": true, "strings": true, "time": true,
		"github.com/strait-io/strait/raftmeta/mirrorstate": true}
	bannedTime := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true, "AfterFunc": true,
		"Tick": true, "NewTimer": true, "NewTicker": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := filepath.Glob("../../raftmeta/mirrorstate/*.go")
	if err != nil || len(leaf) == 0 {
		t.Fatalf("raftmeta/mirrorstate: %d files, %v", len(leaf), err)
	}
	files = append(files, leaf...)
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowedImports[p] {
				t.Errorf("%s: imports %s: the machine does no IO and takes its randomness from Config.Rand", path, p)
			}
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					call, ok := v.(*ast.CallExpr)
					sel, ok2 := func() (*ast.SelectorExpr, bool) {
						if !ok {
							return nil, false
						}
						s, ok := call.Fun.(*ast.SelectorExpr)
						return s, ok
					}()
					if !ok2 || sel.Sel.Name != "New" || sel.X.(*ast.Ident).Name != "errors" {
						t.Errorf("%s:%d: package-level var other than a sentinel error", path, fset.Position(v.Pos()).Line)
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s:%d: go statement in a pure state machine", path, fset.Position(n.Pos()).Line)
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == "time" && bannedTime[n.Sel.Name] {
					t.Errorf("%s:%d: time.%s: time comes in with the events", path, fset.Position(n.Pos()).Line, n.Sel.Name)
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "panic" {
					t.Errorf("%s:%d: panic: return an error", path, fset.Position(n.Pos()).Line)
				}
			}
			return true
		})
	}
	if checked < 5 {
		t.Fatalf("checked only %d files", checked)
	}
}
