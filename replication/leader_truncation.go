package replication

// A leader's log is truncated only by the mirror (KIP-1279: the last
// mirrored epoch truncation in PREPARING, and the source's divergence
// while MIRRORING). Kafka's leaders never truncate, so the leader state
// assumes the log only grows; these are the adjustments that keep it
// consistent when it does not. Followers find the truncation themselves
// with their next fetch: their LastFetchedEpoch gets a DivergingEpoch
// (endOffsetForEpoch answers from the truncated log) or their offset is
// out of range.

// leaderTruncation is what the last truncation of this leader's log left.
type leaderTruncation struct {
	leaderEpoch int32
	// logEndOffset is the lowest log end offset a truncation left in
	// leaderEpoch: the epoch starts no later than there.
	logEndOffset int64
	// fetchSeq is Partition.fetchSeq when the truncation happened:
	// follower fetches numbered up to it read the log before it.
	fetchSeq uint64
}

// afterLeaderTruncation records a truncation of the leader's log to
// leo in st's epoch: follower progress above leo is lowered to it (the
// high watermark, the ISR and ReplicasAt must not count offsets a
// follower holds from before the truncation), fetches already reading are
// marked stale, and the epoch's start offset is capped at leo so that
// followers can still join the ISR and ListOffsets answers. storage lowers
// the high watermark to the new log end itself. leaderIsrUpdateLock is held
// exclusively.
func (p *Partition) afterLeaderTruncation(st *partitionState, leo int64) {
	t := &leaderTruncation{leaderEpoch: st.leaderEpoch, logEndOffset: leo, fetchSeq: p.fetchSeq.Load()}
	if prev := p.truncation.Load(); prev != nil && prev.leaderEpoch == st.leaderEpoch {
		t.logEndOffset = min(t.logEndOffset, prev.logEndOffset)
	}
	p.truncation.Store(t)
	for _, r := range *p.followers.Load() {
		r.clampToLeaderEnd(leo)
	}
}

// staleFetch reports whether the follower fetch numbered seq started
// before the last truncation of this leader's log. leaderIsrUpdateLock is
// held (either way).
func (p *Partition) staleFetch(seq uint64) bool {
	t := p.truncation.Load()
	return t != nil && seq <= t.fetchSeq
}

// epochStartOffset is where the current leader epoch starts in the log:
// the log end offset at the election, or lower where the mirror truncated
// the log since.
func (p *Partition) epochStartOffset(st *partitionState) int64 {
	if t := p.truncation.Load(); t != nil && t.leaderEpoch == st.leaderEpoch && st.leaderEpochStartOffset >= 0 {
		return min(st.leaderEpochStartOffset, t.logEndOffset)
	}
	return st.leaderEpochStartOffset
}
