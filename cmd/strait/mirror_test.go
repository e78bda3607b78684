package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestMirrorIsWired: `strait mirror` reaches the mirror CLI (its tests are
// in mirror/admin/cli) with the client commands' connection flags.
func TestMirrorIsWired(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"mirror", "--help"}, &out, &errb); code != 0 || errb.Len() != 0 ||
		!strings.HasPrefix(out.String(), "usage: strait mirror") ||
		!strings.Contains(out.String(), "--profile NAME") || !strings.Contains(out.String(), "--bootstrap-server") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run([]string{"mirror", "describe"}, &out, &errb); code != 2 || out.Len() != 0 {
		t.Fatalf("exit %d stdout %q", code, out.String())
	}
}
