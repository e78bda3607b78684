package replication

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/storage"
)

// readResult is one partition's read (Kafka's LogReadResult). The offsets
// are -1 when errCode is set.
type readResult struct {
	errCode                int16
	info                   storage.FetchDataInfo
	hw, lso, logStart, leo int64
	diverging              *epochEndOffset
	// partition and state are what the read saw, for the long poll's
	// change detection.
	partition *Partition
	state     *partitionState
}

type epochEndOffset struct {
	epoch     int32
	endOffset int64
}

func errorRead(code int16) readResult {
	return readResult{errCode: code, hw: -1, lso: -1, logStart: -1, leo: -1}
}

// needsCurrentLeader says whether the answer should tell the client who
// leads now (KIP-951: on NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH).
func (rr *readResult) needsCurrentLeader() bool {
	return rr.errCode == kerr.NotLeaderForPartition.Code || rr.errCode == kerr.FencedLeaderEpoch.Code
}

// fetchMessages reads the partitions and, when there is less than MinBytes
// and nothing to report, parks the request until there is (Kafka's
// ReplicaManager.fetchMessages with its DelayedFetch). It runs on the
// request's goroutine, never a network loop.
func (r *ReplicaManager) fetchMessages(ctx context.Context, params *fetchParams, parts []fetchPartition) []readResult {
	img := r.currentImage()
	results := r.readFromLog(params, parts, img)
	if params.maxWait <= 0 || len(parts) == 0 || fetchSatisfied(params, results) {
		return results
	}
	// Parked: the connection's next fetch may start meanwhile.
	reqctx.Unmute(ctx)
	watched := make([]*Partition, 0, len(results))
	for _, res := range results {
		if res.partition != nil {
			watched = append(watched, res.partition)
		}
	}
	last := results
	// A follower's fetch also ends when it is nudged: one of its
	// partitions not in this request got data (follower_nudge.go).
	nudges := r.watchNudges(params)
	tryComplete := func() bool {
		if nudges.nudged() {
			last = r.readFromLog(params, parts, r.currentImage())
			return true
		}
		// Re-read only when something a read depends on moved (Kafka's
		// DelayedFetch.tryComplete compares offsets the same way).
		if !r.fetchInputsChanged(last, parts) {
			return false
		}
		last = r.readFromLog(params, parts, r.currentImage())
		return fetchSatisfied(params, last)
	}
	kind := watchConsumerFetch
	if params.isFromFollower() {
		kind = watchFollowerFetch
	}
	if r.awaitWith(ctx, kind, watched, nudges.watchers(), params.maxWait, tryComplete) {
		return last
	}
	// Expired: answer with what there is now (DelayedFetch.onComplete).
	return r.readFromLog(params, parts, r.currentImage())
}

// fetchSatisfied is the immediate-answer test: enough bytes, or an error
// or diverging epoch the fetcher must hear about at once.
func fetchSatisfied(params *fetchParams, results []readResult) bool {
	var n int64
	for i := range results {
		if results[i].errCode != 0 || results[i].diverging != nil {
			return true
		}
		n += int64(results[i].info.Records.Size)
	}
	return n >= int64(params.minBytes)
}

// fetchInputsChanged reports whether any partition's role or offsets moved
// since the results were read.
func (r *ReplicaManager) fetchInputsChanged(results []readResult, parts []fetchPartition) bool {
	t := r.table.Load()
	for i := range results {
		res := &results[i]
		p := t.byTP[parts[i].tp()]
		if p != res.partition {
			return true
		}
		if p == nil {
			continue
		}
		l := p.Log()
		if p.state.Load() != res.state || l.LogEndOffset() != res.leo || l.HighWatermark() != res.hw ||
			l.LastStableOffset() != res.lso || l.LogStartOffset() != res.logStart {
			return true
		}
	}
	return false
}

// readFromLog reads each partition in order, within MaxBytes overall; the
// first partition with data may exceed the limits by one batch (Kafka's
// ReplicaManager.readFromLog).
func (r *ReplicaManager) readFromLog(params *fetchParams, parts []fetchPartition, img *raftmeta.Image) []readResult {
	out := make([]readResult, len(parts))
	limit := params.maxBytes
	minOneMessage := true
	for i := range parts {
		out[i] = r.read(params, &parts[i], img, limit, minOneMessage)
		if n := out[i].info.Records.Size; n > 0 {
			minOneMessage = false
			limit = max(0, limit-n)
		}
	}
	return out
}

