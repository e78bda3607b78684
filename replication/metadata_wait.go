package replication

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// maxApplyingWait bounds how long a request waits for a metadata delta
// being applied (a stuck disk must not hold requests forever).
const maxApplyingWait = 5 * time.Second

// Why a request for a topic this broker does not know waits for a delta
// being applied.
//
// Brokers apply a committed metadata record each on their own, and a new
// topic's local logs take a few fsyncs per partition to create: 7-37 ms
// for three partitions on our test machine, longer for more. A client
// that learned of a new topic from a broker that was done already, or a
// follower that was, then reached a leader still creating the logs, and
// was told UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID): franz-go waits
// 250 ms before producing again, and a follower backs the partition off
// for replica.fetch.backoff.ms (1 s). Kafka has the same race. A broker
// that is applying a delta when such a request arrives now finishes it
// before it answers, since the delta is usually the very record the
// client already knows of; a broker that is not applying anything answers
// at once, as before. A broker that has received the record but not yet
// learned it committed waits for it as well (raftmeta's CatchUp).

// awaitMetadata waits for the metadata records this broker has received
// but not applied (CatchUpMetadata), then for a delta being applied, and
// reports whether there was either.
func (r *ReplicaManager) awaitMetadata(ctx context.Context) bool {
	received := r.cfg.CatchUpMetadata != nil && r.cfg.CatchUpMetadata(ctx)
	return r.awaitApplying(ctx) || received
}

// beginApplying marks ApplyDelta under way until end is called.
func (r *ReplicaManager) beginApplying() (end func()) {
	ch := make(chan struct{})
	r.applying.Store(&ch)
	return func() {
		r.applying.Store(nil)
		close(ch)
	}
}

// awaitApplying waits for the delta being applied, if any, and reports
// whether there was one.
func (r *ReplicaManager) awaitApplying(ctx context.Context) bool {
	ch := r.applying.Load()
	if ch == nil {
		return false
	}
	t := time.NewTimer(maxApplyingWait)
	defer t.Stop()
	select {
	case <-*ch:
	case <-ctx.Done():
	case <-t.C:
	case <-r.done:
	}
	return true
}

// knowsFetchPartitions reports whether img has every partition a fetch
// names (a topic id img lacks left parts' topic empty).
func knowsFetchPartitions(img *raftmeta.Image, parts []fetchPartition) bool {
	for i := range parts {
		t := img.Topics[parts[i].topic]
		if t == nil || int(parts[i].partition) >= len(t.Partitions) {
			return false
		}
	}
	return true
}

// knowsProducePartitions reports whether img has every partition a
// produce names (by topic id from v13, else by name).
func knowsProducePartitions(img *raftmeta.Image, req *kmsg.ProduceRequest) bool {
	for i := range req.Topics {
		rt := &req.Topics[i]
		t := img.Topics[rt.Topic]
		if req.Version >= 13 {
			t = img.TopicsByID[raftmeta.Uuid(rt.TopicID)]
		}
		if t == nil {
			return false
		}
		for j := range rt.Partitions {
			if int(rt.Partitions[j].Partition) >= len(t.Partitions) {
				return false
			}
		}
	}
	return true
}
