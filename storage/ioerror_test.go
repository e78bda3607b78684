package storage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// IO errors. Each case builds some state on an ErrorFS over a MemFS, then
// makes one kind of operation fail and runs the call that hits it. An IO
// failure must come back as a *StorageError (KAFKA_STORAGE_ERROR) and take
// the log offline, as Kafka's LogDirFailureChannel does: every later call
// returns that same error without touching the disk. A restart (an unclean
// open of a crash image of the MemFS, without the injector) must then pass
// every crash-test invariant and hold every acknowledged flushed batch.
// Validation errors, by contrast, are the client's problem and must leave
// the log online.

// ioEnv is a log on an ErrorFS whose injections are counted.
type ioEnv struct {
	t     *testing.T
	mem   *vfs.MemFS
	efs   *vfs.ErrorFS
	clock *clock.Manual
	cfg   LogConfig
	dir   string
	log   *Log
	comp  *record.Compressor

	// history is every batch that may be in the log, in order: the
	// acknowledged ones and the one whose append failed after its write.
	history []crashBatch
	// durable is the offset below which appends were acknowledged flushed.
	durable int64
	seqs    map[int64]int32

	// fsOps counts every operation the ErrorFS sees.
	fsOps atomic.Int64
	// failures are what the log's OnFailure heard.
	failures []*StorageError
}

func newIOEnv(t *testing.T, cfg func(c *LogConfig)) *ioEnv {
	e := &ioEnv{
		t:     t,
		mem:   vfs.NewMem(),
		clock: clock.NewManual(time.UnixMilli(1_700_000_000_000)),
		cfg:   DefaultLogConfig(),
		dir:   "/data/topic-0",
		comp:  record.NewCompressor(),
		seqs:  map[int64]int32{},
	}
	if cfg != nil {
		cfg(&e.cfg)
	}
	e.efs = vfs.WithErrors(e.mem, nil)
	e.arm(-1, "")
	l, _, err := Open(e.dir, Options{FS: e.efs, Clock: e.clock, Scheduler: InlineScheduler{}, Config: e.cfg,
		OnFailure: func(se *StorageError) { e.failures = append(e.failures, se) }})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	e.log = l
	return e
}

// arm makes every operation op on a path ending in suffix fail from now on
// (a dead disk stays dead); op -1 fails nothing. Every operation is counted.
func (e *ioEnv) arm(op vfs.Op, suffix string) {
	e.efs.SetInjector(func(o vfs.Op, path string) error {
		e.fsOps.Add(1)
		if o == op && strings.HasSuffix(path, suffix) {
			return vfs.ErrInjected
		}
		return nil
	})
}

// ioAppend is one append of the IO error cases.
type ioAppend struct {
	records int
	epoch   int32
	pid     int64
	txn     bool
}

func (e *ioEnv) build(a ioAppend) []byte {
	spec := record.BatchSpec{
		PartitionLeaderEpoch: a.epoch, ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch,
		BaseSequence: record.NoSequence, Transactional: a.txn, BaseTimestamp: e.clock.Now().UnixMilli(),
	}
	if a.pid > 0 {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = a.pid, 0, e.seqs[a.pid]
	}
	recs := make([]record.Record, max(a.records, 1))
	for i := range recs {
		v := []byte(fmt.Sprintf("value-%d-%d-%s", e.clock.Now().UnixMilli(), i, strings.Repeat("x", 60)))
		recs[i] = record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v)), TimestampDelta: int64(i)}
	}
	b, err := record.Build(spec, recs, e.comp)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// appendBuf appends as leader. A batch that got its offsets may be in the
