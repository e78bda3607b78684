package fetcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
)

// DefaultBackoff is replica.fetch.backoff.ms.
const DefaultBackoff = time.Second

// Config is a Fetcher's dependencies.
type Config struct {
	// Name identifies the fetcher in logs (Kafka's thread name).
	Name     string
	EndPoint LeaderEndPoint
	// Replicas finds the local replica of a partition; an error means it
	// is gone (the partition is then marked failed).
	Replicas func(tp storage.TopicPartition) (Replica, error)
	Clock    clock.Clock
	// Backoff is how long a partition waits after an error, and how long
	// an idle fetcher sleeps (replica.fetch.backoff.ms).
	Backoff time.Duration
	Logger  *slog.Logger
	// Failed collects the partitions given up on; nil gives the fetcher
	// its own set.
	Failed *FailedPartitions
	// AwaitMetadata, when set, runs before each round and waits for the
	// metadata this broker is applying at that moment, if any, so the
	// round carries the partitions it assigns (see replication's
	// follower_nudge.go). It must return when ctx ends.
	AwaitMetadata func(ctx context.Context)
	// Quota is the follower replication throttle (KIP-73); nil throttles
	// nothing. The mirror's fetchers have none.
	Quota Quota
}

// Quota is a follower replication throttle (Kafka's ReplicaQuota as
// ReplicaFetcherThread uses it): a fetch leaves out a throttled partition
// that is not in sync while the quota is exceeded, and the bytes fetched
// for throttled partitions are recorded.
type Quota interface {
	IsThrottled(tp storage.TopicPartition) bool
	IsQuotaExceeded() bool
	Record(bytes int64)
}

// Fetcher copies partitions from one leader (Kafka's AbstractFetcherThread
// without the thread: Run or DoWork drive it). Its methods are safe for
// concurrent use; the step methods (Poll*, Complete*) are meant to be
// called by one driver at a time, one request outstanding.
type Fetcher struct {
	cfg    Config
	ep     LeaderEndPoint
	logger *slog.Logger

	// mu is Kafka's partitionMapLock: it guards the states, and appends
	// and truncations run under it, so RemovePartitions returning means
	// the fetcher no longer touches those partitions' logs.
	mu     sync.Mutex
	states map[storage.TopicPartition]PartitionState
	// order is the iteration order of the states (Kafka's PartitionStates,
	// a LinkedHashMap): a partition that got data moves to the end so the
	// next fetch serves the others first.
	order []storage.TopicPartition
	wake  chan struct{}
}

// New returns a fetcher with no partitions.
func New(cfg Config) *Fetcher {
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Failed == nil {
		cfg.Failed = &FailedPartitions{}
	}
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("fetcher-%d", cfg.EndPoint.Broker().ID)
	}
	return &Fetcher{
		cfg:    cfg,
		ep:     cfg.EndPoint,
		logger: cfg.Logger.With("fetcher", cfg.Name),
		states: map[storage.TopicPartition]PartitionState{},
		wake:   make(chan struct{}, 1),
	}
}

// shouldThrottle says whether the next fetch leaves tp out (Kafka's
// ReplicaFetcherThread.shouldFollowerThrottle): only a replica that is not
// in sync is held back, so the ISR's followers, and acks=all, never wait on
// a throttle. quotaExceeded is asked once per fetch, only when needed.
func (f *Fetcher) shouldThrottle(tp storage.TopicPartition, st PartitionState, quotaExceeded func() bool) bool {
	q := f.cfg.Quota
	return q != nil && !st.IsReplicaInSync() && q.IsThrottled(tp) && quotaExceeded()
}

// EndPoint is the leader endpoint the fetcher uses.
func (f *Fetcher) EndPoint() LeaderEndPoint { return f.ep }

// Name is the fetcher's name.
func (f *Fetcher) Name() string { return f.cfg.Name }

