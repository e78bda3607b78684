package cli_test

import (
	"strings"
	"testing"
)

// TestStartFilterFlags: start takes --include/--exclude instead of --topic;
// neither is a usage error; a pattern with a comma (the lists'
// separator) is refused before any request.
func TestStartFilterFlags(t *testing.T) {
	r := run(t, nil, "start", "m1")
	if r.code != 2 || !strings.Contains(r.stderr, "missing --topic") {
		t.Errorf("start without --topic or --include: exit %d %q", r.code, r.stderr)
	}
	r = run(t, nil, "--bootstrap-server", "127.0.0.1:1", "start", "m1", "--include", "a{1,2}")
	if r.code != 1 || !strings.Contains(r.stderr, `pattern "a{1,2}": empty or with a comma`) {
		t.Errorf("start --include a{1,2}: exit %d %q", r.code, r.stderr)
	}
	r = run(t, nil, "start", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "-include REGEX") || !strings.Contains(r.stdout, "-exclude REGEX") {
		t.Errorf("start --help does not list --include and --exclude:\n%s", r.stdout)
	}
}
