package main

import (
	"bytes"
	"testing"

	mirrorcli "github.com/strait-io/strait/mirror/admin/cli"
)

// TestMirrorIsWired: `strait mirror` reaches the mirror CLI (its tests are
// in mirror/admin/cli).
func TestMirrorIsWired(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"mirror", "--help"}, &out, &errb); code != 0 || out.String() != mirrorcli.Usage || errb.Len() != 0 {
		t.Fatalf("exit %d stdout %q stderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run([]string{"mirror", "describe"}, &out, &errb); code != 2 || out.Len() != 0 {
		t.Fatalf("exit %d stdout %q", code, out.String())
	}
}
