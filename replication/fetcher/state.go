package fetcher

import (
	"fmt"
	"time"
)

// Phase is what a partition's fetcher does next (Kafka's ReplicaState).
type Phase int8

const (
	// Truncating: the log may have diverged from the leader's; find out
	// where with OffsetForLeaderEpoch (or, without epochs, truncate to the
	// high watermark) before fetching.
	Truncating Phase = iota + 1
	// Fetching: fetch from FetchOffset.
	Fetching
)

func (p Phase) String() string {
	switch p {
	case Truncating:
		return "Truncating"
	case Fetching:
		return "Fetching"
	}
	return fmt.Sprintf("Phase(%d)", int8(p))
}

// NoEpoch is an unknown leader epoch (Kafka's empty Option / -1 on the wire).
const NoEpoch int32 = -1

// PartitionState is one partition's fetch state (Kafka's
// PartitionFetchState). Values are replaced whole, never mutated in place.
type PartitionState struct {
	TopicID [16]byte
	// FetchOffset is the next offset to fetch: the replica's log end offset
	// while Fetching.
	FetchOffset int64
	// Lag is how far the last fetch ended below the leader's high
	// watermark, -1 before the first fetch (Kafka's Option lag).
	Lag int64
	// CurrentLeaderEpoch is the leader epoch the replica follows; requests
	// carry it so a leader in another epoch fences them (KIP-320).
	CurrentLeaderEpoch int32
	// LastFetchedEpoch is the epoch of the last batch in the replica's log,
	// NoEpoch when it has none; fetches carry it so the leader can detect
	// divergence (KIP-595).
	LastFetchedEpoch int32
	Phase            Phase
	// DelayedUntil backs the partition off after an error (Kafka's
	// DelayedItem); zero when not delayed.
	DelayedUntil time.Time
}

// IsDelayed reports whether the partition is backing off at now.
func (s PartitionState) IsDelayed(now time.Time) bool { return now.Before(s.DelayedUntil) }

// IsReadyForFetch reports whether a fetch request should include it.
func (s PartitionState) IsReadyForFetch(now time.Time) bool {
	return s.Phase == Fetching && !s.IsDelayed(now)
}

// IsTruncating reports whether it waits for a truncation round.
func (s PartitionState) IsTruncating(now time.Time) bool {
	return s.Phase == Truncating && !s.IsDelayed(now)
}

// IsReplicaInSync reports whether the last fetch reached the leader's high
// watermark.
func (s PartitionState) IsReplicaInSync() bool { return s.Lag == 0 }

func (s PartitionState) String() string {
	return fmt.Sprintf("FetchState(fetchOffset=%d, currentLeaderEpoch=%d, lastFetchedEpoch=%d, state=%s, lag=%d, delayed=%v)",
		s.FetchOffset, s.CurrentLeaderEpoch, s.LastFetchedEpoch, s.Phase, s.Lag, !s.DelayedUntil.IsZero())
}

// BrokerEndPoint is the leader a fetcher copies from.
type BrokerEndPoint struct {
	ID   int32
	Host string
	Port int32
}

func (b BrokerEndPoint) String() string { return fmt.Sprintf("%d@%s:%d", b.ID, b.Host, b.Port) }

// InitialFetchState is how a partition is handed to a fetcher (Kafka's
// InitialFetchState): the leader to fetch from, the epoch it leads in and
// where to start. The replica manager starts at the log end offset when the
// log has leader epochs (divergence is then found from them) and at the
// high watermark when it has none.
type InitialFetchState struct {
	TopicID            [16]byte
	Leader             BrokerEndPoint
	CurrentLeaderEpoch int32
	InitOffset         int64
}

// OffsetTruncationState is where to truncate and whether that is final
// (Kafka's OffsetTruncationState): an intermediate truncation happens when
// the leader answers with an epoch the replica does not have (KIP-279).
type OffsetTruncationState struct {
	Offset              int64
	TruncationCompleted bool
}

func (t OffsetTruncationState) String() string {
	return fmt.Sprintf("TruncationState(offset=%d, completed=%v)", t.Offset, t.TruncationCompleted)
}
