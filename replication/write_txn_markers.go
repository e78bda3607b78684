package replication

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// WriteTxnMarkers: v1 (the wire layer gates versions)
//
// Behavior (Kafka's KafkaApis.handleWriteTxnMarkersRequest): the
// transaction coordinator asks each partition leader to end a producer's
// transaction with a COMMIT or ABORT control batch (KIP-98).
//   - Each marker becomes one record.EndTxnMarkerBatch per partition,
//     appended as OriginCoordinator with acks=-1 (internal topics
//     allowed), then the answer waits until the high watermark passes it,
//     at most request.timeout.ms (Config.RequestTimeoutMs): only then is
//     the transaction decided for read_committed readers (the last stable
//     offset moves with the high watermark).
//   - Per-partition errors: no local replica UNKNOWN_TOPIC_OR_PARTITION
//     (Kafka checks the local log first); not the leader
//     NOT_LEADER_OR_FOLLOWER (also when leadership is lost during the
//     wait); ISR below min.insync.replicas NOT_ENOUGH_REPLICAS before the
//     append, NOT_ENOUGH_REPLICAS_AFTER_APPEND when the wait ends with it
//     below (the acks=all checks of produce); REQUEST_TIMED_OUT; a marker from an older
//     coordinator epoch than the producer's last TRANSACTION_COORDINATOR_FENCED
//     and from an older producer epoch INVALID_PRODUCER_EPOCH (storage's
//     checks; nothing is appended); IO failures KAFKA_STORAGE_ERROR. The
//     coordinator retries the retriable ones.
//   - A marker for a producer with no open transaction on the partition is
//     appended and completes nothing, as in Kafka.
//   - Results are keyed by producer id, as Kafka's response is built from
//     a map: markers repeating a producer id share one result, and a
//     partition named twice in one marker is written once.
//   - __consumer_offsets partitions go to the TxnMarkerCompleter when one
//     is set (Kafka's new group coordinator: groupCoordinator.completeTransaction
//     writes the marker itself, in order with its own writes, and applies
//     or discards the transaction's pending offsets). Its
//     COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS and
//     NOT_COORDINATOR answer NOT_LEADER_OR_FOLLOWER, which the transaction
//     coordinator retries. Without a completer (tests) the marker is
//     appended like any other.
//   - No authorization: Kafka requires CLUSTER_ACTION (an inter-broker
//     API); Strait enforces no ACLs yet.
//
// Version notes: v0 was removed in Kafka 4.0 (KIP-896); v1 is flexible. v2
// (Kafka 4.2, KIP-1228) adds TransactionVersion with a stricter epoch rule
// for TV2 markers; it is not implemented, so not advertised.

// TxnMarkerCompleter ends a transaction on a __consumer_offsets partition:
// the group coordinator writes the marker through its own writer (so it is
// ordered with the shard's other records) and applies or discards the
// producer's pending transactional offset commits (Kafka's
// GroupCoordinator.completeTransaction). It returns once the marker is
// replicated, or with an error that unwraps to a kerr code; ctx bounds it.
type TxnMarkerCompleter interface {
	CompleteTransaction(ctx context.Context, tp storage.TopicPartition, producerID int64, producerEpoch int16, coordinatorEpoch int32, commit bool) error
}

// txnCompleterBox holds a completer in an atomic pointer.
type txnCompleterBox struct{ c TxnMarkerCompleter }

// SetTxnMarkerCompleter routes the markers of __consumer_offsets
// partitions to c (the group coordinator, built after the replica
// manager); nil appends them like any other partition's.
func (r *ReplicaManager) SetTxnMarkerCompleter(c TxnMarkerCompleter) {
	if c == nil {
		r.txnCompleter.Store(nil)
		return
	}
	r.txnCompleter.Store(&txnCompleterBox{c})
}

func (r *ReplicaManager) txnMarkerCompleter() TxnMarkerCompleter {
	if b := r.txnCompleter.Load(); b != nil {
		return b.c
	}
	return nil
}

// markerResult is one partition's answer, filled in place.
type markerResult = *kmsg.WriteTxnMarkersResponseMarkerTopicPartition

// markerWait is a marker appended here that waits for the ISR.
type markerWait struct {
	ackWait
	res markerResult
}