// log even when the append failed afterwards, so it joins the history.
func (e *ioEnv) appendBuf(buf []byte, epoch int32, origin record.AppendOrigin) (AppendInfo, error) {
	leo := e.log.LogEndOffset()
	info, err := e.log.AppendAsLeader(buf, epoch, origin)
	e.clock.Advance(time.Millisecond)
	if err == nil && info.Duplicate {
		return info, nil
	}
	// A batch refused by an IO error after it got its offsets may have
	// been written; one refused by validation was not.
	if b := record.Batch(buf); err == nil || errors.Is(err, kerr.KafkaStorageError) && b.BaseOffset() == leo {
		e.history = append(e.history, slices.Clone(b))
	}
	if err == nil && e.cfg.FlushMessages == 1 {
		e.durable = info.LastOffset + 1
	}
	return info, err
}

func (e *ioEnv) append(a ioAppend) error {
	info, err := e.appendBuf(e.build(a), a.epoch, record.OriginClient)
	if err == nil && a.pid > 0 && !info.Duplicate {
		e.seqs[a.pid] += int32(max(a.records, 1))
	}
	return err
}

func (e *ioEnv) mustAppend(a ioAppend) {
	e.t.Helper()
	if err := e.append(a); err != nil {
		e.t.Fatalf("append: %v", err)
	}
}

func (e *ioEnv) marker(pid int64, commit bool, epoch int32) error {
	b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: pid, Timestamp: e.clock.Now().UnixMilli()}, commit, 0)
	_, err := e.appendBuf(b, epoch, record.OriginCoordinator)
	return err
}

func (e *ioEnv) flush() error {
	leo := e.log.LogEndOffset()
	if err := e.log.Flush(); err != nil {
		return err
	}
	e.durable = max(e.durable, leo)
	return nil
}

