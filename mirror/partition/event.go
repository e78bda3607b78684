package partition

// Event is one input to Step. The concrete types are BecomeLeader,
// BecomeFollower, DesiredChanged, Result, FetchFailed and SourceEpochAhead.
type Event interface{ isEvent() }

// BecomeLeader: metadata made this replica the partition leader at
// LeaderEpoch. A higher epoch while already leader (an epoch bump the
// machine asked for, or a re-election) starts a new generation too: every
// outstanding effect is abandoned and the phase resumes from the record.
type BecomeLeader struct{ LeaderEpoch int32 }

// BecomeFollower: metadata says another replica leads at LeaderEpoch (or
// this replica left the replica set). The machine removes its fetcher and
// stops driving.
type BecomeFollower struct{ LeaderEpoch int32 }

// DesiredChanged: the topic's mirror membership or desired state changed
// (ParseMirrorName of mirror.name).
type DesiredChanged struct {
	Mirror  string
	Desired Desired
}

// Result answers the effect named by Ref. Err nil means it succeeded; an
// error is retried in place after a step backoff (a failed WriteMirrorState
// re-reads the record first: it may have been stored) unless it wraps
// ErrFailed or ErrNonRetryable and the partition is PREPARING or MIRRORING,
// which then goes to FAILED. Which of the other fields matter depends on
// the effect's kind (see EffectKind).
type Result struct {
	Ref Ref
	Err error
	// Record: ReadMirrorState's answer (EmptyRecord() when there is none).
	Record Record
	// Epoch: QueryLastMirroredEpoch's LME, −1 when the source has none (no
	// record, or a source without the API).
	Epoch int32
	// LogStartOffset: QueryLastMirroredEpoch's source log start offset, where
	// a full truncation restarts the log.
	LogStartOffset int64
	// LogEndOffset and LatestEpoch: the local log after TruncateFully,
	// TruncateAfterEpoch or RemoveFetcher. LatestEpoch
	// is the leader epoch of the last batch in the log, −1 if it is empty —
	// the epoch of data, not the epoch cache's entry for a leadership the log
	// has no batch of.
	LogEndOffset int64
	LatestEpoch  int32
}

// FetchErrorKind classifies what the mirror fetcher reports about its
// partition.
type FetchErrorKind int8

const (
	// FetchRetriable: a transient error (source unreachable, leader moved,
	// throttled); the fetcher backs off by itself. Only recorded.
	FetchRetriable FetchErrorKind = iota + 1
	// FetchSourceTopicIDChanged: the source topic was recreated; mirroring a
	// different log would be silent corruption. FAILED, non-retryable.
	FetchSourceTopicIDChanged
	// FetchCorruptBatch: a batch failed CRC or structural validation; nothing
	// of it was appended. FAILED, retried.
	FetchCorruptBatch
	// FetchEpochRegressed: the source sent batches whose epochs go backwards.
	// FAILED, retried.
	FetchEpochRegressed
	// FetchFatal: any other error the fetcher cannot continue past. FAILED,
	// retried.
	FetchFatal
)

func (k FetchErrorKind) String() string {
	switch k {
	case FetchRetriable:
		return "retriable"
	case FetchSourceTopicIDChanged:
		return "source-topic-id-changed"
	case FetchCorruptBatch:
		return "corrupt-batch"
	case FetchEpochRegressed:
		return "epoch-regressed"
	case FetchFatal:
		return "fatal"
	}
	return "FetchErrorKind(?)"
}

// FetchFailed: the mirror fetcher started by the AddFetcher effect Ref hit
// an error for this partition.
type FetchFailed struct {
	Ref  Ref
	Kind FetchErrorKind
	Err  error
}

// SourceEpochAhead: the fetcher started by Ref holds a source batch whose
// leader epoch is above the destination leader epoch; it appends it only
// after the machine's BumpLeaderEpoch takes effect (KIP-1279's DLE ≥ SLE
// invariant, the reactive bump of MirrorLeaderEpochExceededException).
type SourceEpochAhead struct {
	Ref   Ref
	Epoch int32
}

func (BecomeLeader) isEvent()     {}
func (BecomeFollower) isEvent()   {}
func (DesiredChanged) isEvent()   {}
func (Result) isEvent()           {}
func (FetchFailed) isEvent()      {}
func (SourceEpochAhead) isEvent() {}
