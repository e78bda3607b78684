package runtime

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/strait-io/strait/storage/record"
)

// Record is one record of a coordinator's internal topic: an encoded key
// and an encoded value, or a nil Value for a tombstone.
type Record struct{ Key, Value []byte }

// Producer is the transactional producer a batch is written for: a
// TxnOffsetCommit's producer id and epoch, or the producer whose
// transaction a marker ends.
type Producer struct {
	ID    int64
	Epoch int16
}

// BuildBatch encodes records of a coordinator's internal topic as one
// uncompressed batch, as Kafka's coordinator runtime writes them: the
// leader assigns the offsets and the leader epoch; the producer fields say
// "no producer".
func BuildBatch(recs []Record, nowMs int64) ([]byte, error) {
	return buildBatch(record.BatchSpec{
		PartitionLeaderEpoch: record.NoPartitionLeaderEpoch,
		ProducerID:           record.NoProducerID,
		ProducerEpoch:        record.NoProducerEpoch,
		BaseSequence:         record.NoSequence,
		Codec:                record.CodecNone,
		TimestampType:        record.CreateTime,
		BaseTimestamp:        nowMs,
	}, recs)
}

// BuildTransactionalBatch encodes records written for producer p's
// transaction (a TxnOffsetCommit's offsets) as one uncompressed
// transactional batch, the way Kafka's CoordinatorRuntime builds a batch
// for a producer id (MemoryRecordsBuilder with the producer's id and
// epoch, base sequence 0 and isTransactional set): the log checks the
// producer's epoch but, for a coordinator append, not its sequence, and
// the transaction stays open until a COMMIT or ABORT marker ends it.
func BuildTransactionalBatch(p Producer, recs []Record, nowMs int64) ([]byte, error) {
	return buildBatch(record.BatchSpec{
		PartitionLeaderEpoch: record.NoPartitionLeaderEpoch,
		ProducerID:           p.ID,
		ProducerEpoch:        p.Epoch,
		BaseSequence:         0,
		Transactional:        true,
		Codec:                record.CodecNone,
		TimestampType:        record.CreateTime,
		BaseTimestamp:        nowMs,
	}, recs)
}

// BuildEndTxnMarker encodes the COMMIT or ABORT marker of producer p's
// transaction, written by a transaction coordinator at coordinatorEpoch
// (Kafka's MemoryRecords.withEndTransactionMarker, as CoordinatorRuntime's
// completeTransaction writes it: no partition leader epoch, the log
// assigns it).
func BuildEndTxnMarker(p Producer, commit bool, coordinatorEpoch int32, nowMs int64) []byte {
	return record.EndTxnMarkerBatch(record.ControlBatchSpec{
		ProducerID:           p.ID,
		ProducerEpoch:        p.Epoch,
		PartitionLeaderEpoch: record.NoPartitionLeaderEpoch,
		Timestamp:            nowMs,
	}, commit, coordinatorEpoch)
}

func buildBatch(spec record.BatchSpec, recs []Record) ([]byte, error) {
	rs := make([]record.Record, len(recs))
	for i, r := range recs {
		rs[i] = record.Record{Key: r.Key, KeyLen: int32(len(r.Key)), Value: r.Value, ValueLen: int32(len(r.Value))}
		if r.Value == nil {
			rs[i].ValueLen = -1
		}
	}
	b, err := record.Build(spec, rs, nil)
	if err != nil {
		return nil, fmt.Errorf("coordinator: building a batch of %d records: %w", len(recs), err)
	}
	return b, nil
}

// DecodeComplete checks that a decoder of a coordinator record read all of
// its input and no more: the reader did not run out, and nothing is left
// after the last field.
func DecodeComplete(r *kbin.Reader) error {
	if err := r.Complete(); err != nil {
		return err
	}
	if len(r.Src) != 0 {
		return fmt.Errorf("%d bytes left after the last field", len(r.Src))
	}
	return nil
}