func TestIOErrorTakesLogOffline(t *testing.T) {
	small := func(c *LogConfig) { c.SegmentBytes, c.IndexIntervalBytes, c.FlushMessages = 600, 0, 1 }
	smallUnflushed := func(c *LogConfig) { c.SegmentBytes, c.IndexIntervalBytes = 600, 0 }
	fill := func(n int) func(e *ioEnv) {
		return func(e *ioEnv) {
			for i := range n {
				e.mustAppend(ioAppend{records: 2, epoch: 1, pid: int64(1 + i%2)})
			}
		}
	}
	cases := []struct {
		name   string
		cfg    func(c *LogConfig)
		setup  func(e *ioEnv)
		op     vfs.Op
		suffix string
		// call is what hits the failure; deferred cases succeed and leave
		// the failure to be reported by the next call (a roll's
		// background flush).
		call     func(e *ioEnv) error
		deferred bool
		wantOp   string
	}{
		{name: "append write", cfg: small, setup: fill(1), op: vfs.OpWrite, suffix: LogFileSuffix,
			call: func(e *ioEnv) error { return e.append(ioAppend{records: 2, epoch: 1}) }, wantOp: "append"},
		{name: "append sync with flush.messages=1", cfg: small, setup: fill(1), op: vfs.OpSync, suffix: LogFileSuffix,
			call: func(e *ioEnv) error { return e.append(ioAppend{records: 2, epoch: 1}) }, wantOp: "flush"},
		// A new epoch's checkpoint is written by the flush (flush.messages=1
		// flushes with the append), before the recovery point passes it.
		{name: "new epoch checkpoint rename", cfg: small, setup: fill(1), op: vfs.OpRename, suffix: LeaderEpochCheckpointFile + TmpFileSuffix,
			call: func(e *ioEnv) error { return e.append(ioAppend{records: 1, epoch: 2}) }, wantOp: "flush"},
		{name: "roll create", cfg: small, setup: fill(2), op: vfs.OpCreate, suffix: LogFileSuffix,
			call: func(e *ioEnv) error { return e.append(ioAppend{records: 2, epoch: 1}) }, wantOp: "roll"},
		{name: "roll sync-dir", cfg: small, setup: fill(2), op: vfs.OpSyncDir, suffix: "topic-0",
			call: func(e *ioEnv) error { return e.append(ioAppend{records: 2, epoch: 1}) }, wantOp: "roll"},
		{name: "roll snapshot rename", cfg: small, setup: fill(2), op: vfs.OpRename, suffix: SnapshotFileSuffix + TmpFileSuffix,
			call: func(e *ioEnv) error { return e.append(ioAppend{records: 2, epoch: 1}) }, wantOp: "producer snapshot"},
		{name: "roll background flush", cfg: smallUnflushed, setup: func(e *ioEnv) {
			fill(1)(e)
			if err := e.flush(); err != nil {
				e.t.Fatal(err)
			}
			fill(1)(e)
		}, op: vfs.OpSync, suffix: "00000000000000000000" + LogFileSuffix,
			call: func(e *ioEnv) error { return e.append(ioAppend{records: 2, epoch: 1}) }, deferred: true, wantOp: "flush rolled segment"},
		{name: "txn index create", cfg: small, setup: func(e *ioEnv) {
			e.mustAppend(ioAppend{records: 2, epoch: 1, pid: 5, txn: true})
		}, op: vfs.OpCreate, suffix: TxnIndexFileSuffix,
			call: func(e *ioEnv) error { return e.marker(5, false, 1) }, wantOp: "txn index append"},
		{name: "truncate", cfg: small, setup: fill(2), op: vfs.OpTruncate, suffix: LogFileSuffix,
			call: func(e *ioEnv) error {
				_, err := e.log.TruncateTo(e.history[1].BaseOffset())
				return err
			}, wantOp: "truncate"},
		{name: "retention rename", cfg: func(c *LogConfig) { small(c); c.RetentionBytes = 100 }, setup: func(e *ioEnv) {
			fill(5)(e)
			e.log.UpdateHighWatermark(e.log.LogEndOffset())
		}, op: vfs.OpRename, suffix: LogFileSuffix,
			call: func(e *ioEnv) error {
				_, err := e.log.DeleteOldSegments()
				return err
			}, wantOp: "delete segment"},
		{name: "flush sync", cfg: smallUnflushed, setup: func(e *ioEnv) {
			fill(1)(e)
			if err := e.flush(); err != nil {
				e.t.Fatal(err)
			}
			fill(1)(e)
		}, op: vfs.OpSync, suffix: LogFileSuffix,
			call: func(e *ioEnv) error { return e.flush() }, wantOp: "flush"},
		// Forgetting where the newest batches lie (tailBatches, as after
		// a restart) makes the read scan the file's batch headers.
		{name: "read", cfg: small, setup: func(e *ioEnv) {
			fill(3)(e)
			for _, s := range e.log.segs() {
				s.tail.reset(false)
			}
		}, op: vfs.OpRead, suffix: LogFileSuffix,
			call: func(e *ioEnv) error {
				_, err := e.log.Read(e.history[1].BaseOffset(), 1<<20, FetchLogEnd, true)
				return err
			}, wantOp: "read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newIOEnv(t, c.cfg)
			c.setup(e)
			rpBefore := e.log.RecoveryPoint()
			e.arm(c.op, c.suffix)
			err := c.call(e)
			if c.deferred {
				if err != nil {
					t.Fatalf("%s: the call itself failed: %v", c.name, err)
				}
				err = e.log.check()
			}
			var se *StorageError
			if !errors.As(err, &se) || !errors.Is(err, kerr.KafkaStorageError) || !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("%s: got %v (%T), want a *StorageError wrapping the injected error and KAFKA_STORAGE_ERROR", c.name, err, err)
			}
			if se.Op != c.wantOp || se.Dir != e.dir {
				t.Errorf("%s: StorageError op %q dir %q, want op %q dir %q", c.name, se.Op, se.Dir, c.wantOp, e.dir)
			}
			ioCheckOffline(t, e, se)
			// The owner hears of the failure once, however many calls
			// answer with it (the broker halts on it).
			if len(e.failures) != 1 || e.failures[0] != se {
				t.Errorf("%s: OnFailure heard %v, want the StorageError once", c.name, e.failures)
			}

			// Restart: the disk as a crash would leave it, no injector.
			if err := e.log.Close(); err != se {
				t.Errorf("Close of the failed log: %v, want the StorageError", err)
			}
			for _, rp := range []int64{0, rpBefore} {
				disk := e.mem.CrashClone(vfs.CrashOptions{})
				o := Options{FS: disk, Clock: clock.NewManual(e.clock.Now()), Scheduler: InlineScheduler{}, Config: e.cfg, RecoveryPoint: rp}
				var stats crashStats
				exp := crashExpect{versions: [][]crashBatch{e.history}, floor: crashFloor(e.history, e.durable), logStartCeil: e.log.LogStartOffset()}
				if problems := crashCheck(disk, e.dir, o, exp, &stats); len(problems) > 0 {
					t.Errorf("%s: after restart with recovery point %d:\n  %s", c.name, rp, strings.Join(problems, "\n  "))
				}
			}
			if len(crashFloor(e.history, e.durable)) == 0 {
				t.Fatalf("%s: the case acknowledged no flushed batch, so the restart checks nothing", c.name)
			}
		})
	}
}

