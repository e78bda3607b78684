package cluster

import (
	"strings"
	"testing"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

// TestClusterQuotas: quotas alter sets and deletes keys of a user, a
// client id and the defaults; quotas describe lists them (table and
// --json) and filters by entity; a bad value or entity is refused.
func TestClusterQuotas(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			ctltest.Must(t, tg, "", "cluster", "quotas", "alter", "--user", "alice", "--set", "producer_byte_rate=5000000", "--set", "request_percentage=12.5")
			ctltest.Must(t, tg, "", "cluster", "quotas", "alter", "--user", "<default>", "--client-id", "<default>", "--set", "consumer_byte_rate=1048576")
			var all []quotaEntry
			decode(t, ctltest.Must(t, tg, "", "cluster", "quotas", "describe", "--json"), &all)
			if len(all) != 2 {
				t.Fatalf("described %+v", all)
			}
			r := ctltest.Must(t, tg, "", "cluster", "quotas", "describe", "--user", "alice", "--strict")
			for _, want := range []string{"ENTITY", "user=alice", "producer_byte_rate", "5000000", "request_percentage", "12.5"} {
				if !strings.Contains(r.Stdout, want) {
					t.Fatalf("table lacks %q\n%s", want, r)
				}
			}
			if strings.Contains(r.Stdout, "consumer_byte_rate") {
				t.Fatalf("the filter by user=alice lists the defaults\n%s", r)
			}
			r = ctltest.Must(t, tg, "", "cluster", "quotas", "describe", "--user", "<default>")
			if !strings.Contains(r.Stdout, "user=<default>,client-id=<default>") || !strings.Contains(r.Stdout, "1048576") {
				t.Fatalf("default entity\n%s", r)
			}
			ctltest.Must(t, tg, "", "cluster", "quotas", "alter", "--user", "alice", "--delete", "producer_byte_rate", "--delete", "request_percentage")
			var alice []quotaEntry
			decode(t, ctltest.Must(t, tg, "", "cluster", "quotas", "describe", "--user", "alice", "--json"), &alice)
			if len(alice) != 0 {
				t.Fatalf("alice's quotas deleted, yet %+v", alice)
			}
			if tg.Name == "strait" {
				// kfake stores any key; Strait checks them as Kafka.
				r = ctltest.Run(t, tg, "", "cluster", "quotas", "alter", "--user", "bob", "--set", "producer_byte_rate=1.5")
				if r.Code != 1 || !strings.Contains(r.Stderr, "INVALID_REQUEST") || !strings.Contains(r.Stderr, "must be an integer") {
					t.Fatalf("fractional byte rate: %s", r)
				}
			}
		})
	}
	tg := ctltest.Strait(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"alter", "--set", "producer_byte_rate=1"}, "needs --user, --client-id or --ip"},
		{[]string{"alter", "--user", "u"}, "needs --set"},
		{[]string{"alter", "--user", "u", "--set", "producer_byte_rate=fast"}, "must be a number"},
		{[]string{"describe", "--set", "a=1"}, "are for quotas alter"},
		{[]string{"remove"}, "unknown quotas command"},
	} {
		r := ctltest.Run(t, tg, "", append([]string{"cluster", "quotas"}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: %s", c.args, r)
		}
	}
}
