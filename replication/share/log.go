package share

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/record"
)

// TopicPartition is a partition by topic id, as share requests name it.
type TopicPartition struct {
	TopicID   [16]byte
	Partition int32
}

// Logs is what the manager needs of the broker's replicas: the local
// leader's log of a partition, who leads a partition it does not lead,
// and word of new data. The broker adapts its replica manager to it.
type Logs interface {
	// Leader returns the log of a partition this broker leads, or an
	// error wrapping the kerr error Kafka answers: UNKNOWN_TOPIC_ID,
	// UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
	// KAFKA_STORAGE_ERROR.
	Leader(tp TopicPartition) (PartitionLog, error)
	// CurrentLeader tells a client answered NOT_LEADER_OR_FOLLOWER where
	// the partition is led now (KIP-951), with the leader's endpoint on
	// the listener the request came in on when known.
	CurrentLeader(tp TopicPartition, listener string) LeaderHint
	// Watch returns a channel that receives (coalesced, never blocking
	// the sender) when records are appended to one of tps or its high
	// watermark, last stable offset, log start offset or leadership
	// changes, and a function that stops watching.
	Watch(tps []TopicPartition) (<-chan struct{}, func())
}

// LeaderHint is a partition's current leader as the metadata knows it;
// LeaderID and LeaderEpoch are -1 when unknown.
type LeaderHint struct {
	LeaderID, LeaderEpoch int32
	Endpoint              *Endpoint
}

// Endpoint is a broker's address on one listener.
type Endpoint struct {
	Host string
	Port int32
	Rack *string
}

// PartitionLog is the local leader replica of one partition.
type PartitionLog interface {
	LeaderEpoch() int32
	LogStartOffset() int64
	HighWatermark() int64
	// Read returns whole batches from the one holding offset (or the
	// first after it), up to the high watermark, or the last stable
	// offset for readCommitted, at most maxBytes but at least one batch,
	// and for readCommitted the aborted transactions they overlap.
	// Reading outside the log wraps kerr.OffsetOutOfRange.
	Read(offset int64, maxBytes int32, readCommitted bool) (LogRead, error)
	// OffsetForTimestamp is the first offset with a timestamp at or
	// after ts (ListOffsets), false when there is none.
	OffsetForTimestamp(ts int64) (int64, bool, error)
}

// LogRead is what a read returned.
type LogRead struct {
	Records []byte
	Aborted []AbortedTxn
}

// AbortedTxn is an aborted transaction overlapping a read, as a Fetch
// response lists it.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
}

// readBatch is one batch of a read: its offsets and its bytes.
type readBatch struct {
	LogBatch
	pos, end int
}

// parseRead walks the batch headers of a read. For readCommitted it marks
// the data batches of aborted transactions as a consumer skips them (the
// Java consumer's CompletedFetch): a transactional batch of a producer
// with an aborted transaction starting at or before it, up to that
// producer's next control batch (its abort marker). Data that is not a
// whole v2 batch is CORRUPT_MESSAGE.
func parseRead(rd LogRead, readCommitted bool) ([]readBatch, error) {
	var out []readBatch
	aborted := slices.SortedFunc(slices.Values(rd.Aborted), func(a, b AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	abortedPIDs := map[int64]bool{}
	it := record.NewIter(rd.Records)
	for {
		pos := it.Pos()
		b, ok := it.Next()
		if !ok {
			break
		}
		rb := readBatch{LogBatch: LogBatch{First: b.BaseOffset(), Last: b.LastOffset()}, pos: pos, end: it.Pos()}
		if readCommitted {
			for len(aborted) > 0 && aborted[0].FirstOffset <= rb.Last {
				abortedPIDs[aborted[0].ProducerID] = true
				aborted = aborted[1:]
			}
			switch pid := b.ProducerID(); {
			case b.IsControl():
				delete(abortedPIDs, pid)
			case b.IsTransactional() && abortedPIDs[pid]:
				rb.Aborted = true
			}
		}
		out = append(out, rb)
	}
	if err := it.Err(); err != nil {
		return out, kerr.CorruptMessage
	}
	return out, nil
}

// logBatches are the batches' offsets, for Acquire.
func logBatches(rbs []readBatch) []LogBatch {
	out := make([]LogBatch, len(rbs))
	for i := range rbs {
		out[i] = rbs[i].LogBatch
	}
	return out
}

// recordsFor returns the bytes of the batches holding any acquired offset
// (Kafka's ShareFetchUtils slices the fetched records the same way), one
// slice of the read when they are consecutive.
func recordsFor(data []byte, rbs []readBatch, acquired []AcquiredRange) []byte {
	var out []byte
	startPos, endPos, copied := -1, -1, false
	j := 0
	for _, b := range rbs {
		for j < len(acquired) && acquired[j].Last < b.First {
			j++
		}
		if j == len(acquired) {
			break
		}
		if acquired[j].First > b.Last {
			continue
		}
		switch {
		case startPos < 0:
			startPos, endPos = b.pos, b.end
		case b.pos == endPos && !copied:
			endPos = b.end
		default:
			if !copied {
				out = append(out, data[startPos:endPos]...)
				copied = true
			}
			out = append(out, data[b.pos:b.end]...)
		}
	}
	if copied {
		return out
	}
	if startPos < 0 {
		return nil
	}
	return data[startPos:endPos]
}