// read reads one partition (ReplicaManager.read + Partition.fetchRecords).
func (r *ReplicaManager) read(params *fetchParams, fp *fetchPartition, img *raftmeta.Image, limit int32, minOneMessage bool) readResult {
	if fp.topic == "" {
		return errorRead(kerr.UnknownTopicID.Code)
	}
	p, err := r.getPartitionOrError(fp.tp(), img)
	if err != nil {
		return errorRead(errorCode(err))
	}
	if fp.topicID != ([16]byte{}) && !p.topicID.IsZero() && p.topicID != storage.TopicID(fp.topicID) {
		return errorRead(kerr.InconsistentTopicID.Code)
	}
	log, st, err := p.localLogWithEpoch(fp.currentLeaderEpoch, params.requireLeader)
	if err != nil {
		res := errorRead(errorCode(err))
		res.partition, res.state = p, st
		return res
	}
	if params.isFromFollower() && !p.isAssignedFollower(params.replicaID) {
		// Kafka's followerReplicaOrThrow: the requester is not a replica
		// in this epoch (yet), so it should retry.
		code := kerr.NotLeaderForPartition.Code
		if fp.currentLeaderEpoch >= 0 {
			code = kerr.UnknownLeaderEpoch.Code
		}
		res := errorRead(code)
		res.partition, res.state = p, st
		return res
	}
	var seq uint64
	if params.isFromFollower() {
		// Numbered before the read, so a truncation of this leader's log
		// that lands during the read makes the fetch stale.
		seq = p.fetchSeq.Add(1)
	}
	res := p.readRecords(log, st, params, fp, min(fp.maxBytes, limit), minOneMessage)
	res.partition, res.state = p, st
	if params.isFromFollower() && res.info.Records.Size > 0 && r.shouldLeaderThrottle(st, fp.tp(), params.replicaID) {
		// KIP-73: the leader quota is spent; the follower, catching up
		// outside the ISR, gets no data this time but its fetch still
		// counts as progress below (Kafka's ReplicaManager.readFromLog
		// answers an empty record set).
		res.info.Records, res.info.AbortedTxns = storage.FileSlice{}, nil
	}
	if params.isFromFollower() && res.errCode == 0 && res.diverging == nil {
		// The follower has everything below its fetch offset: that is its
		// log end offset (Kafka's updateFollowerFetchState).
		if !p.updateFollowerFetchState(params.replicaID, fp.fetchOffset, fp.logStartOffset, res.leo, params.replicaEpoch, r.nowMs(), seq) {
			res = errorRead(kerr.NotLeaderForPartition.Code)
			res.partition, res.state = p, st
		}
	}
	return res
}

// readRecords checks the fetcher's last fetched epoch against the log and
// reads (Kafka's Partition.readRecords).
func (p *Partition) readRecords(log *storage.Log, st *partitionState, params *fetchParams, fp *fetchPartition, maxBytes int32, minOneMessage bool) readResult {
	if fp.lastFetchedEpoch >= 0 {
		ep, end, ok := p.endOffsetForEpoch(st, fp.lastFetchedEpoch)
		if !ok {
			// The epoch is unknown here: the fetcher must reset
			// (Kafka throws OffsetOutOfRangeException).
			return errorRead(kerr.OffsetOutOfRange.Code)
		}
		start, leo := log.LogStartOffset(), log.LogEndOffset()
		if fp.fetchOffset < start {
			return errorRead(kerr.OffsetOutOfRange.Code)
		}
		if ep < fp.lastFetchedEpoch || end < fp.fetchOffset {
			// KIP-320/595: the fetcher's log diverged at epoch ep, which
			// ends at end here; it truncates and fetches again.
			hw := log.HighWatermark()
			return readResult{hw: hw, lso: log.LastStableOffset(), logStart: start, leo: leo,
				diverging: &epochEndOffset{epoch: ep, endOffset: end}}
		}
	}
	info, err := log.Read(fp.fetchOffset, max(maxBytes, 0), params.isolation, minOneMessage)
	if err != nil {
		var oor *storage.OffsetOutOfRangeError
		if errors.As(err, &oor) {
			return errorRead(kerr.OffsetOutOfRange.Code)
		}
		return errorRead(errorCode(err))
	}
	if info.FirstEntryIncomplete {
		// Fetch v3+ consumers make progress without a partial batch
		// (ReplicaManager.checkFetchDataInfo).
		info.Records = storage.FileSlice{}
		info.AbortedTxns = nil
	}
	return readResult{info: info, hw: info.HighWatermark, lso: info.LastStableOffset, logStart: info.LogStartOffset, leo: info.LogEndOffset}
}
