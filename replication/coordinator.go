package replication

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// noTimeout waits for as long as the context allows.
const noTimeout = time.Duration(1<<63 - 1)

// AppendCoordinator appends a batch the broker writes itself (group
// metadata, offset commits, later transaction markers) to a partition this
// node leads, and waits until the high watermark passes it: acks=all with
// OriginCoordinator, as Kafka's coordinators append through
// ReplicaManager.appendRecords. The wait ends with ctx; then the error
// wraps kerr.RequestTimedOut and the batch may still become committed.
// Errors unwrap to kerr codes: NOT_LEADER_OR_FOLLOWER (also for a log
// closed under the append), NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
// KAFKA_STORAGE_ERROR, or the validation error of a *record.Error.
func (r *ReplicaManager) AppendCoordinator(ctx context.Context, tp storage.TopicPartition, batch []byte) (storage.AppendInfo, error) {
	p, ok := r.Partition(tp)
	if !ok {
		return storage.AppendInfo{}, fmt.Errorf("replication: append to %s: %w", tp, kerr.NotLeaderForPartition)
	}
	info, err := p.appendRecordsToLeader(batch, record.OriginCoordinator, -1)
	if err != nil {
		return info, fmt.Errorf("replication: append to %s: %w", tp, closedAsNotLeader(err))
	}
	var ackErr error
	done := r.await(ctx, watchHighWatermark, []*Partition{p}, noTimeout, func() bool {
		enough, err := p.checkEnoughReplicasReachOffset(info.LastOffset + 1)
		ackErr = err
		return enough || err != nil
	})
	if !done {
		return info, fmt.Errorf("replication: append to %s: %w: %w", tp, kerr.RequestTimedOut, context.Cause(ctx))
	}
	if ackErr != nil {
		return info, fmt.Errorf("replication: append to %s: %w", tp, ackErr)
	}
	return info, nil
}

// DeleteRecordsCoordinator moves the log start offset of a coordinator's
// internal-topic partition this node leads up to offset, as Kafka's
// CoordinatorPartitionWriter.deleteRecords asks ReplicaManager.deleteRecords
// with allowInternalTopicDeletion: the share coordinator prunes
// __share_group_state this way, which clients may not (DeleteRecords
// answers INVALID_TOPIC_EXCEPTION for internal topics). The followers
// follow the leader's log start offset through their fetches; it does
// not wait for them, since what lies below offset is redundant to the
// coordinator whichever replica leads next. Errors unwrap to kerr codes:
// NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE (past the high watermark),
// POLICY_VIOLATION (a topic without the delete cleanup policy).
func (r *ReplicaManager) DeleteRecordsCoordinator(tp storage.TopicPartition, offset int64) error {
	p, ok := r.Partition(tp)
	if !ok {
		return fmt.Errorf("replication: delete records of %s: %w", tp, kerr.NotLeaderForPartition)
	}
	if _, err := p.deleteRecordsOnLeader(offset); err != nil {
		return fmt.Errorf("replication: delete records of %s below %d: %w", tp, offset, err)
	}
	return nil
}

// ReadCommitted reads a local partition from offset up to its high
// watermark, at least one whole batch when there is one. Reading outside
// the log is *storage.OffsetOutOfRangeError.
func (r *ReplicaManager) ReadCommitted(tp storage.TopicPartition, from int64, maxBytes int32) (storage.FetchDataInfo, error) {
	return r.readLocal(tp, from, maxBytes, storage.FetchHighWatermark)
}

// ReadToLogEnd reads a local partition from offset up to its log end
// offset, at least one whole batch when there is one: the coordinators
// load their state this way (Kafka's CoordinatorLoaderImpl reads with
// FetchIsolation.LOG_END), since a newly elected leader's high watermark
// may still be below records its predecessor committed.
func (r *ReplicaManager) ReadToLogEnd(tp storage.TopicPartition, from int64, maxBytes int32) (storage.FetchDataInfo, error) {
	return r.readLocal(tp, from, maxBytes, storage.FetchLogEnd)
}

func (r *ReplicaManager) readLocal(tp storage.TopicPartition, from int64, maxBytes int32, isolation storage.FetchIsolation) (storage.FetchDataInfo, error) {
	p, ok := r.Partition(tp)
	if !ok {
		return storage.FetchDataInfo{}, fmt.Errorf("replication: read %s: %w", tp, kerr.NotLeaderForPartition)
	}
	fd, err := p.Log().Read(from, maxBytes, isolation, true)
	return fd, closedAsNotLeader(err)
}

// closedAsNotLeader is err, made to unwrap to NOT_LEADER_OR_FOLLOWER when
// the log was closed under the call (storage.ErrLogClosed: the broker is
// stopping or crashing, or the replica was moved away), as produce answers
// it (errorCode). The coordinators map NOT_LEADER_OR_FOLLOWER to
// NOT_COORDINATOR, which sends their clients to the partition's new
// leader; the bare storage error unwraps to no Kafka code, and a
// transaction coordinator answered EndTxn with UNKNOWN_SERVER_ERROR, which
// franz-go takes for a commit of unknown outcome.
func closedAsNotLeader(err error) error {
	if errors.Is(err, storage.ErrLogClosed) {
		return fmt.Errorf("%w: %w", kerr.NotLeaderForPartition, err)
	}
	return err
}
