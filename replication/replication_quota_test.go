package replication

import (
	"maps"
	"testing"
	"time"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

func TestThrottledPartitions(t *testing.T) {
	for _, c := range []struct {
		value string
		all   bool
		want  []int32
	}{
		{"", false, nil},
		{"*", true, nil},
		{" * ", true, nil},
		{"0:1,1:2, 2:1 ,3:3", false, []int32{0, 2}},
		{"0:2", false, nil},
		{"x:1,0:1", false, []int32{0}}, // unparsable entries are skipped
	} {
		parts, all := throttledPartitions(c.value, 1)
		if all != c.all || len(parts) != len(c.want) {
			t.Fatalf("%q: parts %v all %v, want %v all %v", c.value, parts, all, c.want, c.all)
		}
		for _, p := range c.want {
			if !parts[p] {
				t.Fatalf("%q: partition %d not throttled: %v", c.value, p, parts)
			}
		}
	}
}

// TestLeaderThrottle: a follower outside the ISR fetching a replica that
// leader.replication.throttled.replicas names gets no data once the leader
// quota is spent (Kafka's ReplicaManager.readFromLog with
// shouldLeaderThrottle), while an unthrottled partition in the same fetch
// still gets its data; once the follower is in the ISR it is not held
// back, and when the quota's windows pass it gets data again.
func TestLeaderThrottle(t *testing.T) {
	const rate = 1000 // bytes/s
	h := newHarness(t, func(c *Config) {
		c.ReplicationThrottledRates = func(img *raftmeta.Image) (int64, int64) {
			if img.TopicConfig("t")["test.throttle.off"] == "true" {
				return DefaultReplicationThrottledRate, DefaultReplicationThrottledRate
			}
			return rate, DefaultReplicationThrottledRate
		}
	})
	h.createTopic("t", topicSpec{partitions: 2, replicas: []int32{localNode, 2}, isr: []int32{localNode},
		configs: map[string]string{leaderThrottledReplicasConfig: "0:1,1:3"}})
	for p := int32(0); p < 2; p++ {
		if sp := h.produce(1, "t", p, h.batchSpec(record.BatchSpec{}, "v", 10, 1000)); sp.ErrorCode != 0 {
			t.Fatalf("produce to %d: error %d", p, sp.ErrorCode)
		}
	}
	q := h.rm.Quotas().Leader
	if !q.IsThrottled(storage.TopicPartition{Topic: "t", Partition: 0}) || q.IsThrottled(storage.TopicPartition{Topic: "t", Partition: 1}) {
		t.Fatal("the topic config did not mark exactly t-0 (0:1 on broker 1) throttled")
	}
	follow := func() (p0, p1 int) {
		t.Helper()
		req := fetchReq(12, fp("t", 0, 0), fp("t", 1, 0))
		req.ReplicaID = 2
		res := decodeFetch(t, h.fetch(req))
		for _, r := range res {
			if r.ErrorCode != 0 {
				t.Fatalf("follower fetch of t-%d: error %d", r.Partition, r.ErrorCode)
			}
		}
		return len(res[0].offsets), len(res[1].offsets)
	}
	// Under the quota: both partitions. Their ~10 KB spend the quota
	// (10 KB over the one-second minimum window is above 1000 B/s).
	if p0, p1 := follow(); p0 != 10 || p1 != 10 {
		t.Fatalf("under the quota: %d and %d records, want 10 and 10", p0, p1)
	}
	if !q.IsQuotaExceeded() {
		t.Fatalf("leader rate %.0f B/s after the first fetch, want above %d", q.Rate(), rate)
	}
	if p0, p1 := follow(); p0 != 0 || p1 != 10 {
		t.Fatalf("quota exceeded: %d and %d records, want 0 from the throttled t-0 and 10 from t-1", p0, p1)
	}
	// In the ISR the follower is not throttled.
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.ISR = []int32{localNode, 2} })
	if p0, _ := follow(); p0 != 10 {
		t.Fatalf("in-sync follower: %d records from t-0, want 10", p0)
	}
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.ISR = []int32{localNode} })
	if p0, _ := follow(); p0 != 0 {
		t.Fatalf("out of sync again, quota exceeded: %d records from t-0, want 0", p0)
	}
	// The windows pass: the quota has room again.
	h.clock.Advance(12 * time.Second)
	if p0, _ := follow(); p0 != 10 {
		t.Fatalf("after the quota windows passed: %d records from t-0, want 10", p0)
	}
	// Removing the rate (a broker config change) lifts the throttle.
	cfg := maps.Clone(h.img.TopicConfig("t"))
	cfg["test.throttle.off"] = "true"
	h.setTopicConfig("t", cfg)
	if p0, _ := follow(); p0 != 10 {
		t.Fatalf("without a rate: %d records from t-0, want 10", p0)
	}
}
