package storage

import (
	"errors"
	"testing"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// startHeld runs call on its own goroutine and returns once call is held
// at the operation pause holds.
// finish lets it go on and waits for it to return.
// The test's cleanup releases it too, so a failing test does not leave it
// hanging.
func startHeld(t *testing.T, efs *vfs.ErrorFS, pause *vfs.Pause, call func()) (finish func()) {
	t.Helper()
	efs.SetInjector(pause.Injector())
	t.Cleanup(pause.Release)
	done := make(chan struct{})
	go func() {
		defer close(done)
		call()
	}()
	<-pause.Paused
	return func() {
		pause.Release()
		<-done
	}
}

// batchesIn decodes the whole batches of a read.
func batchesIn(t *testing.T, fd FetchDataInfo) []record.Batch {
	t.Helper()
	buf := make([]byte, fd.Records.Size)
	if err := fd.Records.ReadInto(buf); err != nil {
		t.Fatal(err)
	}
	var out []record.Batch
	it := record.NewIter(buf)
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		out = append(out, b)
	}
	return out
}

// An append writes its batch and publishes the segment's size before it
// publishes the log end offset. A read in between must not return the
// batch: its reader would fetch next from past the log end offset that
// read reported, and a read there is OFFSET_OUT_OF_RANGE until the append
// finishes (a kgo consumer then applied its reset policy and went back to
// offset 0; TestFetchConcurrentWithProducers failed 20 of 200 runs). The
// window is a few instructions wide; an abort marker widens it
// deterministically, since its append creates the segment's transaction
// index between the two publications, and the test pauses that create.
func TestReadWhileAnAppendPublishesItsBatch(t *testing.T) {
	e := newIOEnv(t, nil)
	l := e.log
	e.mustAppend(ioAppend{records: 3, epoch: 1})                    // 0-2
	e.mustAppend(ioAppend{records: 2, epoch: 1, pid: 7, txn: true}) // 3-4, open
	l.MaybeIncrementHighWatermark(l.LogEndOffset())
	leo := l.LogEndOffset() // 5, where the abort marker goes

	var markerErr error
	finish := startHeld(t, e.efs, vfs.PauseOn(vfs.OpCreate, TxnIndexFileSuffix), func() { markerErr = e.marker(7, false, 1) })
	if got := l.activeSegment().Size(); got == l.logEnd.Load().pos {
		t.Fatalf("the marker's bytes are not published yet (segment size %d); the pause is not in the window", got)
	}
	for _, iso := range []FetchIsolation{FetchLogEnd, FetchHighWatermark, FetchTxnCommitted} {
		fd, err := l.Read(0, 1<<20, iso, true)
		if err != nil {
			t.Fatalf("isolation %d: read at 0: %v", iso, err)
		}
		bound := map[FetchIsolation]int64{FetchLogEnd: fd.LogEndOffset, FetchHighWatermark: fd.HighWatermark,
			FetchTxnCommitted: fd.LastStableOffset}[iso]
		if fd.LogEndOffset != leo {
			t.Fatalf("isolation %d: log end %d while the marker's append is unfinished, want %d", iso, fd.LogEndOffset, leo)
		}
		next := int64(0)
		for _, b := range batchesIn(t, fd) {
			if b.LastOffset() >= bound {
				t.Fatalf("isolation %d: read returned batch %d-%d, not below the bound %d it reports (log end %d, high watermark %d)",
					iso, b.BaseOffset(), b.LastOffset(), bound, fd.LogEndOffset, fd.HighWatermark)
			}
			next = b.NextOffset()
		}
		// Where the reader goes next must be in range.
		if _, err := l.Read(next, 1<<20, iso, true); err != nil {
			var oor *OffsetOutOfRangeError
			if errors.As(err, &oor) {
				t.Fatalf("isolation %d: the next read, at %d, is out of range: %v", iso, next, err)
			}
			t.Fatal(err)
		}
	}
	finish()
	if markerErr != nil {
		t.Fatalf("abort marker: %v", markerErr)
	}
	// Once published, the marker is read like any batch.
	fd, err := l.Read(leo, 1<<20, FetchLogEnd, true)
	if err != nil || fd.LogEndOffset != leo+1 {
		t.Fatalf("after the append: read at %d: log end %d, %v", leo, fd.LogEndOffset, err)
	}
	if bs := batchesIn(t, fd); len(bs) != 1 || bs[0].BaseOffset() != leo || !bs[0].IsControl() {
		t.Fatalf("after the append: %d batches at %d, want the marker", len(bs), leo)
	}
}

