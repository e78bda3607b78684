package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestCompactionOnCleanerSchedule: with the broker's default settings
// (log.cleaner.backoff.ms 15 s, log.retention.check.interval.ms 300 s) a
// compacted topic with duplicate keys reads cleaned within 30 s of the
// write that closed its segment, as Kafka's cleaner threads do; cleaning
// ran only with the retention check before (first cleaned 111-300 s
// after the write). The topic closes segments with segment.ms, as it
// would on Kafka (whose segment.bytes may not go below 1 MiB in 4.x): the
// active segment is never cleaned, and a segment rolls on the first
// append after segment.ms.
func TestCompactionOnCleanerSchedule(t *testing.T) {
	const (
		topic  = "cleaner-schedule"
		keys   = 10
		rounds = 20
	)
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 90*time.Second)
	createTopic(t, adm, topic, 1, "cleanup.policy", "compact", "segment.ms", "1000")
	prod := b.Client(t, kgo.ProducerLinger(0))
	produce := func(key, value string) {
		t.Helper()
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for r := range rounds {
		for k := range keys {
			produce(fmt.Sprintf("k%d", k), fmt.Sprintf("v%d", r))
		}
	}
	time.Sleep(1500 * time.Millisecond) // past segment.ms: the next append rolls
	produce("closing", "x")
	written := time.Now()

	// Cleaned: one record per key (its last value) below the active
	// segment, which holds only the closing write.
	const bound = 30 * time.Second
	for {
		recs := consumeAll(ctx, t, b, topic)
		latest := map[string]string{}
		for _, r := range recs {
			latest[string(r.Key)] = string(r.Value)
		}
		if len(recs) == keys+1 {
			for k := range keys {
				if v := latest[fmt.Sprintf("k%d", k)]; v != fmt.Sprintf("v%d", rounds-1) {
					t.Fatalf("k%d reads %q after cleaning, want its last value v%d", k, v, rounds-1)
				}
			}
			t.Logf("cleaned %v after the write that closed the segment (%d records read, %d written)",
				time.Since(written).Round(time.Millisecond), len(recs), keys*rounds+1)
			return
		}
		if time.Since(written) > bound {
			t.Fatalf("%d records still read %v after the write (%d written): not cleaned within %v",
				len(recs), time.Since(written).Round(time.Millisecond), keys*rounds+1, bound)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
