package storage

import (
	"errors"

	"github.com/strait-io/strait/storage/record"
)

// CopyToFuture is one step of filling a future log from the partition's
// current log, what Kafka's ReplicaAlterLogDirsThread does by fetching
// from the local current replica: the future first matches the current
// (truncated where they diverged, per the leader epochs, as a follower
// truncates to its leader; restarted at the current's log start offset
// when it is behind it), then takes up to maxBytes of whole batches from
// its log end offset. It reports how many bytes it appended and whether
// the future now ends where the current does.
func CopyToFuture(cur, fut *Log, maxBytes int32) (appended int, caughtUp bool, err error) {
	if err := reconcileFuture(cur, fut); err != nil {
		return 0, false, err
	}
	from := fut.LogEndOffset()
	fd, err := cur.Read(from, maxBytes, FetchLogEnd, true)
	var oor *OffsetOutOfRangeError
	if errors.As(err, &oor) {
		// Retention or DeleteRecords moved the start past the future's
		// end meanwhile: the next step restarts it there.
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if fd.Records.Size > 0 {
		buf := make([]byte, fd.Records.Size)
		if err := fd.Records.ReadInto(buf); err != nil {
			return 0, false, err
		}
		if buf = record.WholeBatches(buf); len(buf) > 0 {
			if _, err := fut.AppendAsFollower(buf); err != nil {
				return 0, false, err
			}
			appended = len(buf)
		}
	}
	return appended, fut.LogEndOffset() == cur.LogEndOffset(), nil
}

// reconcileFuture truncates the future log to where it agrees with the
// current one (Kafka's future replica truncates to its current replica
// with OffsetForLeaderEpoch like a follower): to the current log's end for
// the future's latest epoch, to the current's log end offset, and it
// restarts at the current's log start offset when it ends below it.
func reconcileFuture(cur, fut *Log) error {
	if fut.LogEndOffset() < cur.LogStartOffset() || (fut.LogEndOffset() == 0 && cur.LogStartOffset() > 0) {
		return fut.TruncateFullyAndStartAt(cur.LogStartOffset())
	}
	target := min(fut.LogEndOffset(), cur.LogEndOffset())
	if latest, ok := fut.LatestEpoch(); ok {
		if ep, end, ok := cur.EndOffsetForEpoch(latest); ok && (ep < latest || end < target) {
			target = min(target, end)
		}
	}
	if target < fut.LogEndOffset() {
		_, err := fut.TruncateTo(target)
		return err
	}
	return nil
}
