package topic

import (
	"strings"
	"testing"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

// subcommands are a valid invocation of each subcommand.
var subcommands = [][]string{
	{"create", "orders"},
	{"list"},
	{"describe", "orders"},
	{"delete", "orders"},
	{"alter-config", "orders", "--set", "retention.ms=1"},
	{"add-partitions", "orders", "-n", "1"},
	{"trim-prefix", "orders", "-o", "1"},
}

// TestUnreachableBadFlagHelp: against a cluster that is not there every
// subcommand says so in one line and exits 1; a flag it does not have is
// a usage error naming it (exit 2); --help shows the examples.
func TestUnreachableBadFlagHelp(t *testing.T) {
	none := ctltest.Target{Brokers: "127.0.0.1:1"}
	for _, sub := range subcommands {
		args := append([]string{"topic"}, sub...)
		r := ctltest.Run(t, none, "", append(args, "--timeout", "3s")...)
		if r.Code != 1 || strings.Count(r.Stderr, "\n") != 1 || r.Stdout != "" ||
			!strings.HasPrefix(r.Stderr, "strait topic "+sub[0]+": cannot reach the cluster at [127.0.0.1:1]") {
			t.Errorf("unreachable: want one line and exit 1\n%s", r)
		}
		r = ctltest.Run(t, none, "", append(args, "--bogus")...)
		if r.Code != 2 || !strings.HasPrefix(r.Stderr, "strait topic "+sub[0]+": flag provided but not defined: -bogus\nusage: strait topic "+sub[0]) {
			t.Errorf("bad flag: want a usage error\n%s", r)
		}
		r = ctltest.Run(t, ctltest.Target{}, "", "topic", sub[0], "--help")
		if r.Code != 0 || !strings.Contains(r.Stdout, "examples:\n  strait topic "+sub[0]) {
			t.Errorf("--help: want the examples\n%s", r)
		}
	}
}