// WriteTxnMarkers writes the request's transaction markers and answers
// once each is replicated or failed.
func (r *ReplicaManager) WriteTxnMarkers(ctx context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	timeout := time.Duration(r.cfg.RequestTimeoutMs) * time.Millisecond
	completer := r.txnMarkerCompleter()
	results := newMarkerResults()
	var waits []*markerWait
	var delegated sync.WaitGroup
	anyDelegated := false
	for i := range req.Markers {
		m := &req.Markers[i]
		seen := map[storage.TopicPartition]bool{}
		for _, t := range m.Topics {
			for _, partition := range t.Partitions {
				tp := storage.TopicPartition{Topic: t.Topic, Partition: partition}
				if seen[tp] {
					continue
				}
				seen[tp] = true
				res := results.add(m.ProducerID, tp)
				if completer != nil && tp.Topic == raftmeta.ConsumerOffsetsTopic {
					anyDelegated = true
					delegated.Add(1)
					go func() {
						defer delegated.Done()
						res.ErrorCode = r.completeDelegated(ctx, completer, tp, m, timeout)
					}()
					continue
				}
				if w := r.appendTxnMarker(tp, m, res); w != nil {
					waits = append(waits, w)
				}
			}
		}
	}
	if len(waits) > 0 {
		if !anyDelegated {
			// The appends are what must happen in request order, as for
			// acks=all produce; the wait for the ISR need not hold the
			// connection's next request back. A completer call runs on
			// its own goroutine, so nothing fixes when it reaches the
			// group coordinator: a request with one keeps the next
			// request waiting until it is done, as Kafka does for every
			// request.
			reqctx.Unmute(ctx)
		}
		acks := make([]*ackWait, len(waits))
		for i, w := range waits {
			acks[i] = &w.ackWait
		}
		r.awaitAcks(ctx, acks, timeout)
		for _, w := range waits {
			w.res.ErrorCode = w.errorCode()
		}
	}
	delegated.Wait()
	results.fill(resp)
	return resp
}

// appendTxnMarker appends m's marker to tp and returns the wait for its
// replication, or nil after setting the partition's error.
func (r *ReplicaManager) appendTxnMarker(tp storage.TopicPartition, m *kmsg.WriteTxnMarkersRequestMarker, res markerResult) *markerWait {
	p, ok := r.Partition(tp)
	if !ok {
		// Kafka answers from its local log: a partition without a
		// local replica is unknown here, whatever the metadata says.
		res.ErrorCode = kerr.UnknownTopicOrPartition.Code
		return nil
	}
	spec := record.ControlBatchSpec{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, Timestamp: r.nowMs()}
	batch := record.EndTxnMarkerBatch(spec, m.Committed, m.CoordinatorEpoch)
	info, err := p.appendRecordsToLeader(batch, record.OriginCoordinator, -1)
	if err != nil {
		res.ErrorCode = errorCode(err)
		if res.ErrorCode != kerr.NotLeaderForPartition.Code {
			r.logger.Debug("transaction marker refused", "partition", tp.String(), "producer_id", m.ProducerID,
				"producer_epoch", m.ProducerEpoch, "coordinator_epoch", m.CoordinatorEpoch, "commit", m.Committed, "err", err)
		}
		return nil
	}
	return &markerWait{ackWait: ackWait{tp: tp, p: p, requiredOffset: info.LastOffset + 1}, res: res}
}

// completeDelegated hands a __consumer_offsets marker to the completer and
// returns the partition's error code.
func (r *ReplicaManager) completeDelegated(ctx context.Context, c TxnMarkerCompleter, tp storage.TopicPartition, m *kmsg.WriteTxnMarkersRequestMarker, timeout time.Duration) int16 {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	code := errorCode(c.CompleteTransaction(cctx, tp, m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed))
	switch code {
	case kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code, kerr.NotCoordinator.Code:
		// The transaction coordinator does not expect these; to it the
		// group coordinator's partition is simply not ready yet.
		return kerr.NotLeaderForPartition.Code
	}
	return code
}

// markerResults collects the answers keyed by producer id, then topic, in
// the order the request first names them; each partition's answer is its
// own allocation, filled in place (by a completer's goroutine, too) and
// copied into the response at the end.
type markerResults struct {
	pids  []int64
	byPID map[int64]*pidResults
}

type pidResults struct {
	topics []string
	parts  map[string][]markerResult
}

func newMarkerResults() *markerResults {
	return &markerResults{byPID: map[int64]*pidResults{}}
}

// add returns the answer for tp under pid.
func (mr *markerResults) add(pid int64, tp storage.TopicPartition) markerResult {
	pr, ok := mr.byPID[pid]
	if !ok {
		pr = &pidResults{parts: map[string][]markerResult{}}
		mr.byPID[pid] = pr
		mr.pids = append(mr.pids, pid)
	}
	if _, ok := pr.parts[tp.Topic]; !ok {
		pr.topics = append(pr.topics, tp.Topic)
	}
	rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
	rp.Partition = tp.Partition
	pr.parts[tp.Topic] = append(pr.parts[tp.Topic], &rp)
	return &rp
}

// fill writes the collected answers into resp.
func (mr *markerResults) fill(resp *kmsg.WriteTxnMarkersResponse) {
	for _, pid := range mr.pids {
		pr := mr.byPID[pid]
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = pid
		for _, name := range pr.topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = name
			for _, rp := range pr.parts[name] {
				rt.Partitions = append(rt.Partitions, *rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
}
