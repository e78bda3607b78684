package fetcher

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// TruncationRequest is an OffsetForLeaderEpoch round for the partitions
// that are truncating and have epochs.
type TruncationRequest struct {
	Partitions map[storage.TopicPartition]EpochRequest
}

// PollTruncation starts a truncation round (the first half of Kafka's
// maybeTruncate): partitions whose log has no leader epoch truncate to
// their fetch offset (the high watermark) at once; for the others it
// returns the OffsetForLeaderEpoch request to send, or nil.
func (f *Fetcher) PollTruncation() *TruncationRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.cfg.Clock.Now()
	withEpochs := map[storage.TopicPartition]EpochRequest{}
	hwOffsets := map[storage.TopicPartition]OffsetTruncationState{}
	for _, tp := range slices.Clone(f.order) {
		st := f.states[tp]
		if !st.IsTruncating(now) {
			continue
		}
		r, err := f.cfg.Replicas(tp)
		if err != nil {
			f.markPartitionFailed(tp, err)
			continue
		}
		if ep, ok := r.LatestEpoch(); ok {
			withEpochs[tp] = EpochRequest{CurrentLeaderEpoch: st.CurrentLeaderEpoch, LeaderEpoch: ep}
			continue
		}
		// Kafka's truncateToHighWatermark: without epochs the initial
		// fetch offset (the high watermark) is the only safe point.
		ts := OffsetTruncationState{Offset: st.FetchOffset, TruncationCompleted: true}
		if f.doTruncate(tp, ts) {
			hwOffsets[tp] = ts
		}
	}
	f.updateFetchOffsetAndMaybeMarkTruncationComplete(hwOffsets)
	if len(withEpochs) == 0 {
		return nil
	}
	return &TruncationRequest{Partitions: withEpochs}
}

