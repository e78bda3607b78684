// Package partition is the per-partition mirror state machine of KIP-1279
// (Cluster Mirroring): UNKNOWN → PREPARING → MIRRORING ⇄ PAUSING → PAUSED,
// → STOPPING → STOPPED, and FAILED with jittered retries.
//
// The machine is pure, in the style of etcd raft's RawNode: it does no IO,
// starts no goroutines and never reads a clock. Everything it learns comes in
// through Step(now, Event): leadership (BecomeLeader, BecomeFollower), the
// desired state from metadata (DesiredChanged, parsed from the seed's
// mirror.name config with ParseMirrorName), the Result of each effect it
// asked for, and the mirror fetcher's reports (FetchFailed,
// SourceEpochAhead). Everything it wants done comes out of Ready() as
// Effects, in order; Advance() acknowledges them. The driver
// (MirrorMetadataManager) performs the effects against replication, storage,
// the __mirror_state coordinator and the source cluster, and steps the
// Result back with the effect's Ref.
//
// Only the partition leader drives a partition: a follower's machine holds
// its leader epoch and desired state and emits nothing but the RemoveFetcher
// that ends a leadership. Every effect carries the leader epoch it was
// emitted under (Ref.LeaderEpoch) and the driver must drop an effect whose
// epoch is no longer the partition's leader epoch (RemoveFetcher excepted),
// the way the coordinator fences WriteMirrorStates; a zombie leader whose
// metadata lags is stopped by the coordinator (leader-epoch fencing of every
// write) and by replication (log changes only at the current epoch). A Result is accepted only for
// the one effect the machine currently waits on; anything else — a duplicate,
// an answer from an older leader epoch, an answer to an effect the machine
// abandoned — is stale, ignored, and Step returns ErrStale.
//
// Phases (each transition is persisted first, then its actions run; the
// record written is fenced by leader epoch and state epoch, §4.1 of the
// digest, and every write is a ValidTransition):
//
//	any new leader epoch: RemoveFetcher (no reply) if one ran, ReadMirrorState,
//	  SetReadOnly (ClearReadOnly if the record is STOPPED), resume the phase.
//	start (UNKNOWN or STOPPED → PREPARING): CheckExistingRecords first, the
//	  LME query that refuses to let the LME −1 rule delete records the log
//	  holds (retried in place); its LME carries over the PREPARING write.
//	PREPARING: QueryLastMirroredEpoch (CheckExistingRecords when the record
//	  came from UNKNOWN or STOPPED and the check was not carried over);
//	  LME −1 → TruncateFully(source log start), else
//	  TruncateAfterEpoch(LME); WaitForISRTruncation. A retry of a log that
//	  failed from MIRRORING (PrevState MIRRORING, see RetryOfAligned) keeps
//	  the log: RemoveFetcher reads its end, and only a log ending before the
//	  source's log start is truncated fully; the fetcher's divergence check
//	  (LastFetchedEpoch) cuts what the source does not have, as on a resume.
//	MIRRORING: AddFetcher; a batch epoch above the leader epoch
//	  (SourceEpochAhead) → BumpLeaderEpoch(min) so DLE ≥ SLE.
//	PAUSING: RemoveFetcher, then PAUSED records the log end offset.
//	PAUSED → MIRRORING (resume): AddFetcher from the local log end, no truncation.
//	STOPPING: RemoveFetcher; BumpLeaderEpoch(last batch epoch + 1) unless the
//	  leader epoch is already above it; record the LME and the stop offset
//	  (a STOPPING → STOPPING write of what RemoveFetcher reported at the
//	  current epoch); AbortOpenTransactions (an ABORT marker for every
//	  transaction the source left open at the stop point, acks from the
//	  ISR); AppendMirrorPIDReset (acks from the ISR); STOPPED; ClearReadOnly.
//	  The stop keeps every mirrored record: the markers unblock the last
//	  stable offset (KIP-1279's latest design, digest §3.5 "Failover")
//	  where truncating to it would delete committed records after the
//	  first open transaction. The LME is recorded before the first marker,
//	  so a leader that takes over midway finishes the stop without
//	  measuring a log the stop has written to (see recordLME).
//	FAILED (from PREPARING or MIRRORING): RemoveFetcher; ScheduleRetry with
//	  full jitter; the timer's Result moves it back to PREPARING.
//
// A retriable error on any effect retries that step after a jittered step
// backoff without a state change; only errors the driver marks with
// ErrFailed or ErrNonRetryable (and fatal FetchFailed kinds) send PREPARING or
// MIRRORING to FAILED. STOPPING and PAUSING never fail: they retry in place,
// so a failover always completes.
package partition