func (f *Fetcher) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// AddPartitions starts fetching the partitions, or keeps the state of one
// already fetched in the same leader epoch (Kafka's addPartitions with
// partitionFetchState). With truncation on fetch a replica whose log has
// epochs fetches at once from InitOffset with its latest epoch as
// LastFetchedEpoch, and the leader tells it where it diverged; otherwise
// it truncates first. A negative InitOffset starts from the log end offset.
func (f *Fetcher) AddPartitions(initial map[storage.TopicPartition]InitialFetchState) {
	tps := sortedKeys(initial)
	f.cfg.Failed.remove(tps...)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, tp := range tps {
		in := initial[tp]
		if cur, ok := f.states[tp]; ok && cur.CurrentLeaderEpoch == in.CurrentLeaderEpoch {
			continue
		}
		st := PartitionState{TopicID: in.TopicID, FetchOffset: in.InitOffset, Lag: -1,
			CurrentLeaderEpoch: in.CurrentLeaderEpoch, LastFetchedEpoch: NoEpoch, Phase: Truncating}
		if r, err := f.cfg.Replicas(tp); err == nil {
			if st.FetchOffset < 0 {
				st.FetchOffset = r.LogEndOffset()
			}
			if ep, ok := r.LatestEpoch(); ok && f.ep.IsTruncationOnFetchSupported() {
				st.Phase, st.LastFetchedEpoch = Fetching, ep
			}
		}
		f.setState(tp, st, true)
		f.logger.Debug("added partition", "partition", tp.String(), "state", st.String())
	}
	f.signal()
}

// RemovePartitions stops fetching the partitions and returns their last
// states. When it returns no append or truncation of theirs is running.
func (f *Fetcher) RemovePartitions(tps []storage.TopicPartition) map[storage.TopicPartition]PartitionState {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[storage.TopicPartition]PartitionState{}
	for _, tp := range tps {
		if st, ok := f.states[tp]; ok {
			out[tp] = st
			f.deleteState(tp)
		}
	}
	return out
}

// RemoveAllPartitions stops fetching everything and returns the states.
func (f *Fetcher) RemoveAllPartitions() map[storage.TopicPartition]PartitionState {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.states
	f.states = map[storage.TopicPartition]PartitionState{}
	f.order = nil
	return out
}

// PartitionCount is the number of partitions fetched.
func (f *Fetcher) PartitionCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.states)
}

// Partitions returns the partitions fetched, in fetch order.
func (f *Fetcher) Partitions() []storage.TopicPartition {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.order)
}

// State returns a partition's fetch state.
func (f *Fetcher) State(tp storage.TopicPartition) (PartitionState, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.states[tp]
	return st, ok
}

// setState stores a state; moveToEnd is Kafka's updateAndMoveToEnd.
// f.mu is held.
func (f *Fetcher) setState(tp storage.TopicPartition, st PartitionState, moveToEnd bool) {
	if _, ok := f.states[tp]; ok && moveToEnd {
		f.order = slices.DeleteFunc(f.order, func(x storage.TopicPartition) bool { return x == tp })
		f.order = append(f.order, tp)
	} else if !ok {
		f.order = append(f.order, tp)
	}
	f.states[tp] = st
}

func (f *Fetcher) deleteState(tp storage.TopicPartition) {
	delete(f.states, tp)
	f.order = slices.DeleteFunc(f.order, func(x storage.TopicPartition) bool { return x == tp })
}

// delayPartitions backs the partitions off (Kafka's delayPartitions);
// a partition already delayed keeps its deadline. f.mu is held.
func (f *Fetcher) delayPartitions(tps []storage.TopicPartition) {
	now := f.cfg.Clock.Now()
	for _, tp := range tps {
		st, ok := f.states[tp]
		if !ok || st.IsDelayed(now) {
			continue
		}
		st.DelayedUntil = now.Add(f.cfg.Backoff)
		f.setState(tp, st, true)
	}
}

// markPartitionFailed gives up on a partition until it is added again.
// f.mu is held.
func (f *Fetcher) markPartitionFailed(tp storage.TopicPartition, err error) {
	f.cfg.Failed.add(tp)
	f.deleteState(tp)
	f.logger.Warn("partition marked as failed", "partition", tp.String(), "err", err)
}

// onPartitionFenced handles FENCED_LEADER_EPOCH: when the request carried
// the epoch the partition still follows, the leader is ahead of this
// replica's metadata, so it waits for the new epoch (failed until added
// again); otherwise the state moved on meanwhile and it retries. It
// reports whether to retry. f.mu is held.
func (f *Fetcher) onPartitionFenced(tp storage.TopicPartition, requestEpoch int32) bool {
	st, ok := f.states[tp]
	if !ok {
		return false
	}
	if requestEpoch == st.CurrentLeaderEpoch {
		f.markPartitionFailed(tp, fmt.Errorf("leader epoch %d is fenced by the leader; awaiting new metadata", requestEpoch))
		return false
	}
	return true
}

