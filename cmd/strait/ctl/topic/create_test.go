package topic

import (
	"slices"
	"testing"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

// TestCreate: topics are created with the partitions, replicas and
// configs asked for (else the cluster's defaults); one that exists is a
// per-topic failure unless --if-not-exists; --dry-run creates nothing.
func TestCreate(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			r := ctltest.Must(t, tg, "", "topic", "create", "orders", "payments", "-p", "3", "-c", "retention.ms=1000000")
			wantRows(t, r, "TOPIC ID PARTITIONS REPLICAS STATUS",
				[]string{"orders", "*", "3", "1", "OK"}, []string{"payments", "*", "3", "1", "OK"})
			td, err := admin(t, tg).ListTopics(ctx(t), "orders", "payments")
			if err != nil || td.Error() != nil || len(td["orders"].Partitions) != 3 || len(td["payments"].Partitions) != 3 {
				t.Fatalf("after create: %v %v %+v", err, td.Error(), td)
			}
			if id := rows(r.Stdout)[1][1]; id != topicID(td["orders"].ID) {
				t.Fatalf("ID column %q, the cluster says %q", id, topicID(td["orders"].ID))
			}
			rc, err := admin(t, tg).DescribeTopicConfigs(ctx(t), "orders")
			if err != nil {
				t.Fatal(err)
			}
			if v := configValue(rc[0].Configs, "retention.ms"); v != "1000000" {
				t.Fatalf("retention.ms %q after -c retention.ms=1000000", v)
			}

			wantFailure(t, ctltest.Run(t, tg, "", "topic", "create", "orders"), "strait topic create: orders: TOPIC_ALREADY_EXISTS")

			r = ctltest.Must(t, tg, "", "topic", "create", "orders", "fresh", "--if-not-exists", "--json")
			got := decode[[]created](t, r)
			if len(got) != 2 || got[0].Topic != "fresh" || got[0].Status != "OK" || got[0].TopicID == "" || got[0].Partitions < 1 ||
				got[1].Topic != "orders" || got[1].Status != "EXISTS" || got[1].Error != "" {
				t.Fatalf("--if-not-exists --json: %+v", got)
			}

			r = ctltest.Must(t, tg, "", "topic", "create", "dry", "-p", "2", "--dry-run")
			wantRows(t, r, "TOPIC ID PARTITIONS REPLICAS STATUS", []string{"dry", "-", "2", "1", "VALID"})
			if td, err := admin(t, tg).ListTopics(ctx(t)); err != nil || td.Has("dry") {
				t.Fatalf("--dry-run created the topic: %v %v", err, td.Names())
			}

			// A mixed outcome: the row of the topic made, the line of the one
			// refused, exit 1; --json has both.
			r = ctltest.Run(t, tg, "", "topic", "create", "orders", "third", "--json")
			wantFailure(t, r, "orders: TOPIC_ALREADY_EXISTS")
			got = decode[[]created](t, r)
			if len(got) != 2 || got[0].Status != "FAILED" || got[0].Error == "" || got[1].Status != "OK" {
				t.Fatalf("mixed --json: %+v", got)
			}
			if td, err := admin(t, tg).ListTopics(ctx(t)); err != nil || !slices.Contains(td.Names(), "third") {
				t.Fatalf("third not created: %v %v", err, td.Names())
			}
		})
	}
}
