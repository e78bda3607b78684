package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestServeKeepsSysmonAwake: `strait serve` runs with GODEBUG's schedtrace
// set to its largest value (cmd/strait/sysmon.go: it keeps the Go
// runtime's monitor thread from parking and being woken by every first
// system call after idle). It executes itself to get it, so the process
// started is the one serving (same pid), with other GODEBUG settings
// kept; a schedtrace the operator sets is left as it is.
func TestServeKeepsSysmonAwake(t *testing.T) {
	for _, c := range []struct {
		env  []string // run through env(1) with these arguments
		want string
	}{
		{[]string{"-u", "GODEBUG"}, "GODEBUG=schedtrace=2147483647"},
		{[]string{"GODEBUG=madvdontneed=1"}, "GODEBUG=madvdontneed=1,schedtrace=2147483647"},
		{[]string{"GODEBUG=schedtrace=0"}, "GODEBUG=schedtrace=0"},
	} {
		t.Run(strings.Join(c.env, " "), func(t *testing.T) {
			n := newNode(t)
			n.via = append([]string{"env"}, c.env...)
			p := n.start()
			pid := p.cmd.Process.Pid
			raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				t.Fatal(err)
			}
			var godebug []string
			for _, kv := range strings.Split(string(raw), "\x00") {
				if strings.HasPrefix(kv, "GODEBUG=") {
					godebug = append(godebug, kv)
				}
			}
			if !slices.Equal(godebug, []string{c.want}) {
				t.Fatalf("serving process (pid %d) has %q, want [%s]", pid, godebug, c.want)
			}
			if code, _ := n.term(); code != 0 {
				t.Fatalf("exit code %d after SIGTERM", code)
			}
		})
	}
}
