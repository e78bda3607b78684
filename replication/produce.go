package replication

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// Produce: v3-13 (the wire layer gates versions)
//
// Behavior (Kafka's KafkaApis.handleProduceRequest + ReplicaManager.appendRecords):
//   - acks other than -1, 0, 1: INVALID_REQUIRED_ACKS for every partition.
//   - Transactional batches without a TransactionalID:
//     TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka answers. With one, a
//     batch that begins a transaction on a partition is first confirmed
//     with the transaction coordinator (KIP-890, txn_verify.go); one it
//     does not confirm answers INVALID_TXN_STATE (TRANSACTION_ABORTABLE
//     from v11), INVALID_PRODUCER_EPOCH for a fenced producer, and
//     NOT_ENOUGH_REPLICAS (retried) when the coordinator cannot say.
//   - Unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION (v13, by id:
//     UNKNOWN_TOPIC_ID); known but not led here: NOT_LEADER_OR_FOLLOWER
//     with CurrentLeader and the leader's endpoint (v10+, KIP-951);
//     internal topics: INVALID_TOPIC_EXCEPTION; a mirror topic's partition
//     (KIP-1279) while the mirror holds it read-only: READ_ONLY_TOPIC, and
//     before the mirror decided in the current leader epoch:
//     LEADER_NOT_AVAILABLE (mirror_access.go). Nothing is appended then.
//   - Validation errors are storage's *record.Error codes, with the message
//     and per-record errors (v8+, KIP-467); IO failures KAFKA_STORAGE_ERROR.
//   - A retried idempotent batch answers its original offsets.
//   - acks=0 still appends; acks=-1 waits until the high watermark passes
//     each batch, at most TimeoutMillis, then REQUEST_TIMED_OUT.
//
// Version notes: v5 LogStartOffset; v8 RecordErrors, ErrorMessage; v10
// CurrentLeader, NodeEndpoints; v13 topic ids (KIP-516).

// errNoTransactions refuses transactional produce on a broker without a
// transaction coordinator.
const errNoTransactions = "this broker serves no transactions"

// producePending is an appended partition an acks=-1 request waits for
// (Kafka's ProducePartitionStatus).
type producePending struct {
	ackWait
	resp *kmsg.ProduceResponseTopicPartition
}

// Produce appends the request's batches and answers as acks asks.
func (r *ReplicaManager) Produce(ctx context.Context, req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	img := r.currentImage()
	if !knowsProducePartitions(img, req) && r.awaitMetadata(ctx) {
		img = r.currentImage()
	}
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(req.Topics))
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := &resp.Topics[i]
		*st = kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			sp := &st.Partitions[j]
			*sp = kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rt.Partitions[j].Partition
			sp.BaseOffset = -1
		}
	}
	failAll := func(code int16, msg string) *kmsg.ProduceResponse {
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				setProduceError(req.Version, &resp.Topics[i].Partitions[j], code, msg, -1)
			}
		}
		return resp
	}
	switch req.Acks {
	case -1, 0, 1:
	default:
		return failAll(kerr.InvalidRequiredAcks.Code, "")
	}
	if req.TransactionID == nil && hasTransactionalRecords(req) {
		return failAll(kerr.TransactionalIDAuthorizationFailed.Code, "")
	}
	if req.TransactionID != nil && !r.cfg.Transactions {
		return failAll(kerr.InvalidTxnState.Code, errNoTransactions)
	}
	verified := r.verifyTransactional(ctx, req, img)

	var pending []*producePending
	listener := reqctx.From(ctx).Listener
	leaders := map[int32]bool{}
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := &resp.Topics[i]
		topic := rt.Topic
		if req.Version >= 13 {
			t, ok := img.TopicsByID[raftmeta.Uuid(rt.TopicID)]
			if !ok {
				for j := range st.Partitions {
					setProduceError(req.Version, &st.Partitions[j], kerr.UnknownTopicID.Code, "", -1)
				}
				continue
			}
			topic = t.Name
			st.Topic = topic
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			sp := &st.Partitions[j]
			tp := storage.TopicPartition{Topic: topic, Partition: rp.Partition}
			p, err := r.getPartitionOrError(tp, img)
			if err == nil && raftmeta.IsInternalTopic(topic) {
				err = kerr.InvalidTopicException
			}
			if err == nil {
				err = verified.errs[tp]
			}
			var info storage.AppendInfo
			if err == nil {
				info, err = p.appendVerifiedToLeader(rp.Records, record.OriginClient, req.Acks, verified.guards[tp])
			}
			if err != nil {
				r.produceFailed(req.Version, img, tp, p, sp, err, leaders)
				continue
			}
			sp.BaseOffset = info.FirstOffset
			sp.LogAppendTime = info.LogAppendTime
			sp.LogStartOffset = info.LogStartOffset
			if !info.Duplicate {
				r.metrics.BytesIn(topic, int64(len(rp.Records)))
				r.metrics.MessagesIn(topic, info.NumRecords)
			}
			if req.Acks == -1 {
				pending = append(pending, &producePending{ackWait: ackWait{tp: tp, p: p, requiredOffset: info.LastOffset + 1}, resp: sp})
			}
		}
	}
	if len(pending) > 0 {
		r.awaitProduce(ctx, req.Version, pending, time.Duration(req.TimeoutMillis)*time.Millisecond, leaders)
	}
	if req.Version >= 10 {
		addProduceLeaderEndpoints(resp, r.currentImage(), leaders, listener)
	}
	return resp
}