// ioCheckOffline checks that every call on a failed log returns its
// StorageError and touches no file.
func ioCheckOffline(t *testing.T, e *ioEnv, se *StorageError) {
	t.Helper()
	l := e.log
	before := e.fsOps.Load()
	leo := l.LogEndOffset()
	follower := e.build(ioAppend{records: 1, epoch: 1})
	record.Batch(follower).SetBaseOffset(leo)
	calls := map[string]func() error{
		"AppendAsLeader": func() error {
			_, err := l.AppendAsLeader(e.build(ioAppend{records: 1, epoch: 1}), 1, record.OriginClient)
			return err
		},
		"AppendAsFollower": func() error { _, err := l.AppendAsFollower(follower); return err },
		"Read":             func() error { _, err := l.Read(l.LogStartOffset(), 1<<20, FetchLogEnd, true); return err },
		"Read committed":   func() error { _, err := l.Read(l.LogStartOffset(), 1<<20, FetchTxnCommitted, true); return err },
		"TruncateTo":       func() error { _, err := l.TruncateTo(l.LogStartOffset()); return err },
		"TruncateFullyAndStartAt": func() error {
			return l.TruncateFullyAndStartAt(leo + 10)
		},
		"Flush":             l.Flush,
		"Roll":              l.Roll,
		"DeleteOldSegments": func() error { _, err := l.DeleteOldSegments(); return err },
		"FetchOffsetByTimestamp": func() error {
			_, _, err := l.FetchOffsetByTimestamp(0)
			return err
		},
		"FetchOffsetByTimestamp(latest)": func() error {
			_, _, err := l.FetchOffsetByTimestamp(LatestTimestamp)
			return err
		},
		"MaybeIncrementLogStartOffset": func() error { _, err := l.MaybeIncrementLogStartOffset(leo); return err },
		"RemoveExpiredProducers":       l.RemoveExpiredProducers,
	}
	names := make([]string, 0, len(calls))
	for n := range calls {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := calls[n](); err != se {
			t.Errorf("%s on the failed log: %v, want the same StorageError %v", n, err, se)
		}
	}
	if n := e.fsOps.Load() - before; n != 0 {
		t.Errorf("the failed log did %d filesystem operations after failing", n)
	}
	if got := l.LogEndOffset(); got != leo {
		t.Errorf("the failed log's end offset moved from %d to %d", leo, got)
	}
}

