package storage

import (
	"fmt"

	"github.com/strait-io/strait/storage/producer"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/validator"
)

// AppendInfo describes a completed append (Kafka's LogAppendInfo).
type AppendInfo struct {
	FirstOffset, LastOffset int64
	// MaxTimestamp and OffsetOfMaxTimestamp are over the appended batches.
	MaxTimestamp, OffsetOfMaxTimestamp int64
	// LogAppendTime is the broker time stamped on a LogAppendTime topic's
	// batches, or -1 (ProduceResponse LogAppendTime).
	LogAppendTime int64
	// LogStartOffset is the log start offset after the append.
	LogStartOffset int64
	NumRecords     int64
	Bytes          int
	// Duplicate is set when a retried idempotent batch was recognised: the
	// offsets are the original append's and nothing was written.
	Duplicate bool
}

// AppendAsLeader validates buf (client batches, or batches the broker
// writes itself for OriginCoordinator), assigns offsets from the log end
// offset and the given partition leader epoch in place, and appends them.
// Nothing is written unless every batch passes; rejections are
// *record.Error values carrying the Kafka error code.
func (l *Log) AppendAsLeader(buf []byte, leaderEpoch int32, origin record.AppendOrigin) (AppendInfo, error) {
	return l.AppendAsLeaderVerified(buf, leaderEpoch, origin, nil)
}

// AppendAsLeaderVerified is AppendAsLeader for a client's transactional
// write verified with guard (KIP-890, txn_verification.go): a batch that
// begins a transaction is refused with INVALID_TXN_STATE unless guard is
// still its producer's. A nil guard requires nothing.
func (l *Log) AppendAsLeaderVerified(buf []byte, leaderEpoch int32, origin record.AppendOrigin, guard *producer.VerificationGuard) (AppendInfo, error) {
	if origin == record.OriginReplication {
		return AppendInfo{}, fmt.Errorf("storage: AppendAsLeader with replication origin; use AppendAsFollower")
	}
	return l.appendAndFlush(func() (AppendInfo, int64, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if err := l.check(); err != nil {
			return AppendInfo{}, 0, err
		}
		nowMs := l.clock.Now().UnixMilli()
		info, err := l.validator.ValidateAndAssignOffsets(buf, origin, l.config.validatorConfig(), nowMs, l.logEndOffset(), leaderEpoch)
		if err != nil {
			return AppendInfo{}, 0, err
		}
		return l.appendValidatedLocked(buf, info, origin, nowMs, guard)
	})
}

// AppendAsFollower appends batches that already carry their offsets,
// leader epochs and producer ids — a follower's or the mirror's fetch
// result — byte for byte. The epoch cache learns every new epoch from the
// batches. The first batch must start at or after the log end offset
// (gaps are allowed, as in compacted logs); a caller below it must truncate
// first.
func (l *Log) AppendAsFollower(buf []byte) (AppendInfo, error) {
	return l.appendAndFlush(func() (AppendInfo, int64, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if err := l.check(); err != nil {
			return AppendInfo{}, 0, err
		}
		leo := l.logEndOffset()
		info, err := l.validator.ValidateReplicated(buf, l.config.validatorConfig(), leo)
		if err != nil {
			return AppendInfo{}, 0, err
		}
		if info.FirstOffset < leo {
			return AppendInfo{}, 0, &UnexpectedAppendOffsetError{FirstOffset: info.FirstOffset, LastOffset: info.LastOffset, LogEndOffset: leo}
		}
		return l.appendRunsLocked(buf, info)
	})
}