// produceFailed fills a failed partition's answer. Kafka reports the log
// start offset for validation failures and -1 for the errors it expects
// (unknown partition, not leader, oversize or corrupt batches, storage).
func (r *ReplicaManager) produceFailed(version int16, img *raftmeta.Image, tp storage.TopicPartition, p *Partition, sp *kmsg.ProduceResponseTopicPartition, err error, leaders map[int32]bool) {
	code := errorCode(err)
	logStart := int64(-1)
	switch code {
	case kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.MessageTooLarge.Code,
		kerr.RecordListTooLarge.Code, kerr.CorruptMessage.Code, kerr.KafkaStorageError.Code, kerr.InvalidTopicException.Code:
	default:
		if p != nil {
			logStart = p.Log().LogStartOffset()
		}
	}
	var msg string
	var ro *readOnlyTopicError
	if errors.As(err, &ro) {
		msg = ro.Error()
	}
	var re *record.Error
	if errors.As(err, &re) {
		msg = re.Msg
		if version >= 8 {
			for _, e := range re.Records {
				m := e.Msg
				sp.ErrorRecords = append(sp.ErrorRecords, kmsg.ProduceResponseTopicPartitionErrorRecord{RelativeOffset: e.Index, ErrorMessage: &m})
			}
		}
	}
	setProduceError(version, sp, code, msg, logStart)
	if code == kerr.NotLeaderForPartition.Code {
		r.setProduceCurrentLeader(version, img, tp, sp, leaders)
	}
	if code != kerr.NotLeaderForPartition.Code && code != kerr.UnknownTopicOrPartition.Code {
		r.logger.Debug("produce to partition failed", "partition", tp.String(), "err", err)
	}
}

func (r *ReplicaManager) setProduceCurrentLeader(version int16, img *raftmeta.Image, tp storage.TopicPartition, sp *kmsg.ProduceResponseTopicPartition, leaders map[int32]bool) {
	if version < 10 {
		return
	}
	sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = currentLeader(img, tp)
	if sp.CurrentLeader.LeaderID >= 0 {
		leaders[sp.CurrentLeader.LeaderID] = true
	}
}

func setProduceError(version int16, sp *kmsg.ProduceResponseTopicPartition, code int16, msg string, logStart int64) {
	sp.ErrorCode = code
	sp.BaseOffset = -1
	sp.LogAppendTime = -1
	sp.LogStartOffset = logStart
	if version >= 8 && msg != "" {
		sp.ErrorMessage = &msg
	}
}

// awaitProduce is the delayed produce of an acks=-1 request (Kafka's
// DelayedProduce): every appended partition answers REQUEST_TIMED_OUT
// until its high watermark passes the batch, or the error that ended the
// wait (leadership lost, ISR below min.insync.replicas).
func (r *ReplicaManager) awaitProduce(ctx context.Context, version int16, pending []*producePending, timeout time.Duration, leaders map[int32]bool) {
	waits := make([]*ackWait, len(pending))
	for i, pp := range pending {
		waits[i] = &pp.ackWait
	}
	// Answered at once when the high watermark already passed every
	// append (a partition whose ISR is the leader alone), as Kafka's
	// tryCompleteElseWatch completes a DelayedProduce before it is
	// watched. Otherwise the appends are what must happen in request
	// order; the wait for the ISR need not hold the connection's next
	// request back.
	if !r.tryCompleteAcks(waits) {
		reqctx.Unmute(ctx)
		r.awaitAcks(ctx, waits, timeout)
	}
	for _, pp := range pending {
		if code := pp.errorCode(); code != 0 {
			pp.resp.ErrorCode = code
			if code == kerr.NotLeaderForPartition.Code {
				r.setProduceCurrentLeader(version, r.currentImage(), pp.tp, pp.resp, leaders)
			}
		}
	}
}

// addProduceLeaderEndpoints lists the endpoints of the leaders named in
// CurrentLeader fields, on the listener the request came in on (KIP-951).
func addProduceLeaderEndpoints(resp *kmsg.ProduceResponse, img *raftmeta.Image, leaders map[int32]bool, listener string) {
	ids := make([]int32, 0, len(leaders))
	for id := range leaders {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		ep, b, ok := leaderEndpoint(img, id, listener)
		if !ok {
			continue
		}
		nb := kmsg.NewProduceResponseBroker()
		nb.NodeID, nb.Host, nb.Port = id, ep.Host, ep.Port
		if b.Rack != "" {
			rack := b.Rack
			nb.Rack = &rack
		}
		resp.Brokers = append(resp.Brokers, nb)
	}
}

// hasTransactionalRecords reports whether any batch is transactional
// (Kafka's RequestUtils.hasTransactionalRecords): Kafka refuses those
// without a transactional id before anything else.
func hasTransactionalRecords(req *kmsg.ProduceRequest) bool {
	for i := range req.Topics {
		for j := range req.Topics[i].Partitions {
			b := record.Batch(req.Topics[i].Partitions[j].Records)
			if len(b) >= record.HeaderSize && b.IsTransactional() {
				return true
			}
		}
	}
	return false
}