// latestEpoch is the replica's latest epoch or NoEpoch.
func latestEpoch(r Replica) int32 {
	if ep, ok := r.LatestEpoch(); ok {
		return ep
	}
	return NoEpoch
}

// doTruncate truncates a partition's log; failures mark it failed.
// f.mu is held.
func (f *Fetcher) doTruncate(tp storage.TopicPartition, ts OffsetTruncationState) bool {
	r, err := f.cfg.Replicas(tp)
	if err == nil {
		f.logger.Info("truncating", "partition", tp.String(), "offset", ts.Offset, "completed", ts.TruncationCompleted,
			"logEndOffset", r.LogEndOffset())
		_, err = r.TruncateTo(ts.Offset)
	}
	if err != nil {
		f.markPartitionFailed(tp, fmt.Errorf("truncating to %d: %w", ts.Offset, err))
		return false
	}
	return true
}

// updateFetchOffsetAndMaybeMarkTruncationComplete moves truncated
// partitions on (Kafka's method of the same name): the fetch offset is the
// truncation offset and the last fetched epoch the log's latest; with
// truncation on fetch they fetch next (the leader reports any remaining
// divergence), otherwise they keep truncating until the rules say done.
// f.mu is held.
func (f *Fetcher) updateFetchOffsetAndMaybeMarkTruncationComplete(offsets map[storage.TopicPartition]OffsetTruncationState) {
	for _, tp := range sortedKeys(offsets) {
		ts := offsets[tp]
		st, ok := f.states[tp]
		if !ok {
			continue
		}
		r, err := f.cfg.Replicas(tp)
		if err != nil {
			f.markPartitionFailed(tp, err)
			continue
		}
		st.FetchOffset, st.LastFetchedEpoch = ts.Offset, latestEpoch(r)
		st.Phase = Truncating
		if f.ep.IsTruncationOnFetchSupported() || ts.TruncationCompleted {
			st.Phase = Fetching
		}
		f.setState(tp, st, false)
	}
}

// maybeTruncateToEpochEndOffsets truncates the partitions the leader
// answered for (Kafka's method of the same name). requestEpochs are the
// current leader epochs the answers were asked with (nil for diverging
// epochs from fetch answers, checked by the caller). f.mu is held.
func (f *Fetcher) maybeTruncateToEpochEndOffsets(answers map[storage.TopicPartition]EpochEndOffset,
	requestEpochs map[storage.TopicPartition]int32) {
	offsets := map[storage.TopicPartition]OffsetTruncationState{}
	var retry []storage.TopicPartition
	for _, tp := range sortedKeys(answers) {
		ans := answers[tp]
		st, ok := f.states[tp]
		if !ok {
			continue // removed while the request was out
		}
		switch ans.ErrorCode {
		case 0:
			r, err := f.cfg.Replicas(tp)
			if err != nil {
				f.markPartitionFailed(tp, err)
				continue
			}
			ts := OffsetTruncation(ans, st.FetchOffset, r)
			if f.doTruncate(tp, ts) {
				offsets[tp] = ts
			}
		case kerr.FencedLeaderEpoch.Code:
			epoch, ok := requestEpochs[tp]
			if !ok {
				epoch = st.CurrentLeaderEpoch
			}
			if f.onPartitionFenced(tp, epoch) {
				retry = append(retry, tp)
			}
		default:
			f.logger.Info("retrying the leader epoch request after an error", "partition", tp.String(), "code", ans.ErrorCode)
			retry = append(retry, tp)
		}
	}
	f.delayPartitions(retry)
	f.updateFetchOffsetAndMaybeMarkTruncationComplete(offsets)
}

func sortedKeys[V any](m map[storage.TopicPartition]V) []storage.TopicPartition {
	out := make([]storage.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	slices.SortFunc(out, compareTP)
	return out
}

// retriableAppendError sorts an append failure the way Kafka's
// processFetchRequest does: corrupt or invalid data is retried (it may be
// a transient partial read), anything else fails the partition.
func retriableAppendError(err error) bool {
	return errors.Is(err, kerr.CorruptMessage) || errors.Is(err, kerr.InvalidRecord)
}