// Retention takes whole segments out of the log and raises the log start
// offset past them. A read that already sees the segments gone must also
// see the log start past them: with the old log start its range check
// passed an offset of a deleted segment, and the read answered from the
// next segment, whose first batch lies past that offset. The reader
// skipped records without being told (Kafka answers OFFSET_OUT_OF_RANGE
// and the consumer resets to the log start), and a follower appended past
// a gap. The deletion is held where it renames the first doomed segment's
// file, after the segment list changed.
func TestReadWhileRetentionDeletesSegments(t *testing.T) {
	e := newIOEnv(t, func(c *LogConfig) { c.SegmentBytes, c.RetentionBytes = 600, 700 })
	l := e.log
	for l.Segments()[len(l.Segments())-1] == 0 || len(l.Segments()) < 3 {
		e.mustAppend(ioAppend{records: 2, epoch: 1})
	}
	l.MaybeIncrementHighWatermark(l.LogEndOffset())
	doomed := l.Segments()[1] - 1 // the last offset of the first segment, which retention deletes

	var (
		res    RetentionResult
		resErr error
	)
	finish := startHeld(t, e.efs, vfs.PauseOn(vfs.OpRename, LogFileSuffix), func() { res, resErr = l.DeleteOldSegments() })

	fd, err := l.Read(doomed, 1<<20, FetchHighWatermark, true)
	var oor *OffsetOutOfRangeError
	switch {
	case errors.As(err, &oor):
		if oor.LogStartOffset <= doomed {
			t.Fatalf("read at %d: out of range with log start %d, which holds it: %v", doomed, oor.LogStartOffset, err)
		}
	case err != nil:
		t.Fatalf("read at %d: %v", doomed, err)
	default:
		// Read before the deletion took effect: the data must start at
		// the batch holding the offset.
		bs := batchesIn(t, fd)
		if len(bs) == 0 || bs[0].BaseOffset() > doomed || bs[0].LastOffset() < doomed {
			first := int64(-1)
			if len(bs) > 0 {
				first = bs[0].BaseOffset()
			}
			t.Fatalf("read at %d (log start %d) returned %d batches from offset %d: records below it were skipped",
				doomed, fd.LogStartOffset, len(bs), first)
		}
	}
	finish()
	if resErr != nil || res.Segments == 0 {
		t.Fatalf("retention: %+v, %v", res, resErr)
	}
	if _, err := l.Read(doomed, 1<<20, FetchHighWatermark, true); !errors.As(err, &oor) {
		t.Fatalf("read at %d after retention deleted it: %v, want OFFSET_OUT_OF_RANGE", doomed, err)
	}
}

// A read whose segment list holds no segment at or below its offset
// answers OFFSET_OUT_OF_RANGE, as Kafka's LocalLog.read does when there is
// no floor segment, rather than reading the first segment there is: that
// one starts past the offset. A follower restarting its log at the
// leader's log start shows it: the new segment list is published before
// the log start and end offsets, and a read in between found the offsets
// of the old log in range. The restart is held where it rewrites the epoch
// checkpoint, after the segment list changed.
func TestReadBelowTheFirstSegment(t *testing.T) {
	e := newIOEnv(t, nil)
	l := e.log
	for range 3 {
		e.mustAppend(ioAppend{records: 2, epoch: 1})
	}
	l.MaybeIncrementHighWatermark(l.LogEndOffset())

	var restartErr error
	finish := startHeld(t, e.efs, vfs.PauseOn(vfs.OpCreate, LeaderEpochCheckpointFile+".tmp"), func() { restartErr = l.TruncateFullyAndStartAt(100) })
	if segs := l.Segments(); len(segs) != 1 || segs[0] != 100 {
		t.Fatalf("segments %v while the restart is held, want [100]", segs)
	}
	fd, err := l.Read(2, 1<<20, FetchLogEnd, true)
	var oor *OffsetOutOfRangeError
	if !errors.As(err, &oor) {
		t.Fatalf("read at 2 with the first segment at 100: %d bytes, log start %d, log end %d, error %v; want OFFSET_OUT_OF_RANGE",
			fd.Records.Size, fd.LogStartOffset, fd.LogEndOffset, err)
	}
	finish()
	if restartErr != nil {
		t.Fatal(restartErr)
	}
	if _, err := l.Read(2, 1<<20, FetchLogEnd, true); !errors.As(err, &oor) || oor.LogStartOffset != 100 {
		t.Fatalf("read at 2 after the restart at 100: %v", err)
	}
}

