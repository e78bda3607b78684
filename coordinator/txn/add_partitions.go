package txn

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/storage"
)

// AddPartitionsToTxn: v0-5
//
// Behavior (TransactionCoordinator.handleAddPartitionsToTransaction and
// handleVerifyPartitionsInTransaction):
//   - Partitions of topics the cluster does not have are
//     UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED
//     (KafkaApis, before the coordinator is asked).
//   - An unknown id, or another producer id, is INVALID_PRODUCER_ID_MAPPING;
//     another epoch PRODUCER_FENCED; a change being appended, or a commit
//     or abort completing, CONCURRENT_TRANSACTIONS, once it has waited
//     Config.ConcurrentWait for them to finish (Kafka answers at once).
//   - Otherwise the partitions join the transaction, which starts if none
//     was ongoing; the change is appended before the answer (nothing is
//     appended when they are all in it already).
//
// Version notes:
//   - v3: flexible.
//   - v4: batched Transactions, each with VerifyOnly (KIP-890: a partition
//     leader asks whether its partitions are in the transaction before it
//     appends a transactional batch). A verification changes nothing and
//     answers per partition: NONE when it is in the transaction, else
//     TRANSACTION_ABORTABLE. The top-level ErrorCode is set only when the
//     whole request fails.
//   - v5: TRANSACTION_ABORTABLE may be returned (KIP-890). Without
//     VerifyOnly a partition leader (or the group coordinator) adds the
//     partitions for a producer that uses transaction version 2 (KIP-890
//     part 2: Produce v12 and TxnOffsetCommit v5 add implicitly), which
//     makes the transaction's EndTxn bump the epoch.
func (c *Coordinator) AddPartitionsToTxn(ctx context.Context, req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	resp.Version = req.Version
	if req.Version < 4 {
		parts := requestPartitions(req.Topics, func(t kmsg.AddPartitionsToTxnRequestTopic) (string, []int32) { return t.Topic, t.Partitions })
		errs := c.addPartitions(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, false, classicTransactionVersion, parts)
		for _, rt := range responseTopics(parts, errs) {
			t := kmsg.NewAddPartitionsToTxnResponseTopic()
			t.Topic = rt.topic
			for _, p := range rt.partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.partition, p.code
				t.Partitions = append(t.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp
	}
	for _, tx := range req.Transactions {
		parts := requestPartitions(tx.Topics, func(t kmsg.AddPartitionsToTxnRequestTransactionTopic) (string, []int32) {
			return t.Topic, t.Partitions
		})
		errs := c.addPartitions(ctx, tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly, transactionVersion2, parts)
		rtx := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rtx.TransactionalID = tx.TransactionalID
		for _, rt := range responseTopics(parts, errs) {
			t := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			t.Topic = rt.topic
			for _, p := range rt.partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				rp.Partition, rp.ErrorCode = p.partition, p.code
				t.Partitions = append(t.Partitions, rp)
			}
			rtx.Topics = append(rtx.Topics, t)
		}
		resp.Transactions = append(resp.Transactions, rtx)
	}
	return resp
}

// AddOffsetsToTxn: v0-4. The group's __consumer_offsets partition joins
// the transaction, as AddPartitionsToTxn would add it
// (TransactionCoordinator via KafkaApis.handleAddOffsetsToTxnRequest), so
// the transaction's markers reach the group coordinator, which makes the
// transaction's offset commits visible or drops them.
func (c *Coordinator) AddOffsetsToTxn(ctx context.Context, req *kmsg.AddOffsetsToTxnRequest) *kmsg.AddOffsetsToTxnResponse {
	resp := kmsg.NewPtrAddOffsetsToTxnResponse()
	resp.Version = req.Version
	tp := storage.TopicPartition{Topic: coordinator.OffsetsTopic, Partition: coordinator.PartitionFor(req.Group, c.cfg.OffsetsPartitions)}
	errs := c.addPartitions(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, false, classicTransactionVersion, []storage.TopicPartition{tp})
	resp.ErrorCode = errs[tp]
	return resp
}

// addPartitions adds (or, verifyOnly, checks) partitions of a transaction
// of a client using transaction version tv and returns each partition's
// error code.
func (c *Coordinator) addPartitions(ctx context.Context, id string, pid int64, epoch int16, verifyOnly bool, tv int16, parts []storage.TopicPartition) map[storage.TopicPartition]int16 {
	codes := make([]int16, len(parts))
	if verifyOnly {
		c.VerifyPartitions(id, pid, epoch, parts, codes)
	} else {
		c.addPartitionsInto(ctx, id, pid, epoch, tv, parts, codes)
	}
	out := make(map[storage.TopicPartition]int16, len(parts))
	for i, tp := range parts {
		out[tp] = codes[i]
	}
	return out
}

// VerifyPartitions is a verification (AddPartitionsToTxn with VerifyOnly,
// KIP-890) asked in-process by a partition leader on this broker: codes[i]
// is set to parts[i]'s error code, 0 when it is in the transaction. The
// produce path asks it for the first transactional batch of every
// transaction on a partition; building an AddPartitionsToTxn request and
// reading its answer back, for a question this broker answers itself,
// cost about as much as the answer.
func (c *Coordinator) VerifyPartitions(id string, pid int64, epoch int16, parts []storage.TopicPartition, codes []int16) {
	s := c.partitionsShard(id, parts, codes)
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.txns[id]
	var e *kerr.Error
	switch {
	case s.closed:
		e = kerr.NotCoordinator
	case m == nil:
		e = kerr.InvalidProducerIDMapping
	default:
		e = verifyLocked(m, pid, epoch)
	}
	if e != nil {
		fill(codes, e)
		return
	}
	for i, tp := range parts {
		if !m.HasPartition(tp) {
			codes[i] = kerr.TransactionAbortable.Code
		}
	}
}

// AddPartitions adds parts to the transaction of a producer that uses
// transaction version 2 (KIP-890 part 2), asked in-process by a partition
// leader or the group coordinator on this broker for its first write of
// the transaction there: codes[i] is set to parts[i]'s error code. It is
// AddPartitionsToTxn v5 without VerifyOnly, as a remote leader sends it.
func (c *Coordinator) AddPartitions(ctx context.Context, id string, pid int64, epoch int16, parts []storage.TopicPartition, codes []int16) {
	c.addPartitionsInto(ctx, id, pid, epoch, transactionVersion2, parts, codes)
}

// addPartitionsInto adds parts to id's transaction, setting codes[i] to
// parts[i]'s error code.
func (c *Coordinator) addPartitionsInto(ctx context.Context, id string, pid int64, epoch int16, tv int16, parts []storage.TopicPartition, codes []int16) {
	s := c.partitionsShard(id, parts, codes)
	if s == nil {
		return
	}
	var t Transit
	write := false
	s.mu.Lock()
	e := s.whileConcurrentLocked(ctx, func() *kerr.Error {
		m := s.txns[id]
		switch {
		case s.closed:
			return kerr.NotCoordinator
		case m == nil:
			return kerr.InvalidProducerIDMapping
		}
		var e *kerr.Error
		t, write, e = s.prepareAddLocked(m, pid, epoch, tv, parts)
		return e
	})
	s.mu.Unlock()
	if e == nil && write {
		e = s.write(id, t)
	}
	if e != nil {
		fill(codes, e)
	}
}

// partitionsShard makes the checks before the coordinator looks at a
// request and returns id's shard, or nil when codes hold the answer: an
// id must be named; partitions of topics the cluster does not have are
// UNKNOWN_TOPIC_OR_PARTITION and the others then OPERATION_NOT_ATTEMPTED;
// every partition has the error of a shard that does not serve (shardOf).
func (c *Coordinator) partitionsShard(id string, parts []storage.TopicPartition, codes []int16) *shard {
	if id == "" {
		fill(codes, kerr.InvalidRequest)
		return nil
	}
	img := c.cfg.Image()
	unknown := false
	for i, tp := range parts {
		if _, ok := img.Partition(tp.Topic, tp.Partition); !ok {
			codes[i], unknown = kerr.UnknownTopicOrPartition.Code, true
		}
	}
	if unknown {
		for i := range codes {
			if codes[i] == 0 {
				codes[i] = kerr.OperationNotAttempted.Code
			}
		}
		return nil
	}
	s, e := c.shardOf(id)
	if e != nil {
		fill(codes, e)
		return nil
	}
	return s
}

// fill sets every code to e's.
func fill(codes []int16, e *kerr.Error) {
	for i := range codes {
		codes[i] = e.Code
	}
}

// verifyLocked checks a verification's producer against m: the checks of
// handleVerifyPartitionsInTransaction (a pending transition is not
// checked: the append is validated once more by the log).
func verifyLocked(m *Metadata, pid int64, epoch int16) *kerr.Error {
	switch {
	case nextProducerEnding(m, pid):
		return kerr.ConcurrentTransactions
	case m.ProducerID != pid:
		return kerr.InvalidProducerIDMapping
	case m.ProducerEpoch != epoch:
		return kerr.ProducerFenced
	case m.State == PrepareCommit || m.State == PrepareAbort:
		return kerr.ConcurrentTransactions
	}
	return nil
}

// nextProducerEnding reports whether pid is the producer id m moves to
// once its ending transaction completes (KIP-890 part 2, the epochs ran
// out): the producer learnt it from EndTxn and may write its next
// transaction before the markers of the last are written; it waits, as
// the same producer id would for a prepared end.
func nextProducerEnding(m *Metadata, pid int64) bool {
	return m.NextProducerID >= 0 && pid == m.NextProducerID && (m.State == PrepareCommit || m.State == PrepareAbort)
}

// prepareAddLocked decides an AddPartitionsToTxn under the shard's lock:
// the transition to append, if any (none when the partitions are all in
// the ongoing transaction already), or the error to answer.
func (s *shard) prepareAddLocked(m *Metadata, pid int64, epoch int16, tv int16, parts []storage.TopicPartition) (Transit, bool, *kerr.Error) {
	if _, pending := m.Pending(); pending {
		return Transit{}, false, kerr.ConcurrentTransactions
	}
	switch {
	case nextProducerEnding(m, pid):
		return Transit{}, false, kerr.ConcurrentTransactions
	case m.ProducerID != pid:
		return Transit{}, false, kerr.InvalidProducerIDMapping
	case m.ProducerEpoch != epoch:
		return Transit{}, false, kerr.ProducerFenced
	case m.State == PrepareCommit || m.State == PrepareAbort:
		return Transit{}, false, kerr.ConcurrentTransactions
	}
	if m.State == Ongoing {
		all := true
		for _, tp := range parts {
			all = all && m.HasPartition(tp)
		}
		if all {
			return Transit{}, false, nil
		}
	}
	t, err := m.PrepareAddPartitions(parts, tv, s.c.nowMs())
	if err != nil {
		s.c.log.Error("preparing AddPartitionsToTxn failed", "transactional_id", m.TransactionalID, "err", err)
		return Transit{}, false, kerr.UnknownServerError
	}
	return t, true, nil
}

// requestPartitions flattens a request's topics.
func requestPartitions[T any](topics []T, get func(T) (string, []int32)) []storage.TopicPartition {
	var out []storage.TopicPartition
	for _, t := range topics {
		topic, ps := get(t)
		for _, p := range ps {
			out = append(out, storage.TopicPartition{Topic: topic, Partition: p})
		}
	}
	return out
}

type partitionCode struct {
	partition int32
	code      int16
}

type topicCodes struct {
	topic      string
	partitions []partitionCode
}

// responseTopics groups per-partition codes by topic, in request order.
func responseTopics(parts []storage.TopicPartition, codes map[storage.TopicPartition]int16) []topicCodes {
	var out []topicCodes
	index := map[string]int{}
	for _, tp := range parts {
		i, ok := index[tp.Topic]
		if !ok {
			i = len(out)
			index[tp.Topic] = i
			out = append(out, topicCodes{topic: tp.Topic})
		}
		out[i].partitions = append(out[i].partitions, partitionCode{tp.Partition, codes[tp]})
	}
	return out
}
