package manager

import (
	"context"
	"fmt"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// ExistingRecordsError refuses a start whose LME truncation would delete
// records the destination holds and the source does not share: the source
// has no last mirrored epoch for the partition, so KIP-1279's first-time
// rule truncates the whole log. Such records were written on this cluster
// (a topic that existed before it was mirrored onto, a failed-over topic
// mirrored again in the same direction) or are its own (a mirror whose
// source is this cluster).
type ExistingRecordsError struct {
	Mirror string
	TP     storage.TopicPartition
	// LogStart and LogEnd bound the records that would go.
	LogStart, LogEnd int64
}

func (e *ExistingRecordsError) Error() string {
	return fmt.Sprintf("partition %s holds %d records (offsets %d to %d) that the source cluster of mirror %s does not share "+
		"(it has no last mirrored epoch for the partition): starting to mirror it would delete them; "+
		"stop the topic to keep them, or delete them with `strait mirror start %s --truncate-existing` (or the mirror config %s=true)",
		e.TP, e.LogEnd-e.LogStart, e.LogStart, e.LogEnd-1, e.Mirror, e.Mirror, raftmeta.MirrorTruncateExistingConfig)
}

// checkExistingRecords performs CheckExistingRecords: the LME query a
// start's PREPARING uses, refused with an *ExistingRecordsError when it
// would delete records the source does not share and the mirror does not
// allow it. Errors are returned unmarked (never partition.ErrFailed): the
// machine retries the check in place, the partition stays where it was.
func (m *Manager) checkExistingRecords(ctx context.Context, tp storage.TopicPartition, e partition.Effect) partition.Result {
	c, err := m.conn(e.Mirror)
	if err != nil {
		return partition.Result{Err: err}
	}
	lp, err := m.cfg.Destination.MirrorLeader(tp, e.Ref.LeaderEpoch)
	if err != nil {
		return partition.Result{Err: err}
	}
	lme, start, err := c.cluster.LastMirroredEpoch(ctx, tp.Topic, tp.Partition)
	if err != nil {
		return partition.Result{Err: err}
	}
	logStart, logEnd := lp.LogStartOffset(), lp.LogEndOffset()
	if lme < 0 && logEnd > logStart && !raftmeta.MirrorTruncatesExisting(c.configs) {
		return partition.Result{Err: &ExistingRecordsError{Mirror: e.Mirror, TP: tp, LogStart: logStart, LogEnd: logEnd}}
	}
	if lme < 0 && logEnd > logStart {
		m.logger.Warn("starting to mirror a partition whose records the source does not share: they are deleted",
			"mirror", e.Mirror, "partition", tp.String(), "records", logEnd-logStart, "config", raftmeta.MirrorTruncateExistingConfig)
	}
	return partition.Result{Epoch: lme, LogStartOffset: start}
}
