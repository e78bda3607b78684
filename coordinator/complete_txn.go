package coordinator

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/storage"
)

// CompleteTransaction ends producer producerID's transaction on the
// __consumer_offsets partition tp, led by this broker: the transaction
// coordinator's WriteTxnMarkers for the partition lands here
// (replication.TxnMarkerCompleter; Kafka's GroupCoordinator.completeTransaction
// and CoordinatorRuntime.scheduleTransactionCompletion).
//
// The shard appends the COMMIT (commit true) or ABORT marker itself, after
// every record it decided before, so the marker is ordered with the
// transaction's offset commits and the shard's own writes; the log fences
// a marker from an older producer epoch (INVALID_PRODUCER_EPOCH) or an
// older transaction coordinator epoch (TRANSACTION_COORDINATOR_FENCED).
// Once the marker is replicated, the offsets the transaction committed
// for the shard's groups become their committed offsets (commit), unless
// the partition has a committed offset written later in the log, which
// wins, or they are dropped (abort); until then OffsetFetch does not see
// them. It returns nil then, or an error that unwraps to a kerr code:
// NOT_COORDINATOR while this broker does not coordinate the partition,
// COORDINATOR_LOAD_IN_PROGRESS while it loads, the log's error, and
// REQUEST_TIMED_OUT when ctx ends first (the marker may still be written,
// and then applied).
func (c *GroupCoordinator) CompleteTransaction(ctx context.Context, tp storage.TopicPartition, producerID int64, producerEpoch int16, coordinatorEpoch int32, commit bool) error {
	if tp.Topic != OffsetsTopic {
		return fmt.Errorf("group coordinator: completing a transaction on %s, not a partition of %s: %w", tp, OffsetsTopic, kerr.InvalidRequest)
	}
	s := c.shard(tp.Partition)
	if s == nil {
		return kerr.NotCoordinator
	}
	s.mu.Lock()
	if code := s.stateErrorCode(); code != 0 {
		s.mu.Unlock()
		return kerr.ErrorForCode(code)
	}
	done := make(chan error, 1)
	s.appendEndTxnMarker(runtime.Producer{ID: producerID, Epoch: producerEpoch}, commit, coordinatorEpoch, done)
	s.mu.Unlock()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("group coordinator: writing the transaction marker of producer %d to %s: %w: %w", producerID, tp, kerr.RequestTimedOut, ctx.Err())
	}
}

// appendEndTxnMarker queues the marker and, once it is written, ends the
// producer's transaction in memory; done receives the append's outcome.
// The marker's effect is not eager: while it is written the transaction's
// offsets stay pending. Called with mu held.
func (s *shard) appendEndTxnMarker(p runtime.Producer, commit bool, coordinatorEpoch int32, done chan<- error) {
	at := s.takeRecordOffset()
	s.pending.marking(p.ID, at)
	s.txnGuards.markerDecided(p.ID, p.Epoch)
	s.writer.AppendEndTxnMarker(p, commit, coordinatorEpoch, false, func(err error) {
		switch {
		case err == nil:
			s.endTxn(p.ID, commit, at)
		case s.state == shardActive && !refusedBeforeAppend(err):
			// The marker may be in the log all the same (an append that
			// timed out, or lost its ISR after it was written): reload,
			// so memory follows the log either way.
			s.writeDiverged(err)
		}
		done <- err
	})
}

// refusedBeforeAppend reports whether the log refused a marker without
// appending it: its producer or coordinator epoch is fenced, or the ISR
// is too small to take it.
func refusedBeforeAppend(err error) bool {
	for _, e := range []*kerr.Error{kerr.InvalidProducerEpoch, kerr.ProducerFenced, kerr.TransactionCoordinatorFenced, kerr.NotEnoughReplicas} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// endTxn ends producer pid's transaction at a marker whose recordOffset
// is at: on commit the offsets it committed before the marker become the
// committed offsets, but for partitions whose committed offset was
// written after them in the log, which stays; on abort they are dropped
// (OffsetMetadataManager.replayEndTransactionMarker). Called with mu
// held, or while loading.
func (s *shard) endTxn(pid int64, commit bool, at int64) {
	ended := s.pending.end(pid, at)
	if !commit {
		return
	}
	for _, o := range ended {
		if cur, ok := s.offsets.get(o.group, o.topic, o.partition); ok && cur.recordOffset > o.om.recordOffset {
			s.log.Info("keeping a committed offset written after the transaction's",
				"group", o.group, "topic", o.topic, "partition", o.partition, "producer_id", pid)
			continue
		}
		s.offsets.put(o.group, o.topic, o.partition, o.om)
	}
}
