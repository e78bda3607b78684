package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strait-io/strait/raftmeta/mirrormsg/internal/schema"
)

// TestGeneratedUpToDate regenerates the package in memory and compares it
// with the committed files: a schema edited without `go generate`, or a
// generated file edited by hand, fails here. It also catches a generated
// file left behind after its schema was removed.
func TestGeneratedUpToDate(t *testing.T) {
	const pkg = "../.."
	files, err := Generate(filepath.Join(pkg, "testdata", "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 15 { // 14 RPCs and apis.go
		t.Fatalf("generated %d files, want 15", len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(pkg, name))
		if err != nil {
			t.Fatalf("%s: %v (run go generate in raftmeta/mirrormsg)", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the schemas generate (run go generate in raftmeta/mirrormsg)", name)
		}
	}
	entries, err := os.ReadDir(pkg)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || files[e.Name()] != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(pkg, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(data, []byte(header)) {
			t.Errorf("%s is generated but no schema produces it any more", e.Name())
		}
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"CreateMirror": "create_mirror", "BumpLeaderEpochs": "bump_leader_epochs", "X": "x"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestVersionCond covers the version gates no current schema needs (every
// mirror RPC has only v0) but a v1 would.
func TestVersionCond(t *testing.T) {
	valid := schema.Versions{Min: 0, Max: 3}
	for _, c := range []struct {
		r    string
		want string
	}{
		{"0+", ""}, {"0-3", ""}, {"1+", "version >= 1"}, {"0-1", "version <= 1"},
		{"1-2", "version >= 1 && version <= 2"}, {"none", "false"}, {"5+", "false"},
	} {
		r, err := schema.ParseVersions(c.r)
		if err != nil {
			t.Fatal(err)
		}
		if got := versionCond(r, valid, "version"); got != c.want {
			t.Errorf("versionCond(%s) = %q, want %q", c.r, got, c.want)
		}
	}
}