// CompleteTruncation applies the leader's answer to a truncation round
// (Kafka's truncateToEpochEndOffsets): answers for partitions removed or
// moved to another leader epoch meanwhile are dropped; the rest truncate
// per OffsetTruncation. A request error backs every partition off.
func (f *Fetcher) CompleteTruncation(req *TruncationRequest, answers map[storage.TopicPartition]EpochEndOffset, err error) {
	if err != nil {
		f.logger.Warn("leader epoch request failed", "err", err)
		code := errorCode(err)
		answers = make(map[storage.TopicPartition]EpochEndOffset, len(req.Partitions))
		for tp := range req.Partitions {
			answers[tp] = EpochEndOffset{ErrorCode: code, LeaderEpoch: NoEpoch, EndOffset: -1}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	current := map[storage.TopicPartition]EpochEndOffset{}
	epochs := map[storage.TopicPartition]int32{}
	for tp, ans := range answers {
		asked, ok := req.Partitions[tp]
		if !ok {
			continue // not asked: Kafka treats it as a broken leader
		}
		st, ok := f.states[tp]
		if !ok || st.CurrentLeaderEpoch != asked.CurrentLeaderEpoch || st.Phase != Truncating {
			continue
		}
		current[tp] = ans
		epochs[tp] = asked.CurrentLeaderEpoch
	}
	f.maybeTruncateToEpochEndOffsets(current, epochs)
}

// PollFetch builds the next fetch of every partition ready to fetch (the
// first half of Kafka's maybeFetch), or returns nil.
func (f *Fetcher) PollFetch() *FetchRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.cfg.Clock.Now()
	var parts []FetchPartition
	exceeded, asked := false, false
	quotaExceeded := func() bool {
		if !asked {
			exceeded, asked = f.cfg.Quota.IsQuotaExceeded(), true
		}
		return exceeded
	}
	for _, tp := range slices.Clone(f.order) {
		st := f.states[tp]
		if !st.IsReadyForFetch(now) || f.shouldThrottle(tp, st, quotaExceeded) {
			continue
		}
		r, err := f.cfg.Replicas(tp)
		if err != nil {
			f.markPartitionFailed(tp, err)
			continue
		}
		last := st.LastFetchedEpoch
		if !f.ep.IsTruncationOnFetchSupported() {
			last = NoEpoch
		}
		parts = append(parts, FetchPartition{TP: tp, TopicID: st.TopicID, FetchOffset: st.FetchOffset,
			LogStartOffset: r.LogStartOffset(), CurrentLeaderEpoch: st.CurrentLeaderEpoch, LastFetchedEpoch: last})
	}
	if len(parts) == 0 {
		return nil
	}
	return f.ep.BuildFetch(parts)
}

// OffsetReset is a partition whose fetch offset the leader did not have
// (OFFSET_OUT_OF_RANGE); the driver asks the leader for its log start and
// end offsets and calls CompleteOffsetReset.
type OffsetReset struct {
	TP                 storage.TopicPartition
	CurrentLeaderEpoch int32
	FetchOffset        int64
}

// CompleteFetch processes a fetch answer (the second half of Kafka's
// processFetchRequest). Answers are used only for partitions still ready
// in the leader epoch and at the fetch offset they were asked with:
// data is appended and the high watermark and log start offset follow the
// leader's; a DivergingEpoch truncates; errors back the partition off or,
// when the leader fenced this epoch, fail it until new metadata. It
// returns the partitions whose offset was out of range. A request error
// backs off every partition of the fetcher.
func (f *Fetcher) CompleteFetch(req *FetchRequest, resp map[storage.TopicPartition]*FetchData, err error) []OffsetReset {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.logger.Warn("fetch failed", "leader", f.ep.Broker().String(), "err", err)
		f.delayPartitions(slices.Clone(f.order))
		return nil
	}
	now := f.cfg.Clock.Now()
	var retry []storage.TopicPartition
	var resets []OffsetReset
	diverging := map[storage.TopicPartition]EpochEndOffset{}
	for _, tp := range sortedKeys(resp) {
		data := resp[tp]
		sent, asked := req.Partitions[tp]
		st, ok := f.states[tp]
		if !asked || !ok || sent.FetchOffset != st.FetchOffset || sent.CurrentLeaderEpoch != st.CurrentLeaderEpoch ||
			!st.IsReadyForFetch(now) {
			// Removed, re-added or truncated while the request was out.
			continue
		}
		switch data.ErrorCode {
		case 0:
			if f.ep.IsTruncationOnFetchSupported() && data.DivergingEpoch.Epoch >= 0 && data.DivergingEpoch.EndOffset >= 0 {
				// Truncate, and leave the watermarks for the next
				// fetch, after the truncation (Kafka does the same).
				diverging[tp] = EpochEndOffset{LeaderEpoch: data.DivergingEpoch.Epoch, EndOffset: data.DivergingEpoch.EndOffset}
				continue
			}
			if err := f.processPartitionData(tp, st, data); err != nil {
				switch {
				case errors.Is(err, ErrRetryAppend):
					f.logger.Debug("the replica cannot take the fetched data yet; retrying", "partition", tp.String(),
						"offset", st.FetchOffset, "err", err)
					retry = append(retry, tp)
				case retriableAppendError(err):
					f.logger.Error("invalid records fetched; retrying", "partition", tp.String(), "offset", st.FetchOffset, "err", err)
					retry = append(retry, tp)
				default:
					f.markPartitionFailed(tp, err)
				}
			}
		case kerr.OffsetOutOfRange.Code:
			resets = append(resets, OffsetReset{TP: tp, CurrentLeaderEpoch: st.CurrentLeaderEpoch, FetchOffset: st.FetchOffset})
		case kerr.FencedLeaderEpoch.Code:
			if f.onPartitionFenced(tp, sent.CurrentLeaderEpoch) {
				retry = append(retry, tp)
			}
		default:
			// UNKNOWN_LEADER_EPOCH (the leader is behind this replica's
			// metadata), NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_*,
			// INCONSISTENT_TOPIC_ID and the rest: retry after a backoff.
			f.logger.Debug("fetch partition error", "partition", tp.String(), "code", data.ErrorCode)
			retry = append(retry, tp)
		}
	}
	if len(diverging) > 0 {
		f.maybeTruncateToEpochEndOffsets(diverging, nil)
	}
	f.delayPartitions(retry)
	return resets
}

