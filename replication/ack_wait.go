package replication

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
)

// ackWait is one partition an acks=-1 append waits for (Kafka's
// ProducePartitionStatus): until the high watermark reaches
// requiredOffset, the end of what was appended.
type ackWait struct {
	tp             storage.TopicPartition
	p              *Partition
	requiredOffset int64
	// done is set when the wait ended before the timeout; err is then why
	// it failed, nil when the append is replicated.
	done bool
	err  error
}

// awaitAcks is the delayed produce of acks=-1 appends (Kafka's
// DelayedProduce): each wait ends when the high watermark passes its
// append, or with the error that ended it (leadership lost,
// NOT_ENOUGH_REPLICAS_AFTER_APPEND). Waits still not done when timeout or
// ctx ends timed out; their appends may still become committed.
func (r *ReplicaManager) awaitAcks(ctx context.Context, waits []*ackWait, timeout time.Duration) {
	parts := make([]*Partition, len(waits))
	for i, w := range waits {
		parts[i] = w.p
	}
	r.await(ctx, watchHighWatermark, parts, timeout, func() bool { return r.tryCompleteAcks(waits) })
}

// tryCompleteAcks ends the waits whose append the high watermark has
// passed, or that failed, and reports whether all have ended (Kafka's
// DelayedProduce.tryComplete).
func (r *ReplicaManager) tryCompleteAcks(waits []*ackWait) bool {
	all := true
	for _, w := range waits {
		if w.done {
			continue
		}
		enough, err := w.p.checkEnoughReplicasReachOffset(w.requiredOffset)
		if cur, ok := r.Partition(w.tp); !ok || cur != w.p {
			enough, err = false, kerr.NotLeaderForPartition
		}
		if err != nil || enough {
			w.done, w.err = true, err
			continue
		}
		all = false
	}
	return all
}

// errorCode is the wait's outcome for a response: 0 when replicated,
// REQUEST_TIMED_OUT when the wait ran out, else the error that ended it.
func (w *ackWait) errorCode() int16 {
	if !w.done {
		return kerr.RequestTimedOut.Code
	}
	return errorCode(w.err)
}
