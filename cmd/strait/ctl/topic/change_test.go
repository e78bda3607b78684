package topic

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

// TestDelete: the named topics go, a missing one is a failure line;
// --regex deletes the topics whose whole name matches, and none matching
// is an error.
func TestDelete(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			ctltest.Must(t, tg, "", "topic", "create", "x1", "x2", "x22", "keep", "-p", "1")

			r := ctltest.Run(t, tg, "", "topic", "delete", "x1", "nosuch")
			wantFailure(t, r, "strait topic delete: nosuch: UNKNOWN_TOPIC_OR_PARTITION")
			wantRows(t, r, "TOPIC STATUS", []string{"x1", "OK"})

			r = ctltest.Must(t, tg, "", "topic", "delete", "--regex", "x2.", "--json")
			if got := decode[[]topicStatus](t, r); len(got) != 1 || got[0] != (topicStatus{Topic: "x22", Status: "OK"}) {
				t.Fatalf("--regex --json: %+v", got)
			}
			td, err := admin(t, tg).ListTopics(ctx(t))
			if names := td.Names(); err != nil || !slices.Equal(sorted(names), []string{"keep", "x2"}) {
				t.Fatalf("left after deleting: %v %v", names, err)
			}

			wantFailure(t, ctltest.Run(t, tg, "", "topic", "delete", "-r", "zz.*"), "strait topic delete: no topic matches zz.*")
			if r := ctltest.Run(t, tg, "", "topic", "delete", "-r", "("); r.Code != 2 || !strings.Contains(r.Stderr, "--regex: error parsing regexp") {
				t.Fatalf("bad regex: %s", r)
			}
		})
	}
}

// TestAlterConfig: --set and --delete change the configs
// (IncrementalAlterConfigs), --dry-run changes nothing, a bad value and a
// missing topic are failure lines, nothing to change is a usage error.
func TestAlterConfig(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			ctltest.Must(t, tg, "", "topic", "create", "orders", "payments", "-c", "segment.ms=7200000")

			r := ctltest.Must(t, tg, "", "topic", "alter-config", "orders", "payments", "--set", "retention.ms=5000", "-d", "segment.ms")
			wantRows(t, r, "TOPIC STATUS", []string{"orders", "OK"}, []string{"payments", "OK"})
			for _, topic := range []string{"orders", "payments"} {
				rc, err := admin(t, tg).DescribeTopicConfigs(ctx(t), topic)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range rc[0].Configs {
					switch {
					case c.Key == "retention.ms" && (c.MaybeValue() != "5000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig):
						t.Fatalf("%s retention.ms after --set: %+v", topic, c)
					case c.Key == "segment.ms" && c.Source == kmsg.ConfigSourceDynamicTopicConfig:
						t.Fatalf("%s segment.ms after --delete: %+v", topic, c)
					}
				}
			}

			r = ctltest.Must(t, tg, "", "topic", "alter-config", "orders", "--set", "retention.ms=9", "--dry-run", "--json")
			if got := decode[[]topicStatus](t, r); len(got) != 1 || got[0] != (topicStatus{Topic: "orders", Status: "VALID"}) {
				t.Fatalf("--dry-run --json: %+v", got)
			}
			if rc, err := admin(t, tg).DescribeTopicConfigs(ctx(t), "orders"); err != nil || configValue(rc[0].Configs, "retention.ms") != "5000" {
				t.Fatalf("--dry-run changed retention.ms: %v %+v", err, rc)
			}

			r = ctltest.Run(t, tg, "", "topic", "alter-config", "orders", "nosuch", "--set", "retention.ms=6000")
			wantFailure(t, r, "strait topic alter-config: nosuch: UNKNOWN_TOPIC_OR_PARTITION")
			wantRows(t, r, "TOPIC STATUS", []string{"orders", "OK"})

			// kfake validates neither config names nor values: the broker's
			// refusal is checked against Strait only.
			if tg.Name == "strait" {
				for _, kv := range []string{"retention.ms=soon", "no.such.config=1"} {
					wantFailure(t, ctltest.Run(t, tg, "", "topic", "alter-config", "orders", "--set", kv),
						"strait topic alter-config: orders: INVALID_CONFIG")
				}
			}
			for _, bad := range [][]string{{}, {"--set", "a=1", "--delete", "a"}, {"--set", "noequals"}} {
				r := ctltest.Run(t, tg, "", append([]string{"topic", "alter-config", "orders"}, bad...)...)
				if r.Code != 2 || !strings.HasPrefix(r.Stderr, "strait topic alter-config: ") {
					t.Fatalf("%v: want a usage error\n%s", bad, r)
				}
			}
		})
	}
}

// TestAddPartitions: --num N adds N partitions (CreatePartitions),
// --dry-run adds none, a missing topic is a failure line, internal topics
// keyed by partition need --force.
func TestAddPartitions(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			ctltest.Must(t, tg, "", "topic", "create", "orders", "-p", "1")
			partitions := func() int {
				td, err := admin(t, tg).ListTopics(ctx(t), "orders")
				if err != nil {
					t.Fatal(err)
				}
				return len(td["orders"].Partitions)
			}

			r := ctltest.Must(t, tg, "", "topic", "add-partitions", "orders", "--num", "2")
			wantRows(t, r, "TOPIC STATUS", []string{"orders", "OK"})
			if n := partitions(); n != 3 {
				t.Fatalf("%d partitions after adding 2 to 1", n)
			}

			r = ctltest.Must(t, tg, "", "topic", "add-partitions", "orders", "-n", "5", "--dry-run", "--json")
			if got := decode[[]topicStatus](t, r); len(got) != 1 || got[0] != (topicStatus{Topic: "orders", Status: "VALID"}) {
				t.Fatalf("--dry-run --json: %+v", got)
			}
			if n := partitions(); n != 3 {
				t.Fatalf("%d partitions after a dry run", n)
			}

			r = ctltest.Run(t, tg, "", "topic", "add-partitions", "nosuch", "orders", "-n", "1")
			wantFailure(t, r, "strait topic add-partitions: nosuch: UNKNOWN_TOPIC_OR_PARTITION")
			wantRows(t, r, "TOPIC STATUS", []string{"orders", "OK"})

			for _, bad := range [][]string{{"orders", "-n", "0"}, {"orders"}, {"__consumer_offsets", "-n", "1"}} {
				r := ctltest.Run(t, tg, "", append([]string{"topic", "add-partitions"}, bad...)...)
				if r.Code != 2 || !strings.HasPrefix(r.Stderr, "strait topic add-partitions: ") {
					t.Fatalf("%v: want a usage error\n%s", bad, r)
				}
			}
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