// appendRunsLocked appends a fetched set in runs that each fit in a
// segment (validator.Info.Split), rolling between them as needed: a fetch
// of replica.fetch.max.bytes (or the mirror's fetch size) may be larger
// than a small segment.bytes, and refusing it would stop the follower (or
// the mirror) for good. Each run is a whole append (producer state, epoch
// cache, roll, write, commit), so the producer snapshot a roll takes
// includes the runs before it. A failing run leaves the runs before it
// appended; the error fails the fetch as any append error does. mu is held.
func (l *Log) appendRunsLocked(buf []byte, info validator.Info) (AppendInfo, int64, error) {
	runs := info.Split(int(l.config.SegmentBytes))
	if len(runs) == 1 {
		return l.appendValidatedLocked(buf, info, record.OriginReplication, l.clock.Now().UnixMilli(), nil)
	}
	var out AppendInfo
	var flushTo int64
	pos := 0
	for i, run := range runs {
		got, to, err := l.appendValidatedLocked(buf[pos:pos+run.Bytes], run, record.OriginReplication, l.clock.Now().UnixMilli(), nil)
		if err != nil {
			return AppendInfo{}, 0, err
		}
		pos += run.Bytes
		flushTo = max(flushTo, to)
		if i == 0 {
			out = got
			continue
		}
		out.LastOffset, out.LogStartOffset = got.LastOffset, got.LogStartOffset
		out.NumRecords += got.NumRecords
		out.Bytes += got.Bytes
		if got.MaxTimestamp > out.MaxTimestamp { // ties keep the first, as Info does
			out.MaxTimestamp, out.OffsetOfMaxTimestamp = got.MaxTimestamp, got.OffsetOfMaxTimestamp
		}
	}
	return out, flushTo, nil
}

// appendAndFlush runs an append and then, when flush.messages asks for it,
// waits until the appended data is durable. The append is counted for
// group commit so a concurrent flusher waits for it to land first.
func (l *Log) appendAndFlush(appendLocked func() (AppendInfo, int64, error)) (AppendInfo, error) {
	counted := l.flush.appendStarted()
	out, flushTo, err := appendLocked()
	if counted {
		l.flush.appendDone()
	}
	if err != nil {
		return AppendInfo{}, err
	}
	if flushTo > 0 {
		if err := l.flushUpTo(flushTo); err != nil {
			return AppendInfo{}, err
		}
	}
	return out, nil
}

// appendValidatedLocked runs the steps after validation: duplicate
// detection, staged producer-state checks, epoch cache, roll, write,
// commit. mu is held. It returns the offset to flush up to when
// flush.messages asks for a flush, else 0.
func (l *Log) appendValidatedLocked(buf []byte, info validator.Info, origin record.AppendOrigin, nowMs int64, guard *producer.VerificationGuard) (AppendInfo, int64, error) {
	out := AppendInfo{
		FirstOffset:          info.FirstOffset,
		LastOffset:           info.LastOffset,
		MaxTimestamp:         info.MaxTimestamp,
		OffsetOfMaxTimestamp: info.OffsetOfMaxTimestamp,
		LogAppendTime:        -1,
		NumRecords:           info.NumRecords,
		Bytes:                info.Bytes,
	}
	if origin != record.OriginReplication && l.config.TimestampType == record.LogAppendTime {
		out.LogAppendTime = nowMs
	}

	// A retried idempotent batch is answered with the offsets it got the
	// first time (Kafka's findDuplicateBatch, client appends only).
	if origin == record.OriginClient && len(info.Batches) == 1 && info.Batches[0].HasProducerID() {
		if dup, ok := l.producers.FindDuplicate(info.Batches[0]); ok {
			out.FirstOffset, out.LastOffset = dup.FirstOffset(), dup.LastOffset
			out.Duplicate = true
			out.NumRecords, out.Bytes = 0, 0
			out.LogStartOffset = l.logStartOffset.Load()
			return out, 0, nil
		}
	}

	// Phase one of the producer-state update: validate against a staged
	// copy; nothing changes if any batch is refused.
	u := l.producers.NewUpdate(origin)
	u.Verify(guard)
	for _, b := range info.Batches {
		ci, err := l.controlInfo(b)
		if err != nil {
			return out, 0, err
		}
		if _, err := u.Append(b, ci); err != nil {
			return out, 0, err
		}
	}

	// The epoch cache learns each new epoch before the data is written;
	// recovery trims it back to the log end offset if the write is lost.
	// Its checkpoint is written by the next flush, before the recovery
	// point passes the new entry (AssignDeferred).
	for _, b := range info.Batches {
		e := b.PartitionLeaderEpoch()
		if e < 0 {
			continue
		}
		if latest, ok := l.epochs.LatestEpoch(); !ok || e > latest {
			if err := l.epochs.AssignDeferred(e, b.BaseOffset()); err != nil {
				return out, 0, l.fail("epoch checkpoint", err)
			}
		}
	}

	seg, err := l.maybeRollLocked(len(buf), info, nowMs)
	if err != nil {
		return out, 0, err
	}
	if err := seg.append(buf, info.Batches); err != nil {
		return out, 0, l.fail("append", err)
	}

	// Phase two: the write succeeded, commit producer state and index the
	// transactions it aborted.
	for _, t := range abortedFrom(u.Commit(info.LastOffset + 1)) {
		if err := seg.txnIndex.Append(t); err != nil {
			return out, 0, l.fail("txn index append", err)
		}
	}
	l.setLogEndOffsetLocked(info.LastOffset+1, seg)
	l.refreshFirstUnstable()
	out.LogStartOffset = l.logStartOffset.Load()

	var flushTo int64
	l.unflushedMessages += info.NumRecords
	if l.unflushedMessages >= l.config.FlushMessages {
		l.unflushedMessages = 0
		l.lastFlushMs = nowMs
		flushTo = info.LastOffset + 1
	}
	return out, flushTo, nil
}

