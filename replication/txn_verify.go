package replication

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/producer"
	"github.com/strait-io/strait/storage/record"
)

// KIP-890 part 1 on the produce path (Kafka's
// ReplicaManager.appendRecordsWithTransactionVerification and
// AddPartitionsToTxnManager): before a transactional batch that would begin
// a transaction on a partition is appended, the transaction coordinator is
// asked whether the partition is in the producer's ongoing transaction. A
// write it does not confirm (a produce retried after its transaction
// ended, a producer that skipped AddPartitionsToTxn) is refused instead of
// opening a transaction no marker would close. The storage guard taken
// before the question makes the append fail if the transaction ends while
// it is asked.
//
// KIP-890 part 2 (transaction.version 2, Produce v12+): the producer sends
// no AddPartitionsToTxn, so the same question becomes the add itself
// (ReplicaManager's addPartition operation): the coordinator adds the
// partition to the producer's transaction, starting it if none is ongoing.
// The add is asked whether or not transaction.partition.verification.enable
// is on, since without it the transaction would not hold the partition.

// txnVerification is what verifyTransactional decided per partition: the
// guard to append with, or the error to answer.
type txnVerification struct {
	guards map[storage.TopicPartition]*producer.VerificationGuard
	errs   map[storage.TopicPartition]error
}

// verifyTransactional verifies the transactional partitions of req
// (nothing when the request is not transactional or no verifier is set).
func (r *ReplicaManager) verifyTransactional(ctx context.Context, req *kmsg.ProduceRequest, img *raftmeta.Image) txnVerification {
	// The maps are made only for a transactional request: every produce
	// asks, and a nil map reads as empty (issue 29's allocation profile
	// had these two maps as 3 of a plain produce request's ~44 objects).
	var out txnVerification
	if req.TransactionID == nil || r.cfg.TxnVerifier == nil {
		return out
	}
	add := req.Version >= 12 && img.TransactionVersion2()
	if !add && r.cfg.TxnVerificationEnabled != nil && !r.cfg.TxnVerificationEnabled() {
		return out
	}
	out = txnVerification{guards: map[storage.TopicPartition]*producer.VerificationGuard{}, errs: map[storage.TopicPartition]error{}}
	var ask []storage.TopicPartition
	pid, epoch := int64(-1), int16(-1)
	for i := range req.Topics {
		rt := &req.Topics[i]
		topic := rt.Topic
		if req.Version >= 13 {
			t, ok := img.TopicsByID[raftmeta.Uuid(rt.TopicID)]
			if !ok {
				continue
			}
			topic = t.Name
		}
		for j := range rt.Partitions {
			b := record.Batch(rt.Partitions[j].Records)
			if len(b) < record.HeaderSize || !b.IsTransactional() {
				continue
			}
			tp := storage.TopicPartition{Topic: topic, Partition: rt.Partitions[j].Partition}
			p, err := r.getPartitionOrError(tp, img)
			if err != nil {
				continue // the append reports it
			}
			pid, epoch = b.ProducerID(), b.ProducerEpoch()
			g := p.Log().StartTxnVerification(pid, epoch, add)
			out.guards[tp] = g
			if g.NeedsVerification() {
				ask = append(ask, tp)
			}
		}
	}
	if len(ask) == 0 {
		return out
	}
	answers, err := r.cfg.TxnVerifier.VerifyTransaction(ctx, *req.TransactionID, pid, epoch, ask, add)
	for _, tp := range ask {
		e := err
		if e == nil {
			e = answers[tp]
		}
		if e != nil {
			out.errs[tp] = verificationError(req.Version, e)
			delete(out.guards, tp)
		}
	}
	return out
}

// verificationError is what a producer is told when its write was not
// confirmed (AddPartitionsToTxnManager's conversions): the coordinator
// errors a producer does not expect on Produce become the retriable
// NOT_ENOUGH_REPLICAS, PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH, and
// TRANSACTION_ABORTABLE is INVALID_TXN_STATE for producers older than
// Produce v11, which do not know it.
func verificationError(version int16, err error) error {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.NotEnoughReplicas
	}
	switch ke {
	case kerr.NotCoordinator, kerr.CoordinatorNotAvailable, kerr.CoordinatorLoadInProgress, kerr.ConcurrentTransactions,
		kerr.RequestTimedOut, kerr.NetworkException:
		return kerr.NotEnoughReplicas
	case kerr.ProducerFenced:
		return kerr.InvalidProducerEpoch
	case kerr.TransactionAbortable:
		if version < 11 {
			return kerr.InvalidTxnState
		}
	}
	return ke
}
