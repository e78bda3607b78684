package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// DESIGN.md's import flow: wire -> broker -> replication/mirror/coordinator
// -> storage, with raftmeta (the metadata image, and leaves such as
// raftmeta/authz/reqctx) below all but storage. A lower package defines the
// interface it needs and broker/ adapts, so no package reaches one above
// it, directly or through another package.
//
// Patterns are module-relative: "x/..." is x and every package below it,
// "x" only x itself.
var importRules = []importRule{
	{from: "storage/...", mustNot: []string{"wire/...", "raftmeta/...", "replication/...", "mirror/...", "coordinator/...", "broker/...", "cmd/...", "bench/..."}},
	// The leaves raftmeta shares with the layers above it (the mirror
	// RPC messages, the mirror states, SCRAM credentials, the JAAS
	// parser, Kafka frames) live under raftmeta/, so it reaches neither
	// wire/ nor mirror/.
	{from: "raftmeta/...", mustNot: []string{"wire/...", "mirror/...", "replication/...", "coordinator/...", "broker/...", "cmd/...", "bench/..."}},
	{from: "replication/...", mustNot: []string{"wire/...", "mirror/...", "coordinator/...", "broker/...", "cmd/...", "bench/..."}},
	{from: "coordinator/...", mustNot: []string{"wire/...", "replication/...", "mirror/...", "broker/...", "cmd/...", "bench/..."}},
	// mirror drives replication and reuses the coordinator runtime, and
	// speaks the mirror RPCs (raftmeta/mirrormsg) with wire/tlsconf's TLS
	// settings; it does not reach the server (wire) or the composition root.
	{from: "mirror/...", mustNot: []string{"wire", "broker/...", "cmd/...", "bench/..."}},
	// wire frames and encodes; every decision is delegated to services
	// that broker/ passes in.
	{from: "wire/...", mustNot: []string{"replication/...", "mirror/...", "coordinator/...", "broker/...", "cmd/...", "bench/..."}},
	{from: "broker/...", mustNot: []string{"cmd/..."}},
}

type importRule struct {
	from    string
	mustNot []string
	// pending names the branch that removes the rule's violations: until
	// then the rule is skipped, and its violating edges are not followed
	// when other rules are checked (so replication is not blamed for
	// what raftmeta imports).
	pending string
}

const modulePath = "github.com/strait-io/strait"

// matches reports whether the module-relative package path p matches the
// pattern pat.
func matches(pat, p string) bool {
	if base, ok := strings.CutSuffix(pat, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pat
}

func matchesAny(pats []string, p string) bool {
	return slices.ContainsFunc(pats, func(pat string) bool { return matches(pat, p) })
}

// moduleImports lists the module's packages with their non-test imports
// inside the module, module-relative (go list, as `go list -deps` walks
// them; test files' imports are not dependencies).
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", modulePath+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		from := strings.TrimPrefix(p.ImportPath, modulePath+"/")
		graph[from] = nil
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				graph[from] = append(graph[from], rel)
			}
		}
	}
	if len(graph) < 10 {
		t.Fatalf("go list found %d packages of %s", len(graph), modulePath)
	}
	return graph
}

// packagesMatching lists the graph's packages matching pat, sorted.
func packagesMatching(graph map[string][]string, pat string) []string {
	var out []string
	for p := range graph {
		if matches(pat, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// violations returns, for each package matching rule.from that reaches a
// forbidden package, the import chain to the first one found, walking
// only the edges follow allows.
func violations(graph map[string][]string, rule importRule, follow func(from, to string) bool) []string {
	var out []string
	for _, start := range packagesMatching(graph, rule.from) {
		// Breadth first, so the chain reported is a shortest one.
		parent := map[string]string{start: ""}
		queue := []string{start}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if matchesAny(rule.mustNot, p) {
				chain := []string{p}
				for q := parent[p]; q != ""; q = parent[q] {
					chain = append(chain, q)
				}
				slices.Reverse(chain)
				out = append(out, strings.Join(chain, " -> "))
				break
			}
			for _, next := range graph[p] {
				if _, seen := parent[next]; !seen && follow(p, next) {
					parent[next] = p
					queue = append(queue, next)
				}
			}
		}
	}
	return out
}

func TestImportLayers(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	graph := moduleImports(t)
	// pendingEdge is an import a pending rule forbids: known, and
	// not followed for the other rules.
	pendingEdge := func(from, to string) bool {
		for _, r := range importRules {
			if r.pending != "" && matches(r.from, from) && matchesAny(r.mustNot, to) {
				return true
			}
		}
		return false
	}
	for _, rule := range importRules {
		name := rule.from + " must not depend on " + strings.Join(rule.mustNot, ", ")
		t.Run(name, func(t *testing.T) {
			if len(packagesMatching(graph, rule.from)) == 0 {
				t.Fatalf("no package matches %s: the rule is stale", rule.from)
			}
			if rule.pending != "" {
				direct := violations(graph, rule, func(from, to string) bool { return matches(rule.from, from) })
				if len(direct) == 0 {
					t.Skipf("pending on %s, and now clean: delete its pending field to enforce it", rule.pending)
				}
				t.Skipf("pending on %s; still:\n\t%s", rule.pending, strings.Join(direct, "\n\t"))
			}
			follow := func(from, to string) bool { return !pendingEdge(from, to) }
			if v := violations(graph, rule, follow); len(v) > 0 {
				t.Errorf("DESIGN.md's import flow is broken:\n\t%s", strings.Join(v, "\n\t"))
			}
		})
	}
}
