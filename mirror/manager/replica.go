package manager

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// mirrorReplica is what the mirror fetcher writes for one partition: the
// LeaderPartition bound to the AddFetcher's leader epoch, with the checks a
// mirror needs before the follower append path takes source batches byte
// for byte. It answers for the fetcher started by ref.
type mirrorReplica struct {
	LeaderPartition
	tp     storage.TopicPartition
	ref    partition.Ref
	leader fetcher.BrokerEndPoint
	report func(partition.Event)
	stats  *mirrorCounters
	// ahead is the highest source epoch reported above the leader epoch,
	// so SourceEpochAhead is stepped once per epoch.
	ahead atomic.Int32
}

// Errors the wrapper fails an append with. Neither wraps the kerr codes
// the fetcher core retries (CORRUPT_MESSAGE, INVALID_RECORD): the machine
// decides, through FetchFailed, and the core drops the partition.
var (
	errCorruptBatch = errors.New("mirror: corrupt batch from the source")
	errEpochRegress = errors.New("mirror: source batch epochs go backwards")
	errSourceAhead  = errors.New("mirror: source batch epoch above the destination leader epoch")
)

// LatestEpoch is the epoch of the last batch in the log, not the epoch
// cache's newest entry: the fetch's LastFetchedEpoch must be an epoch of
// data the source can have, never the destination's own leadership.
func (r *mirrorReplica) LatestEpoch() (int32, bool) {
	e := r.LeaderPartition.LastBatchEpoch()
	return e, e >= 0
}

// AppendAsFollower checks the fetched batches' epochs from their headers and
// appends what may be: nothing when the epochs go backwards
// (FetchEpochRegressed) or the log's validation refuses a batch
// (FetchCorruptBatch: storage validates every batch, CRC included, before it
// writes any); the batches before the first one whose epoch is above the
// handle's leader epoch, the rest held back (fetcher.ErrRetryAppend) until
// the machine's epoch bump. The partition leader epoch field is outside the
// batch CRC, so reading it before validation is sound.
func (r *mirrorReplica) AppendAsFollower(records []byte) (storage.AppendInfo, error) {
	bound := r.LeaderPartition.LeaderEpoch()
	prev := r.LeaderPartition.LastBatchEpoch()
	cut := len(records)
	pos := 0
	for it := record.NewIter(records); ; {
		b, ok := it.Next()
		if !ok {
			break
		}
		e := b.PartitionLeaderEpoch()
		if e < prev {
			err := fmt.Errorf("%w: %s: batch at offset %d has epoch %d after epoch %d", errEpochRegress, r.tp, b.BaseOffset(), e, prev)
			r.report(partition.FetchFailed{Ref: r.ref, Kind: partition.FetchEpochRegressed, Err: err})
			return storage.AppendInfo{}, err
		}
		if e > bound && cut == len(records) {
			cut = pos
		}
		prev = e
		pos += len(b)
	}
	if cut == 0 {
		e := record.Batch(records).PartitionLeaderEpoch()
		if r.ahead.Load() < e {
			r.ahead.Store(e)
			r.report(partition.SourceEpochAhead{Ref: r.ref, Epoch: e})
		}
		return storage.AppendInfo{}, fmt.Errorf("%w: %s: epoch %d, leader epoch %d: %w", errSourceAhead, r.tp, e, bound, fetcher.ErrRetryAppend)
	}
	info, err := r.LeaderPartition.AppendAsFollower(records[:cut])
	if errors.Is(err, kerr.CorruptMessage) || errors.Is(err, kerr.InvalidRecord) {
		// Not returned as is: the core retries those codes, and a
		// source that sends a corrupt batch sends it again. The machine
		// decides, through FetchFailed, and the core drops the partition.
		err = fmt.Errorf("%w: %s at offset %d: %v", errCorruptBatch, r.tp, r.LeaderPartition.LogEndOffset(), err)
		r.report(partition.FetchFailed{Ref: r.ref, Kind: partition.FetchCorruptBatch, Err: err})
		return storage.AppendInfo{}, err
	}
	if err == nil {
		r.stats.bytes.Add(int64(cut))
		r.stats.records.Add(info.NumRecords)
	} else if reportAppendError(err) {
		// The core drops the partition on any other append error: told
		// nothing, the machine would show it MIRRORING while nothing is
		// mirrored. RECORD_LIST_TOO_LARGE is one: a source batch larger
		// than the destination's segment.bytes.
		r.report(partition.FetchFailed{Ref: r.ref, Kind: partition.FetchFatal, Err: err})
	}
	return info, err
}

// reportAppendError: an append error the machine must hear of, not one
// the core retries (ErrRetryAppend) nor a stale handle's (the leadership
// moved: the machine learns it from the metadata).
func reportAppendError(err error) bool {
	return !errors.Is(err, fetcher.ErrRetryAppend) && !errors.Is(err, kerr.FencedLeaderEpoch) && !errors.Is(err, kerr.NotLeaderForPartition)
}
