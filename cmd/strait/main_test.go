package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestUnknownCommandNamesIt(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"frobnicate"}, &out, &errb); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
	if !strings.Contains(errb.String(), `"frobnicate"`) {
		t.Fatalf("stderr %q does not name the command", errb.String())
	}
}

func TestNoArgumentsPrintsUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "usage:") {
		t.Fatalf("code %d stderr %q", code, errb.String())
	}
}
