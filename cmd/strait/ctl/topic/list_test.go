package topic

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

// TestList: every topic with its counts; --regex matches whole names;
// --detailed adds the partitions; a named topic that is missing is a
// failure line.
func TestList(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			ctltest.Must(t, tg, "", "topic", "create", "orders", "-p", "2")
			ctltest.Must(t, tg, "", "topic", "create", "orders-dlq", "payments", "-p", "1")

			r := ctltest.Must(t, tg, "", "topic", "list")
			wantRows(t, r, "NAME PARTITIONS REPLICAS",
				[]string{"orders", "2", "1"}, []string{"orders-dlq", "1", "1"}, []string{"payments", "1", "1"})

			// "orders" is a whole-name expression: orders-dlq does not match.
			r = ctltest.Must(t, tg, "", "topic", "list", "--regex", "orders|pay.*")
			wantRows(t, r, "NAME PARTITIONS REPLICAS", []string{"orders", "2", "1"}, []string{"payments", "1", "1"})

			r = ctltest.Must(t, tg, "", "topic", "list", "-r", "orders", "-d")
			if want := "orders, 2 partitions, 1 replicas"; !strings.HasPrefix(r.Stdout, want+"\n") {
				t.Fatalf("--detailed: want %q first\n%s", want, r)
			}
			if rs := rows(r.Stdout); len(rs) != 4 || strings.Join(rs[1], " ") != "PARTITION LEADER EPOCH REPLICAS ISR" ||
				rs[2][0] != "0" || rs[3][0] != "1" || rs[3][3] != rs[3][1] {
				t.Fatalf("--detailed partitions\n%s", r)
			}

			r = ctltest.Must(t, tg, "", "topic", "list", "--detailed", "--json")
			got := decode[[]listed](t, r)
			if len(got) != 3 || got[0].Name != "orders" || got[0].PartitionCount != 2 || got[0].ReplicationFactor != 1 ||
				got[0].ID == "" || len(got[0].Partitions) != 2 || got[0].Partitions[1].Partition != 1 ||
				len(got[0].Partitions[1].Replicas) != 1 || len(got[0].Partitions[1].ISR) != 1 {
				t.Fatalf("--json: %+v", got)
			}
			if !strings.Contains(r.Stdout, `"partition_count": 2`) || !strings.Contains(r.Stdout, `"leader_epoch"`) {
				t.Fatalf("--json field names\n%s", r)
			}

			r = ctltest.Run(t, tg, "", "topic", "list", "payments", "nosuch")
			wantFailure(t, r, "strait topic list: nosuch: UNKNOWN_TOPIC_OR_PARTITION")
			wantRows(t, r, "NAME PARTITIONS REPLICAS", []string{"payments", "1", "1"})

			if r := ctltest.Must(t, tg, "", "topic", "list", "-r", "zz.*"); r.Stdout != "" {
				t.Fatalf("no match prints nothing\n%s", r)
			}

			// A committed offset makes Strait create __consumer_offsets; kfake
			// keeps its group state outside any topic, so it has no internal
			// topic to list.
			if tg.Name != "strait" {
				return
			}
			var os kadm.Offsets
			os.AddOffset("orders", 0, 0, -1)
			if err := admin(t, tg).CommitAllOffsets(ctx(t), "g", os); err != nil {
				t.Fatal(err)
			}
			if r := ctltest.Must(t, tg, "", "topic", "list"); strings.Contains(r.Stdout, "__consumer_offsets") {
				t.Fatalf("an internal topic without --internal\n%s", r)
			}
			if r := ctltest.Must(t, tg, "", "topic", "list", "--internal", "-r", "__.*", "--json"); !strings.Contains(r.Stdout, `"name": "__consumer_offsets",`) ||
				!strings.Contains(r.Stdout, `"internal": true`) {
				t.Fatalf("--internal lacks __consumer_offsets\n%s", r)
			}
		})
	}
}
