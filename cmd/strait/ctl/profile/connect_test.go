package profile_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// probe is a client command of the test's own: it prints the number of
// brokers the cluster's metadata lists, over the connection kit resolved.
var probe = &kit.Group{Name: "probe", Summary: "test", Commands: []*kit.Command{{
	Name: "brokers", Summary: "count the brokers",
	Run: func(ctx context.Context, c *kit.Ctx, _ []string, _ any) int {
		adm, err := c.Admin()
		if err != nil {
			return c.Fail(err)
		}
		bs, err := adm.ListBrokers(ctx)
		if err != nil {
			return c.Fail(err)
		}
		fmt.Fprintf(c.Stdout, "%d brokers\n", len(bs))
		return kit.ExitOK
	},
}}}

// TestProfileReachesTheCluster: a profile `strait profile create --use`
// wrote is the connection of a client command run with no connection
// flag, against each target; -X brokers overrides it.
func TestProfileReachesTheCluster(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			h := newHome(t)
			h.must("profile", "create", "dev", "--brokers", tg.Brokers, "--use", "--json")
			h.must("profile", "create", "nowhere", "--brokers", "127.0.0.1:1")
			run := func(args ...string) (int, string, string) {
				var out, errb bytes.Buffer
				getenv := func(k string) string {
					if k == "XDG_CONFIG_HOME" {
						return h.dir
					}
					return ""
				}
				code := kit.Main(context.Background(), probe, args, kit.Env{Stdout: &out, Stderr: &errb, Getenv: getenv})
				return code, out.String(), errb.String()
			}
			if code, out, errb := run("brokers"); code != 0 || out != "1 brokers\n" {
				t.Fatalf("with the current profile: exit %d stdout %q stderr %q", code, out, errb)
			}
			code, out, errb := run("brokers", "--profile", "nowhere", "--timeout", "3s")
			if code != kit.ExitFailed || out != "" || !strings.HasPrefix(errb, "strait probe brokers: ") || !strings.Contains(errb, "127.0.0.1:1") {
				t.Fatalf("--profile nowhere: exit %d stdout %q stderr %q", code, out, errb)
			}
			if code, out, errb := run("brokers", "--profile", "nowhere", "-X", "brokers="+tg.Brokers); code != 0 || out != "1 brokers\n" {
				t.Fatalf("-X over the profile: exit %d stdout %q stderr %q", code, out, errb)
			}
		})
	}
}
