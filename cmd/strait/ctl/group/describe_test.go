package group

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

// TestDescribe: classic and KIP-848 groups whose members committed, an
// Empty group, and a missing one, through the binary against Strait and
// kfake: every partition's commit, log end and lag exactly, the member
// owning it, the total lag; the missing group one line and exit 1.
func TestDescribe(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			base := time.Now().Add(-time.Hour)
			produce(t, tg, "orders", base, 10, 7)
			produce(t, tg, "audit", base, 5)
			activeMember(t, tg, "classic-app", "orders", "classic-member", false, map[int32]int64{0: 4, 1: 7})
			activeMember(t, tg, "next-app", "audit", "next-member", true, map[int32]int64{0: 2})
			adminCommit(t, tg, "idle-app", "orders", map[int32]int64{1: 3})

			r := ctltest.Run(t, tg, "", "group", "describe", "classic-app", "next-app", "idle-app", "nosuch", "--json")
			oneLine(t, r, 1, "strait group describe: nosuch: GROUP_ID_NOT_FOUND")
			var got []describeJSON
			decode(t, r, &got)
			if len(got) != 4 {
				t.Fatalf("%d groups\n%s", len(got), r)
			}
			type row struct {
				topic             string
				partition         int32
				current, end, lag int64
				client            string
			}
			check := func(g describeJSON, state, typ string, members int, total int64, want ...row) {
				t.Helper()
				if g.State != state || g.Type != typ || len(g.Members) != members || g.TotalLag != total || g.Error != "" {
					t.Fatalf("%s: state %s type %s members %d total lag %d error %q; want %s %s %d %d\n%s",
						g.Group, g.State, g.Type, len(g.Members), g.TotalLag, g.Error, state, typ, members, total, r)
				}
				if len(g.Partitions) != len(want) {
					t.Fatalf("%s: %d partitions, want %d\n%s", g.Group, len(g.Partitions), len(want), r)
				}
				for i, w := range want {
					p := g.Partitions[i]
					if p.Topic != w.topic || p.Partition != w.partition || num(p.CurrentOffset) != num(&w.current) ||
						num(p.LogEndOffset) != num(&w.end) || num(p.Lag) != num(&w.lag) || p.ClientID != w.client || p.Error != "" {
						t.Fatalf("%s: partition %d: %+v, want %+v\n%s", g.Group, i, p, w, r)
					}
					if w.client != "" && (p.MemberID == "" || p.ClientHost == "") {
						t.Fatalf("%s: partition %d has no member id or host: %+v", g.Group, i, p)
					}
				}
			}
			check(got[0], "Stable", "classic", 1, 6,
				row{"orders", 0, 4, 10, 6, "classic-member"}, row{"orders", 1, 7, 7, 0, "classic-member"})
			check(got[1], "Stable", "consumer", 1, 3, row{"audit", 0, 2, 5, 3, "next-member"})
			check(got[2], "Empty", "classic", 0, 4, row{"orders", 1, 3, 7, 4, ""})
			if got[3].Group != "nosuch" || got[3].Error == "" || !strings.HasPrefix(got[3].Error, "GROUP_ID_NOT_FOUND") {
				t.Fatalf("missing group: %+v", got[3])
			}
			if got[0].Protocol != "cooperative-sticky" || got[0].Members[0].ClientID != "classic-member" ||
				len(got[0].Members[0].Assigned) != 1 || len(got[0].Members[0].Assigned[0].Partitions) != 2 {
				t.Fatalf("classic group's members: %+v", got[0])
			}

			r = ctltest.Run(t, tg, "", "group", "describe", "classic-app", "idle-app")
			if r.Code != 0 {
				t.Fatalf("%s", r)
			}
			for _, re := range []string{
				`(?m)^GROUP\s+classic-app$`, `(?m)^STATE\s+Stable$`, `(?m)^TYPE\s+classic$`, `(?m)^TOTAL-LAG\s+6$`,
				`(?m)^TOPIC\s+PARTITION\s+CURRENT-OFFSET\s+LOG-END-OFFSET\s+LAG\s+MEMBER-ID\s+CLIENT-ID\s+HOST$`,
				`(?m)^orders\s+0\s+4\s+10\s+6\s+\S+\s+classic-member\s+\S+$`,
				`(?m)^orders\s+1\s+7\s+7\s+0\s+\S+\s+classic-member\s+\S+$`,
				`(?m)^GROUP\s+idle-app$`, `(?m)^STATE\s+Empty$`, `(?m)^TOTAL-LAG\s+4$`,
				`(?m)^orders\s+1\s+3\s+7\s+4\s+-\s+-\s+-$`,
			} {
				if !regexp.MustCompile(re).MatchString(r.Stdout) {
					t.Fatalf("table lacks %s\n%s", re, r)
				}
			}
		})
	}
}

// TestDescribeWithoutConsumerGroupDescribe: a cluster that predates
// ConsumerGroupDescribe (kfake as Kafka 3.6) is described with
// DescribeGroups alone.
func TestDescribeWithoutConsumerGroupDescribe(t *testing.T) {
	tg := ctltest.Kfake(t, kfake.MaxVersions(kversion.V3_6_0()))
	produce(t, tg, "orders", time.Now(), 3)
	activeMember(t, tg, "old-app", "orders", "old-member", false, map[int32]int64{0: 1})
	r := ctltest.Must(t, tg, "", "group", "describe", "old-app", "--json")
	var got []describeJSON
	decode(t, r, &got)
	if len(got) != 1 || got[0].State != "Stable" || got[0].Type != "classic" || got[0].TotalLag != 2 ||
		len(got[0].Partitions) != 1 || got[0].Partitions[0].ClientID != "old-member" {
		t.Fatalf("%+v\n%s", got, r)
	}
}