// processPartitionData appends a partition's fetched data and follows the
// leader's high watermark and log start offset (Kafka's
// ReplicaFetcherThread.processPartitionData), then moves the fetch state
// on. f.mu is held.
func (f *Fetcher) processPartitionData(tp storage.TopicPartition, st PartitionState, data *FetchData) error {
	r, err := f.cfg.Replicas(tp)
	if err != nil {
		return err
	}
	if leo := r.LogEndOffset(); st.FetchOffset != leo {
		return fmt.Errorf("fetcher: offset mismatch for %s: fetch offset %d, log end offset %d", tp, st.FetchOffset, leo)
	}
	records := record.WholeBatches(data.RecordBatches)
	nextOffset := st.FetchOffset
	appended := false
	if len(records) > 0 {
		info, err := r.AppendAsFollower(records)
		if err != nil {
			return err
		}
		nextOffset, appended = info.LastOffset+1, true
		if q := f.cfg.Quota; q != nil && q.IsThrottled(tp) {
			q.Record(int64(len(records)))
		}
	}
	// Unlike Kafka, which sets the follower's high watermark to the
	// leader's even when it is lower (a new leader's can lag), only raise
	// it: a follower serving reads (KIP-392) never shows it shrinking, and
	// what it had was committed.
	r.MaybeIncrementHighWatermark(data.HighWatermark)
	if data.LogStartOffset >= 0 {
		if _, err := r.MaybeIncrementLogStartOffset(data.LogStartOffset); err != nil {
			f.logger.Warn("cannot follow the leader's log start offset", "partition", tp.String(),
				"logStartOffset", data.LogStartOffset, "err", err)
		}
	}
	lag := max(0, data.HighWatermark-nextOffset)
	if appended || st.Lag < 0 {
		if appended {
			st.LastFetchedEpoch = latestEpoch(r)
		}
		st.FetchOffset, st.Lag, st.Phase = nextOffset, lag, Fetching
		f.setState(tp, st, true)
	}
	return nil
}

// CompleteOffsetReset finishes an OFFSET_OUT_OF_RANGE (Kafka's
// handleOutOfRangeError and fetchOffsetAndTruncate) with the leader's log
// start and end offsets, or the error asking for them.
func (f *Fetcher) CompleteOffsetReset(r OffsetReset, leaderStart, leaderEnd OffsetAndEpoch, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.states[r.TP]
	if !ok || st.CurrentLeaderEpoch != r.CurrentLeaderEpoch || st.FetchOffset != r.FetchOffset {
		return
	}
	if err != nil {
		if errors.Is(err, kerr.FencedLeaderEpoch) {
			if f.onPartitionFenced(r.TP, r.CurrentLeaderEpoch) {
				f.delayPartitions([]storage.TopicPartition{r.TP})
			}
			return
		}
		f.logger.Info("cannot get the leader's offsets to reset the fetch offset", "partition", r.TP.String(), "err", err)
		f.delayPartitions([]storage.TopicPartition{r.TP})
		return
	}
	rep, err := f.cfg.Replicas(r.TP)
	if err != nil {
		f.markPartitionFailed(r.TP, err)
		return
	}
	replicaEnd := rep.LogEndOffset()
	action, offset := ResetFetchOffset(replicaEnd, leaderStart.Offset, leaderEnd.Offset)
	switch action {
	case ResetTruncate:
		f.logger.Warn("the leader's log ends before this replica's; truncating to it", "partition", r.TP.String(),
			"logEndOffset", replicaEnd, "leaderEndOffset", leaderEnd.Offset)
		_, err = rep.TruncateTo(offset)
	case ResetTruncateFully:
		f.logger.Warn("the leader's log starts after this replica's ends; restarting the log there", "partition", r.TP.String(),
			"logEndOffset", replicaEnd, "leaderStartOffset", leaderStart.Offset)
		err = rep.TruncateFullyAndStartAt(offset)
	}
	if err != nil {
		f.logger.Error("resetting the fetch offset failed", "partition", r.TP.String(), "err", err)
		f.delayPartitions([]storage.TopicPartition{r.TP})
		return
	}
	st.FetchOffset, st.Lag, st.Phase, st.LastFetchedEpoch = offset, max(0, leaderEnd.Offset-offset), Fetching, latestEpoch(rep)
	f.setState(r.TP, st, true)
}

// errorCode maps a request error to the code each partition gets.
func errorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}