func TestValidationErrorsKeepLogOnline(t *testing.T) {
	cases := []struct {
		name string
		call func(e *ioEnv) error
		want error // errors.Is target
	}{
		{"corrupt CRC", func(e *ioEnv) error {
			b := e.build(ioAppend{records: 2, epoch: 1})
			b[len(b)-1] ^= 0xff
			_, err := e.log.AppendAsLeader(b, 1, record.OriginClient)
			return err
		}, kerr.CorruptMessage},
		{"truncated batch", func(e *ioEnv) error {
			b := e.build(ioAppend{records: 2, epoch: 1})
			_, err := e.log.AppendAsLeader(b[:len(b)-5], 1, record.OriginClient)
			return err
		}, kerr.CorruptMessage},
		{"client control batch", func(e *ioEnv) error {
			b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: 9, Timestamp: e.clock.Now().UnixMilli()}, true, 0)
			_, err := e.log.AppendAsLeader(b, 1, record.OriginClient)
			return err
		}, kerr.InvalidRecord},
		{"out of order sequence", func(e *ioEnv) error {
			e.seqs[1] += 5
			return e.append(ioAppend{records: 1, epoch: 1, pid: 1})
		}, kerr.OutOfOrderSequenceNumber},
		{"too large", func(e *ioEnv) error {
			e.log.SetConfig(func() LogConfig { c := e.cfg; c.MaxMessageBytes = 100; return c }())
			defer e.log.SetConfig(e.cfg)
			return e.append(ioAppend{records: 3, epoch: 1})
		}, kerr.MessageTooLarge},
		{"follower append below the log end", func(e *ioEnv) error {
			b := e.build(ioAppend{records: 1, epoch: 1})
			_, err := e.log.AppendAsFollower(b) // base offset 0
			var u *UnexpectedAppendOffsetError
			if errors.As(err, &u) && u.FirstOffset == 0 && u.LastOffset == 0 {
				return nil
			}
			return fmt.Errorf("want UnexpectedAppendOffsetError for [0, 0], got %v", err)
		}, nil},
		{"read out of range", func(e *ioEnv) error {
			_, err := e.log.Read(e.log.LogEndOffset()+1, 1<<20, FetchLogEnd, true)
			return err
		}, kerr.OffsetOutOfRange},
		{"log start past the high watermark", func(e *ioEnv) error {
			_, err := e.log.MaybeIncrementLogStartOffset(e.log.LogEndOffset())
			return err
		}, kerr.OffsetOutOfRange},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newIOEnv(t, func(c *LogConfig) { c.FlushMessages = 1 })
			e.mustAppend(ioAppend{records: 2, epoch: 1, pid: 1})
			leo := e.log.LogEndOffset()
			err := c.call(e)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
			} else if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if errors.Is(err, kerr.KafkaStorageError) {
				t.Fatalf("a validation error is a KAFKA_STORAGE_ERROR: %v", err)
			}
			if f := e.log.check(); f != nil {
				t.Fatalf("the log is offline after a validation error: %v", f)
			}
			if got := e.log.LogEndOffset(); got != leo {
				t.Fatalf("a rejected call moved the log end offset from %d to %d", leo, got)
			}
			// Still online: the next append lands and reads back.
			e.seqs[1] = 2
			e.mustAppend(ioAppend{records: 1, epoch: 1, pid: 1})
			got, _, err := crashReadAll(e.log, 0, FetchLogEnd)
			if err != nil || !crashSameBatches(got, e.history) {
				t.Fatalf("after the rejection the log reads %s (%v), want %s", crashDescribe(got), err, crashDescribe(e.history))
			}
		})
	}
}