// A follower truncating its log (or the mirror a leader's, KIP-1279) cuts
// the segment file under reads that loaded its size before: their scan for
// the batch holding their offset then reads past the end of the file. That
// is the truncation's doing, not a disk failure; the read answers as if
// the data ended there (Kafka's batch iterator ends at the end of the file)
// and the log stays online. Taking it offline halted the broker. The read
// is held at its first header read, while TruncateTo runs.
func TestReadWhileTheSegmentIsTruncated(t *testing.T) {
	e := newIOEnv(t, func(c *LogConfig) { c.IndexIntervalBytes = 1 << 20 }) // scans start at the segment's start
	l := e.log
	for range 100 {
		e.mustAppend(ioAppend{records: 2, epoch: 1})
	}
	l.MaybeIncrementHighWatermark(l.LogEndOffset())
	// Offset 60 is older than the batches the segment remembers
	// (tailBatchesCap), so the read scans the file's headers.
	const at, target = 60, 10

	var (
		fd      FetchDataInfo
		readErr error
	)
	finish := startHeld(t, e.efs, vfs.PauseOn(vfs.OpRead, LogFileSuffix), func() { fd, readErr = l.Read(at, 1<<20, FetchLogEnd, true) })
	if _, err := l.TruncateTo(target); err != nil {
		t.Fatalf("truncate to %d: %v", target, err)
	}
	finish()
	var oor *OffsetOutOfRangeError
	switch {
	case errors.As(readErr, &oor):
	case readErr != nil:
		t.Fatalf("read at %d under a truncation to %d: %v", at, target, readErr)
	case fd.Records.Size > 0:
		if bs := batchesIn(t, fd); len(bs) > 0 && bs[0].LastOffset() < at {
			t.Fatalf("read at %d under a truncation to %d returned batch %d-%d", at, target, bs[0].BaseOffset(), bs[0].LastOffset())
		}
	}
	if err := l.check(); err != nil {
		t.Fatalf("the log went offline: %v", err)
	}
	if got := readAll(t, l, 0, FetchLogEnd); len(got) != target/2 {
		t.Fatalf("%d batches after the truncation, want %d", len(got), target/2)
	}
}

// Reads bound by the high watermark cache where it lies in the log
// (Kafka keeps LogOffsetMetadata for it). A read that scanned for it while
// a truncation rewrote the segment found a position in the old layout and
// cached it after the truncation had cleared the cache; once the high
// watermark came back to the same offset, every read was bounded by that
// stale position, not just the racing one, and returned records above the
// high watermark. A truncation ends every position computed before it.
// The read is held at the header read that finds the high watermark's
// batch while the log is truncated, refilled by a follower append whose
// offsets start past a gap (batches of the same size, other offsets), and
// the high watermark set back.
func TestReadAfterATruncationRacedTheHighWatermarkPosition(t *testing.T) {
	e := newIOEnv(t, func(c *LogConfig) { c.IndexIntervalBytes = 1 << 20 }) // scans start at the segment's start
	l := e.log
	for range 100 {
		e.mustAppend(ioAppend{records: 2, epoch: 1}) // batch k holds 2k and 2k+1
	}
	// The high watermark's batch, 30, is older than the batches the
	// segment remembers, so finding it scans 31 headers from the start.
	const hw, target, gapTo = 60, 40, 50
	l.MaybeIncrementHighWatermark(hw)

	finish := startHeld(t, e.efs, vfs.PauseOnNth(vfs.OpRead, LogFileSuffix, 31), func() {
		_, _ = l.Read(0, 1<<20, FetchHighWatermark, true) // racing the truncation, its own answer is moot
	})
	if _, err := l.TruncateTo(target); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for off := int64(gapTo); off < gapTo+40; off += 2 {
		b := record.Batch(e.build(ioAppend{records: 2, epoch: 1}))
		b.SetBaseOffset(off)
		buf = append(buf, b...)
	}
	if _, err := l.AppendAsFollower(buf); err != nil {
		t.Fatal(err)
	}
	l.MaybeIncrementHighWatermark(hw)
	finish()

	fd, err := l.Read(target, 1<<20, FetchHighWatermark, true)
	if err != nil || fd.HighWatermark != hw {
		t.Fatalf("read at %d: high watermark %d, %v", target, fd.HighWatermark, err)
	}
	for _, b := range batchesIn(t, fd) {
		if b.LastOffset() >= hw {
			t.Fatalf("read at %d returned batch %d-%d, not below the high watermark %d", target, b.BaseOffset(), b.LastOffset(), hw)
		}
	}
}
