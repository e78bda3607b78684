package producer

import (
	"fmt"
	"math"
)

// BatchMetadata describes one retained batch of a producer (Kafka's
// BatchMetadata). Only the last sequence and offset are stored; the first
// ones follow from the delta, as in Kafka, so a snapshot entry (which has
// exactly these fields) restores it without loss.
type BatchMetadata struct {
	LastSeq     int32
	LastOffset  int64
	OffsetDelta int32
	// Timestamp is the batch's max timestamp.
	Timestamp int64
}

// FirstSeq is the batch's base sequence, undoing the wrap past MaxInt32.
func (b BatchMetadata) FirstSeq() int32 { return decrementSequence(b.LastSeq, b.OffsetDelta) }

// FirstOffset is the batch's base offset.
func (b BatchMetadata) FirstOffset() int64 { return b.LastOffset - int64(b.OffsetDelta) }

func (b BatchMetadata) String() string {
	return fmt.Sprintf("seq=%d..%d offset=%d..%d ts=%d", b.FirstSeq(), b.LastSeq, b.FirstOffset(), b.LastOffset, b.Timestamp)
}

// decrementSequence is the inverse of record.IncrementSequence, with the
// arithmetic of Kafka's DefaultRecordBatch.decrementSequence (including its
// result for NoSequence, which Kafka also produces for sequence-less
// batches from the coordinator).
func decrementSequence(seq, decrement int32) int32 {
	if seq < decrement {
		return int32(int64(math.MaxInt32) - (int64(decrement) - int64(seq)) + 1)
	}
	return seq - decrement
}

// inSequence reports whether next directly follows last, wrapping from
// MaxInt32 to 0 (ProducerAppendInfo.inSequence). The sum is taken in int64
// so that last == MaxInt32 cannot overflow into a false match.
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}