// TestIOErrorDuringRecovery fails each kind of operation, at each of its
// occurrences, while Open recovers a crash image, then restarts on the
// image the failed Open left. Open must return the error (not panic, not
// swallow it), and the restart must pass every crash-test invariant: a
// recovery interrupted by a dead disk is itself recoverable. A failed Stat
// is the exception: Open takes it for a missing file, which only makes it
// do more (create a directory that exists, rescan a segment whose index it
// could not see), so it may succeed.
func TestIOErrorDuringRecovery(t *testing.T) {
	type image struct {
		name string
		disk *vfs.MemFS
		exp  crashExpect
		cfg  LogConfig
	}
	var images []image
	for _, w := range crashWorkloads() {
		if w.name != "transactions" && w.name != "truncation" {
			continue
		}
		count := newCrashRun(w, -1, nil)
		models, err := count.runSteps(w)
		if err != nil {
			t.Fatal(err)
		}
		// Crash late, keeping a torn tail so recovery has a batch to cut.
		r := newCrashRun(w, count.fs.n-1, []uint64{1})
		if _, err := r.runSteps(w); err != nil {
			t.Fatal(err)
		}
		m := models[r.crashedIn]
		prev := models[r.crashedIn-1]
		images = append(images, image{w.name, r.fs.torn[0], crashExpect{versions: m.versions,
			floor: crashFloor(m.current(), min(prev.durable, m.durable)), logStartCeil: max(prev.logStart, m.logStart)}, r.cfg})
	}
	ops := []vfs.Op{vfs.OpCreate, vfs.OpOpen, vfs.OpRead, vfs.OpWrite, vfs.OpSync, vfs.OpTruncate, vfs.OpRemove,
		vfs.OpRename, vfs.OpMkdir, vfs.OpList, vfs.OpStat, vfs.OpSyncDir}
	checked := 0
	for _, img := range images {
		for _, op := range ops {
			for skip := int64(0); ; skip++ {
				disk := img.disk.CrashClone(vfs.CrashOptions{})
				var hit atomic.Bool
				inner := vfs.OnOp(op, skip)
				efs := vfs.WithErrors(disk, func(o vfs.Op, path string) error {
					err := inner(o, path)
					if err != nil {
						hit.Store(true)
					}
					return err
				})
				o := Options{FS: efs, Clock: clock.NewManual(time.UnixMilli(1_700_000_100_000)), Scheduler: InlineScheduler{}, Config: img.cfg}
				l, _, err := crashOpen("/data/topic-0", o)
				if !hit.Load() {
					if err != nil {
						t.Fatalf("%s: open with no injected error: %v", img.name, err)
					}
					l.Close()
					break // every occurrence of op has been failed
				}
				if err == nil {
					l.Close()
					if op != vfs.OpStat {
						t.Errorf("%s: %v #%d failed but Open succeeded", img.name, op, skip)
					}
				} else if !errors.Is(err, vfs.ErrInjected) {
					t.Errorf("%s: %v #%d failed and Open returned %v, which does not wrap it", img.name, op, skip, err)
				}
				o.FS = disk.CrashClone(vfs.CrashOptions{})
				var stats crashStats
				if problems := crashCheck(o.FS.(*vfs.MemFS), "/data/topic-0", o, img.exp, &stats); len(problems) > 0 {
					t.Errorf("%s: restart after %v #%d failed the first recovery:\n  %s", img.name, op, skip, strings.Join(problems, "\n  "))
				}
				checked++
			}
		}
	}
	t.Logf("%d failed recoveries restarted", checked)
}

// TestErrorAfterCloseIsNotADiskFailure: a call already past its check
// when Close closed the files (a fetch racing a topic deletion) fails on
// a closed file. That is the close's doing: the log answers ErrLogClosed
// and its owner does not hear of a failure, which would halt the broker.
func TestErrorAfterCloseIsNotADiskFailure(t *testing.T) {
	e := newIOEnv(t, nil)
	e.mustAppend(ioAppend{records: 2, epoch: 1})
	segs := e.log.segs()
	if err := e.log.Close(); err != nil {
		t.Fatal(err)
	}
	// What the racing read meets: the segment's file, closed under it.
	_, _, _, err := segs[0].read(0, 1<<20, segs[0].Size(), true, make([]byte, record.HeaderSize))
	if err == nil {
		t.Fatal("reading a closed segment succeeded")
	}
	if got := e.log.fail("read", err); got != ErrLogClosed {
		t.Errorf("fail after Close: %v, want ErrLogClosed", got)
	}
	if len(e.failures) != 0 {
		t.Errorf("OnFailure heard %v after Close, want nothing", e.failures)
	}
}
