package storage

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The storage engine's seams are enforced here, pebble-style
// (internal/lint): all IO goes through vfs.FS and all time through
// clock.Clock, so crash and clock tests cover the real code paths, and bad
// data never panics. A line may opt out with a "lint:ignore <rule>" comment
// that says why.

// lintRule flags calls to pkg.Name for the listed names ("*" for any).
type lintRule struct {
	name    string
	pkg     string
	funcs   map[string]bool
	allowIn []string // path prefixes where the rule does not apply
}

var lintRules = []lintRule{
	{name: "os", pkg: "os", funcs: map[string]bool{"*": true}, allowIn: []string{"vfs/os.go"}},
	{name: "time.Now", pkg: "time", funcs: map[string]bool{"Now": true, "Since": true, "Until": true}, allowIn: []string{"clock/"}},
	{name: "global rand", pkg: "rand", funcs: map[string]bool{"Int": true, "IntN": true, "Int64": true, "Int64N": true, "Uint64": true, "Float64": true, "Perm": true, "Shuffle": true, "Intn": true, "Int63": true}},
}

func TestLintStorageSeams(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		src := map[int]string{}
		for _, cg := range file.Comments {
			for _, c := range cg.List {
				src[fset.Position(c.Pos()).Line] += c.Text
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "panic" {
					line := fset.Position(n.Pos()).Line
					if !strings.Contains(src[line], "lint:ignore panic") {
						t.Errorf("%s:%d: panic in storage code: return an error (or add lint:ignore panic with a reason)", path, line)
					}
				}
			case *ast.SelectorExpr:
				pkg, ok := n.X.(*ast.Ident)
				if !ok {
					return true
				}
				for _, r := range lintRules {
					if pkg.Name != r.pkg || !(r.funcs["*"] || r.funcs[n.Sel.Name]) || allowed(path, r.allowIn) {
						continue
					}
					if r.pkg == "os" && (n.Sel.Name == "PathSeparator" || n.Sel.Name == "FileMode") {
						continue
					}
					line := fset.Position(n.Pos()).Line
					if !strings.Contains(src[line], "lint:ignore "+r.name) {
						t.Errorf("%s:%d: %s.%s bypasses the %s seam", path, line, r.pkg, n.Sel.Name, r.name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func allowed(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(filepath.ToSlash(path), p) {
			return true
		}
	}
	return false
}
