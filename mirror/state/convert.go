package state

import (
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// Conversions between partition.Record and the WriteMirrorStates /
// ReadMirrorStates fields, in one place for the coordinator and for the
// MirrorMetadataManager that sends the RPCs to a remote coordinator.
//
// Two fields differ in meaning:
//   - State epoch: the request carries the epoch the writer expects (the
//     stored one), the response the stored one (−1: no record); the
//     machine's EmptyRecord has state epoch 0, which is also what a write
//     to a key with no record must expect.
//   - Retries: Record.RetryAttempt −1 means non-retryable (v4's
//     NON_RETRYABLE_ATTEMPT); on the wire that is NonRetryable true, and
//     RetryAttempt −1 alone means "unavailable", read as 0.
//
// PrevState is not in WriteMirrorStates v0: the coordinator derives it on
// a write (derivePrevState). A ReadMirrorStates answer carries it in a
// tagged field (Strait extension, tag 6), because a new partition leader
// whose coordinator is another broker needs it: STOPPING records an LME
// only when the stop came from an aligned state (partition's lmeTrusted),
// and every stop re-reads the record after its leader-epoch bump. Without
// it a 3-node destination recorded LME −1 and a failback copied everything.

// WritePartition is the WriteMirrorStates entry that stores rec in place
// of a record whose state epoch is expected (the Effect's
// ExpectedStateEpoch).
func WritePartition(p int32, rec partition.Record, expected int32) mirrormsg.WriteMirrorStatesRequestPartitionData {
	d := mirrormsg.NewWriteMirrorStatesRequestPartitionData()
	d.PartitionIndex = p
	d.State = int8(rec.State)
	d.LeaderEpoch = rec.LeaderEpoch
	d.StateEpoch = expected
	d.LastMirrorEpoch = rec.LastMirrorEpoch
	d.LastMirrorOffset = rec.LastMirrorOffset
	if rec.ErrorMessage != "" {
		msg := rec.ErrorMessage
		d.ErrorMessage = &msg
	}
	d.RetryAttempt = rec.RetryAttempt
	d.NonRetryable = rec.RetryAttempt < 0
	return d
}

// RecordFromWrite is the Write a WriteMirrorStates entry asks for.
func RecordFromWrite(key Key, d mirrormsg.WriteMirrorStatesRequestPartitionData) Write {
	rec := partition.Record{
		State:            partition.State(d.State),
		LeaderEpoch:      d.LeaderEpoch,
		LastMirrorEpoch:  d.LastMirrorEpoch,
		LastMirrorOffset: d.LastMirrorOffset,
		RetryAttempt:     retryAttemptFromWire(d.RetryAttempt, d.NonRetryable),
		PrevState:        partition.StateUnknown,
	}
	if d.ErrorMessage != nil {
		rec.ErrorMessage = *d.ErrorMessage
	}
	return Write{Key: key, Record: rec, ExpectedStateEpoch: d.StateEpoch}
}

// PartitionResult is the ReadMirrorStates answer for a record (found
// false: no record), error code 0 and partition index unset.
func PartitionResult(rec partition.Record, found bool) mirrormsg.ReadMirrorStatesResponsePartitionResult {
	r := mirrormsg.NewReadMirrorStatesResponsePartitionResult()
	r.State = int8(partition.StateUnknown)
	if !found {
		return r
	}
	r.State = int8(rec.State)
	r.LastMirrorEpoch = rec.LastMirrorEpoch
	r.LeaderEpoch = rec.LeaderEpoch
	r.StateEpoch = rec.StateEpoch
	r.LastMirrorOffset = rec.LastMirrorOffset
	if rec.ErrorMessage != "" {
		msg := rec.ErrorMessage
		r.ErrorMessage = &msg
	}
	r.RetryAttempt = rec.RetryAttempt
	r.NonRetryable = rec.RetryAttempt < 0
	r.PrevState = int8(rec.PrevState)
	return r
}

// RecordFromRead is the record a ReadMirrorStates answer (with error code
// 0) describes: partition.EmptyRecord for no record. PrevState is UNKNOWN
// when the answer does not carry it (a coordinator without tag 6).
func RecordFromRead(r mirrormsg.ReadMirrorStatesResponsePartitionResult) partition.Record {
	if partition.State(r.State) == partition.StateUnknown && r.StateEpoch < 0 {
		return partition.EmptyRecord()
	}
	rec := partition.Record{
		State:            partition.State(r.State),
		StateEpoch:       max(r.StateEpoch, 0),
		LeaderEpoch:      r.LeaderEpoch,
		LastMirrorEpoch:  r.LastMirrorEpoch,
		LastMirrorOffset: r.LastMirrorOffset,
		RetryAttempt:     retryAttemptFromWire(r.RetryAttempt, r.NonRetryable),
		PrevState:        partition.State(r.PrevState),
	}
	if r.ErrorMessage != nil {
		rec.ErrorMessage = *r.ErrorMessage
	}
	return rec
}

func retryAttemptFromWire(attempt int32, nonRetryable bool) int32 {
	if nonRetryable {
		return -1
	}
	return max(attempt, 0)
}
