package topic

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

// TestDescribe: the summary and configs (with their source) by default,
// the partitions with leader, epoch, replicas, ISR, log start and high
// watermark with -p; --json has every section; a missing topic is one
// failure line while the others are still described.
func TestDescribe(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			ctltest.Must(t, tg, "", "topic", "create", "orders", "-p", "2", "-c", "retention.ms=12345")
			produce(t, tg, "orders", 1, 3)

			r := ctltest.Must(t, tg, "", "topic", "describe", "orders")
			out := r.Stdout
			if !strings.HasPrefix(out, "SUMMARY\n=======\n") || !strings.Contains(out, "\nCONFIGS\n=======\n") || strings.Contains(out, "PARTITIONS\n==") {
				t.Fatalf("default sections\n%s", r)
			}
			summary, configs, _ := strings.Cut(out, "CONFIGS")
			for _, want := range []string{"NAME        orders", "PARTITIONS  2", "REPLICAS    1"} {
				if !strings.Contains(summary, want) {
					t.Fatalf("summary lacks %q\n%s", want, r)
				}
			}
			if !strings.Contains(configs, "KEY") || !containsRow(configs, "retention.ms 12345 DYNAMIC_TOPIC_CONFIG") {
				t.Fatalf("configs lack retention.ms with its source\n%s", r)
			}

			r = ctltest.Must(t, tg, "", "topic", "describe", "orders", "-p")
			wantRows(t, r, "PARTITION LEADER EPOCH REPLICAS ISR LOG-START-OFFSET HIGH-WATERMARK",
				[]string{"0", "*", "*", "*", "*", "0", "3"}, []string{"1", "*", "*", "*", "*", "0", "0"})

			r = ctltest.Must(t, tg, "", "topic", "describe", "orders", "--json")
			got := decode[[]described](t, r)
			if len(got) != 1 || got[0].Name != "orders" || got[0].PartitionCount != 2 || len(got[0].Partitions) != 2 {
				t.Fatalf("--json: %+v", got)
			}
			p0 := got[0].Partitions[0]
			if p0.HighWatermark != 3 || p0.LogStartOffset != 0 || p0.LastStableOffset != 3 || p0.Leader < 0 || len(p0.ISR) != 1 || p0.Error != "" {
				t.Fatalf("--json partition 0: %+v", p0)
			}
			found := false
			for _, c := range got[0].Configs {
				if c.Name == "retention.ms" {
					found = c.Value != nil && *c.Value == "12345" && c.Source == "DYNAMIC_TOPIC_CONFIG"
				}
			}
			if !found {
				t.Fatalf("--json configs lack retention.ms=12345 DYNAMIC_TOPIC_CONFIG: %+v", got[0].Configs)
			}

			// An open transaction holds the last stable offset below the high
			// watermark: the column shows then.
			txn := client(t, tg, kgo.TransactionalID("open-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			if err := txn.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := txn.ProduceSync(ctx(t), &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("t")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			r = ctltest.Must(t, tg, "", "topic", "describe", "orders", "-p")
			wantRows(t, r, "PARTITION LEADER EPOCH REPLICAS ISR LOG-START-OFFSET LAST-STABLE-OFFSET HIGH-WATERMARK",
				[]string{"0", "*", "*", "*", "*", "0", "-", "3"}, []string{"1", "*", "*", "*", "*", "0", "0", "1"})
			if err := txn.EndTransaction(ctx(t), kgo.TryAbort); err != nil {
				t.Fatal(err)
			}

			r = ctltest.Run(t, tg, "", "topic", "describe", "nosuch", "orders", "-s")
			wantFailure(t, r, "strait topic describe: nosuch: UNKNOWN_TOPIC_OR_PARTITION")
			if !strings.Contains(r.Stdout, "NAME        orders") {
				t.Fatalf("orders not described beside the missing topic\n%s", r)
			}
		})
	}
}

// containsRow reports whether out has a line whose cells are row's.
func containsRow(out, row string) bool {
	for _, cells := range rows(out) {
		if strings.Join(cells, " ") == row {
			return true
		}
	}
	return false
}