// maybeRollLocked rolls to a new segment when the active one is full, old
// or cannot index the incoming offsets. mu is held.
func (l *Log) maybeRollLocked(size int, info validator.Info, nowMs int64) (*LogSegment, error) {
	seg := l.activeSegment()
	if !seg.shouldRoll(rollParams{
		maxSegmentBytes:        l.config.SegmentBytes,
		maxSegmentMs:           l.config.SegmentMs,
		messagesSize:           size,
		maxTimestampInMessages: info.MaxTimestamp,
		maxOffsetInMessages:    info.LastOffset,
		nowMs:                  nowMs,
	}) {
		return seg, nil
	}
	// A follower's batch may start past the log end (a gap); the new
	// segment is named by whichever is larger (Kafka's roll).
	return l.rollLocked(max(info.FirstOffset, l.logEndOffset()))
}

// Roll starts a new active segment at the log end offset.
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	_, err := l.rollLocked(l.logEndOffset())
	return err
}

// rollLocked makes a new active segment at newBase. The old segment gets its
// final time index entry, producer state is snapshotted at newBase, and the
// old segment is flushed in the background: a roll never waits for an
// fsync (Kafka schedules flushUptoOffsetExclusive the same way).
func (l *Log) rollLocked(newBase int64) (*LogSegment, error) {
	old := l.activeSegment()
	if old.baseOffset == newBase && old.Size() == 0 {
		return old, nil // already an empty segment there
	}
	if newBase <= old.baseOffset {
		return nil, l.fail("roll", fmt.Errorf("new segment base %d is not above the active segment's %d", newBase, old.baseOffset))
	}
	if err := old.onBecomeInactive(); err != nil {
		return nil, l.fail("roll", err)
	}
	seg, err := l.newSegment(newBase)
	if err != nil {
		return nil, l.fail("roll", err)
	}
	if err := l.fsys.SyncDir(l.dir); err != nil {
		return nil, l.fail("roll", err)
	}
	l.setSegments(append(append([]*LogSegment(nil), l.segs()...), seg))
	l.producers.UpdateMapEndOffset(newBase)
	if err := l.producers.TakeSnapshot(); err != nil {
		return nil, l.fail("producer snapshot", err)
	}
	// The old segment is synced even when the recovery point already
	// covers its data: its final time index entry was written just now.
	l.scheduler.Go(func() {
		if l.closed.Load() {
			return // Close flushed everything
		}
		if err := old.flush(); err != nil {
			l.fail("flush rolled segment", err)
			return
		}
		_ = l.flushUpTo(newBase)
	})
	return seg, nil
}
