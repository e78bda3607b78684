package fetcher

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// LeaderEndPoint is how a fetcher reaches the leader it copies from
// (Kafka's LeaderEndPoint). The replica manager's implementation talks the
// Kafka protocol to the leader broker with this node's replica id; the
// mirror's talks to a broker of another cluster; tests use a mock.
//
// The IO methods are called from one goroutine at a time (the fetcher's).
// Errors they return are connection-level: the fetcher backs off every
// partition involved and retries.
type LeaderEndPoint interface {
	// Broker is the leader this endpoint talks to.
	Broker() BrokerEndPoint
	// IsTruncationOnFetchSupported reports whether fetches carry
	// LastFetchedEpoch and the leader answers DivergingEpoch (KIP-595,
	// Fetch v12+). Without it a replica finds divergence with
	// OffsetForLeaderEpoch before fetching.
	IsTruncationOnFetchSupported() bool
	// BuildFetch builds the fetch of the given partitions, every one ready
	// to fetch, in the order given (the leader fills the response in
	// request order, so the fetcher rotates it for fairness).
	BuildFetch(parts []FetchPartition) *FetchRequest
	// Fetch sends a request BuildFetch built and returns each partition's
	// answer. Partitions the leader left out are simply absent.
	Fetch(ctx context.Context, req *FetchRequest) (map[storage.TopicPartition]*FetchData, error)
	// FetchEpochEndOffsets asks where the given epochs end in the leader's
	// log (OffsetForLeaderEpoch).
	FetchEpochEndOffsets(ctx context.Context, parts map[storage.TopicPartition]EpochRequest) (map[storage.TopicPartition]EpochEndOffset, error)
	// FetchEarliestOffset returns the leader's log start offset
	// (ListOffsets EARLIEST). A partition error comes back as its kerr
	// error.
	FetchEarliestOffset(ctx context.Context, tp storage.TopicPartition, currentLeaderEpoch int32) (OffsetAndEpoch, error)
	// FetchLatestOffset returns the leader's log end offset (ListOffsets
	// LATEST as a replica).
	FetchLatestOffset(ctx context.Context, tp storage.TopicPartition, currentLeaderEpoch int32) (OffsetAndEpoch, error)
	// Close releases the connection; the endpoint is not used afterwards.
	Close() error
}

// FetchData is one partition of a fetch answer: the Kafka protocol's
// FetchResponse partition, with the record data in RecordBatches.
type FetchData = kmsg.FetchResponseTopicPartition

// FetchPartition is what a fetch asks of one partition (Kafka's
// FetchRequest.PartitionData).
type FetchPartition struct {
	TP                 storage.TopicPartition
	TopicID            [16]byte
	FetchOffset        int64
	LogStartOffset     int64
	CurrentLeaderEpoch int32
	// LastFetchedEpoch is NoEpoch when the replica has none or the
	// endpoint does not truncate on fetch.
	LastFetchedEpoch int32
}

// FetchRequest is a built fetch (Kafka's ReplicaFetch): the partitions it
// asks for, by which the answer is matched to the state it was sent from,
// and the protocol request.
type FetchRequest struct {
	Partitions map[storage.TopicPartition]FetchPartition
	// Request is the Kafka request; endpoints that do not speak the Kafka
	// protocol (test mocks) may leave it nil.
	Request *kmsg.FetchRequest
}

// EpochRequest asks where LeaderEpoch ends (Kafka's
// OffsetForLeaderPartition); CurrentLeaderEpoch fences the request.
type EpochRequest struct {
	CurrentLeaderEpoch int32
	LeaderEpoch        int32
}

// EpochEndOffset is an OffsetForLeaderEpoch answer for one partition: the
// largest epoch <= the requested one the leader knows and where it ends,
// -1/-1 when the leader knows none, or an error code.
type EpochEndOffset struct {
	ErrorCode   int16
	LeaderEpoch int32
	EndOffset   int64
}

// OffsetAndEpoch is a ListOffsets answer.
type OffsetAndEpoch struct {
	Offset      int64
	LeaderEpoch int32
}

// ErrRetryAppend is what a Replica's AppendAsFollower returns (wrapped)
// when it cannot take the fetched data yet, though the data is valid: the
// mirror's replica refuses batches whose leader epoch is above the
// destination leader's own until the destination's epoch is bumped (KIP-1279:
// the destination leader epoch stays >= the source's). The fetcher then
// keeps the partition at the same fetch offset, appends nothing, backs it
// off for the fetch backoff and fetches the same offset again. Any other
// append error (except corrupt data) fails the partition.
var ErrRetryAppend = errors.New("fetcher: the replica cannot append the fetched data yet")

// Replica is the local replica a fetcher writes: the callbacks of Kafka's
// ReplicaFetcherThread into the log. *storage.Log implements it; the
// replica manager wraps it to hold the partition's locks and wake waiters.
type Replica interface {
	LogStartOffset() int64
	LogEndOffset() int64
	// LatestEpoch is the newest leader epoch in the log's epoch cache.
	LatestEpoch() (int32, bool)
	// EndOffsetForEpoch is the largest epoch <= epoch in the log and where
	// it ends; ok is false when the log knows none.
	EndOffsetForEpoch(epoch int32) (ep int32, endOffset int64, ok bool)
	// AppendAsFollower appends batches that carry their offsets and
	// epochs, starting at the log end offset.
	AppendAsFollower(records []byte) (storage.AppendInfo, error)
	// TruncateTo removes every record at or after offset.
	TruncateTo(offset int64) (bool, error)
	// TruncateFullyAndStartAt empties the log and restarts it at offset.
	TruncateFullyAndStartAt(offset int64) error
	// MaybeIncrementHighWatermark raises the high watermark to hw (capped
	// at the log end offset).
	MaybeIncrementHighWatermark(hw int64) (int64, bool)
	// MaybeIncrementLogStartOffset follows the leader's log start offset.
	MaybeIncrementLogStartOffset(offset int64) (bool, error)
}

var _ Replica = (*storage.Log)(nil)
