package storage

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// The benchmarks here measure the engine on the real filesystem (vfs.OS
// under b.TempDir) with the wall clock, because the figures they produce are
// compared against plain file IO on the same disk. Run them with
//
//	go test -run '^$' -bench . -benchtime=3s ./storage/
//
// Each reports its comparison as a custom metric: BenchmarkAppend/paired
// reports pct_of_raw (log throughput as a percentage of plain writes),
// BenchmarkAppendFsync/paired reports group_speedup (group commit against
// one fsync per append), BenchmarkRead reports allocs/read.

const (
	benchValueSize    = 1024
	benchAppendRecs   = 16 // 16 x 1 KiB records: a 16 KiB produce batch
	benchAppenders    = 8
	benchReadMaxBytes = 1 << 20
)

// benchBatch builds one uncompressed client batch of n records with
// valueSize-byte values, timestamped now. AppendAsLeader rewrites only the
// base offset and leader epoch (outside the CRC) of a CreateTime batch, so
// the same bytes can be appended again once the base offset is reset to 0
// (see resetForReappend).
func benchBatch(tb testing.TB, n, valueSize int) []byte {
	tb.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		v := make([]byte, valueSize)
		for j := range v {
			v[j] = byte(i + j) // not all zeros, in case a filesystem compresses
		}
		recs[i] = record.Record{KeyLen: -1, Value: v, ValueLen: int32(valueSize)}
	}
	b, err := record.Build(record.BatchSpec{
		ProducerID:    record.NoProducerID,
		ProducerEpoch: record.NoProducerEpoch,
		BaseSequence:  record.NoSequence,
		BaseTimestamp: time.Now().UnixMilli(),
	}, recs, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// openBenchLog opens a fresh log in dir on fsys with the real clock and the
// default (goroutine) scheduler, as the broker runs it.
func openBenchLog(tb testing.TB, fsys vfs.FS, dir string, cfg LogConfig) *Log {
	tb.Helper()
	l, _, err := Open(dir, Options{FS: fsys, Clock: clock.Real{}, Config: cfg})
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func closeBenchLog(tb testing.TB, l *Log) {
	tb.Helper()
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
}

// resetForReappend makes an appended batch look freshly produced again.
// AppendAsLeader assigns the base offset in place, and a client batch must
// arrive with base offset 0 (UnifiedLog.analyzeAndValidateRecords rejects
// anything else with INVALID_RECORD), so a reused buffer is reset first.
// The field is outside the CRC: this is an 8-byte store.
func resetForReappend(buf []byte) { record.Batch(buf).SetBaseOffset(0) }

// appendN appends buf n times and checks the offsets it got, so a
// benchmark that silently stopped appending cannot report a figure.
func appendN(tb testing.TB, l *Log, buf []byte, n int) {
	tb.Helper()
	perBatch := int64(record.Batch(buf).RecordCount())
	start := l.logEndOffset()
	for i := range n {
		resetForReappend(buf)
		info, err := l.AppendAsLeader(buf, 0, record.OriginClient)
		if err != nil {
			tb.Fatal(err)
		}
		if want := start + int64(i)*perBatch; info.FirstOffset != want {
			tb.Fatalf("append %d: first offset %d, want %d", i, info.FirstOffset, want)
		}
	}
}

// rawAppendN is the baseline for appendN: the same bytes written n times
// with plain (*os.File).Write to one file, no validation, no index.
func rawAppendN(tb testing.TB, f *os.File, buf []byte, n int) {
	tb.Helper()
	for range n {
		if _, err := f.Write(buf); err != nil {
			tb.Fatal(err)
		}
	}
}

func createRaw(tb testing.TB, path string) *os.File {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// BenchmarkAppend measures unsynced appends of 16 KiB batches (16 x 1 KiB
// records) with the default flush.messages and segment.bytes (1 GiB, so
// rolls are rare), against plain file writes of the same bytes.
//
// "log" and "raw" run for the usual b.N and report MB/s; they write b.N
// batches each, so with -benchtime=3s they write gigabytes and end up
// bound by the kernel's dirty-page writeback as much as by our code.
// "paired" is the robust comparison: every op writes the same 32 MiB
// through the log and through a plain file, alternating which goes first,
// syncing and deleting both outside the timed region so each phase starts
// from the same clean page cache. It reports pct_of_raw = log MB/s as a
// percentage of raw MB/s over all ops (target: >= 70).
func BenchmarkAppend(b *testing.B) {
	buf := benchBatch(b, benchAppendRecs, benchValueSize)
	cfg := DefaultLogConfig()

	b.Run("log", func(b *testing.B) {
		l := openBenchLog(b, vfs.OS{}, filepath.Join(b.TempDir(), "topic-0"), cfg)
		b.SetBytes(int64(len(buf)))
		b.ResetTimer()
		appendN(b, l, buf, b.N)
		b.StopTimer()
		if got, want := l.logEndOffset(), int64(b.N*benchAppendRecs); got != want {
			b.Fatalf("log end offset %d, want %d", got, want)
		}
		closeBenchLog(b, l)
	})

	b.Run("raw", func(b *testing.B) {
		f := createRaw(b, filepath.Join(b.TempDir(), "raw.log"))
		b.SetBytes(int64(len(buf)))
		b.ResetTimer()
		rawAppendN(b, f, buf, b.N)
		b.StopTimer()
		if st, err := f.Stat(); err != nil || st.Size() != int64(b.N*len(buf)) {
			b.Fatalf("raw file size %v (%v), want %d", st.Size(), err, b.N*len(buf))
		}
		f.Close()
	})

	b.Run("paired", func(b *testing.B) {
		const batches = 32 << 20 / (benchAppendRecs * benchValueSize) // ~32 MiB per phase
		bytesPerPhase := int64(batches * len(buf))
		dir := b.TempDir()
		var logDur, rawDur time.Duration
		logPhase := func(i int) {
			d := filepath.Join(dir, "topic-"+strconv.Itoa(i))
			b.StopTimer()
			l := openBenchLog(b, vfs.OS{}, d, cfg)
			b.StartTimer()
			t0 := time.Now()
			appendN(b, l, buf, batches)
			logDur += time.Since(t0)
			b.StopTimer()
			if got := l.Size(); got != bytesPerPhase {
				b.Fatalf("log size %d, want %d", got, bytesPerPhase)
			}
			closeBenchLog(b, l) // fsyncs: leaves no dirty pages for the next phase
			if err := os.RemoveAll(d); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		rawPhase := func(i int) {
			p := filepath.Join(dir, "raw-"+strconv.Itoa(i))
			b.StopTimer()
			f := createRaw(b, p)
			b.StartTimer()
			t0 := time.Now()
			rawAppendN(b, f, buf, batches)
			rawDur += time.Since(t0)
			b.StopTimer()
			if err := f.Sync(); err != nil { // as the log's Close does
				b.Fatal(err)
			}
			f.Close()
			if err := os.Remove(p); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		for i := range b.N {
			// Alternate the order so neither phase always inherits the
			// other's writeback.
			if i%2 == 0 {
				logPhase(i)
				rawPhase(i)
			} else {
				rawPhase(i)
				logPhase(i)
			}
		}
		total := float64(b.N) * float64(bytesPerPhase)
		logMBs := total / 1e6 / logDur.Seconds()
		rawMBs := total / 1e6 / rawDur.Seconds()
		b.ReportMetric(logMBs, "log_MB/s")
		b.ReportMetric(rawMBs, "raw_MB/s")
		b.ReportMetric(100*logMBs/rawMBs, "pct_of_raw")
	})
}

// syncCountingFS is vfs.OS counting fsyncs, so the fsync benchmarks can
// report how many a group commit saves. logSyncs counts only .log files:
// one per flush of the active segment, i.e. per group commit.
type syncCountingFS struct {
	vfs.OS
	syncs, logSyncs atomic.Int64
}

type syncCountingFile struct {
	vfs.File
	fs    *syncCountingFS
	isLog bool
}

func (f syncCountingFile) Sync() error {
	f.fs.syncs.Add(1)
	if f.isLog {
		f.fs.logSyncs.Add(1)
	}
	return f.File.Sync()
}

func (c *syncCountingFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return syncCountingFile{File: f, fs: c, isLog: strings.HasSuffix(f.Name(), LogFileSuffix)}, nil
}

func (c *syncCountingFS) Create(name string) (vfs.File, error) { return c.wrap(c.OS.Create(name)) }
func (c *syncCountingFS) OpenReadWrite(name string) (vfs.File, error) {
	return c.wrap(c.OS.OpenReadWrite(name))
}
func (c *syncCountingFS) Open(name string) (vfs.File, error) { return c.wrap(c.OS.Open(name)) }

// fsyncRun is the outcome of one fsync-benchmark phase.
type fsyncRun struct {
	appends         int64
	elapsed         time.Duration
	syncs, logSyncs int64
}

// runFsyncAppends runs n appends of a 1-record (1 KiB) batch from
// benchAppenders goroutines against a fresh log in dir and times them
// (the open and close are not timed).
//
// group: flush.messages=1, so every AppendAsLeader returns only once its
// data is fsynced; concurrent appenders share fsyncs (flusher).
//
// per-append: the same Log with flush.messages=MaxInt64, and each
// appender's append plus l.Flush() serialised behind one mutex, so every
// append pays its own fsync: what the log would do without group commit.
// We use the Log rather than raw writes+fsync because then both modes do
// exactly the same work per append and per flush (validation, index
// writes, and the .log, .index and .timeindex fsyncs of a segment flush),
// so the ratio isolates group commit. A raw baseline would pay one fsync
// per append instead of the Log's three per flush, and the ratio would mix
// group commit with the cost of the index fsyncs.
func runFsyncAppends(tb testing.TB, dir string, n int64, group bool, timer func(on bool)) fsyncRun {
	tb.Helper()
	cfs := &syncCountingFS{}
	cfg := DefaultLogConfig()
	if group {
		cfg.FlushMessages = 1
	} else {
		cfg.FlushMessages = math.MaxInt64
	}
	l := openBenchLog(tb, cfs, dir, cfg)
	bufs := make([][]byte, benchAppenders)
	for i := range bufs {
		// One buffer per appender: AppendAsLeader rewrites it in place.
		bufs[i] = benchBatch(tb, 1, benchValueSize)
	}
	syncs0, logSyncs0 := cfs.syncs.Load(), cfs.logSyncs.Load()

	var (
		next   atomic.Int64
		serial sync.Mutex
		wg     sync.WaitGroup
		errs   = make(chan error, benchAppenders)
	)
	timer(true)
	t0 := time.Now()
	for g := range benchAppenders {
		wg.Add(1)
		go func(buf []byte) {
			defer wg.Done()
			for next.Add(1) <= n {
				if group {
					resetForReappend(buf)
					if _, err := l.AppendAsLeader(buf, 0, record.OriginClient); err != nil {
						errs <- err
						return
					}
					continue
				}
				serial.Lock()
				resetForReappend(buf)
				_, err := l.AppendAsLeader(buf, 0, record.OriginClient)
				if err == nil {
					err = l.Flush()
				}
				serial.Unlock()
				if err != nil {
					errs <- err
					return
				}
			}
		}(bufs[g])
	}
	wg.Wait()
	elapsed := time.Since(t0)
	timer(false)
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	if got := l.logEndOffset(); got != n {
		tb.Fatalf("log end offset %d after %d appends", got, n)
	}
	// Every append returned after its flush, so all of them are durable.
	if rp := l.RecoveryPoint(); rp != n {
		tb.Fatalf("recovery point %d after %d synced appends", rp, n)
	}
	r := fsyncRun{
		appends:  n,
		elapsed:  elapsed,
		syncs:    cfs.syncs.Load() - syncs0,
		logSyncs: cfs.logSyncs.Load() - logSyncs0,
	}
	if !group && r.logSyncs != n {
		tb.Fatalf("per-append: %d .log fsyncs for %d appends", r.logSyncs, n)
	}
	closeBenchLog(tb, l)
	if err := os.RemoveAll(dir); err != nil {
		tb.Fatal(err)
	}
	return r
}

func reportFsyncRun(b *testing.B, r fsyncRun) {
	b.ReportMetric(float64(r.appends)/r.elapsed.Seconds(), "appends/s")
	b.ReportMetric(float64(r.syncs)/float64(r.appends), "fsyncs/append")
	b.ReportMetric(float64(r.logSyncs)/float64(r.appends), "log_fsyncs/append")
}

// BenchmarkAppendFsync measures durable appends (flush.messages=1) from 8
// concurrent appenders, each appending 1-record 1 KiB batches: "group" is
// the Log's group commit, "per-append" pays one fsync per append (see
// runFsyncAppends). One op is one append. "paired" runs a fixed 512 appends
// in each mode per op, alternating the order, and reports group_speedup =
// group appends/s / per-append appends/s (target: >= 4).
func BenchmarkAppendFsync(b *testing.B) {
	timer := func(b *testing.B) func(bool) {
		return func(on bool) {
			if on {
				b.StartTimer()
			} else {
				b.StopTimer()
			}
		}
	}
	for _, mode := range []struct {
		name  string
		group bool
	}{{"group", true}, {"per-append", false}} {
		b.Run(mode.name, func(b *testing.B) {
			b.StopTimer()
			r := runFsyncAppends(b, filepath.Join(b.TempDir(), "topic-0"), int64(b.N), mode.group, timer(b))
			reportFsyncRun(b, r)
		})
	}
	b.Run("paired", func(b *testing.B) {
		const perPhase = 512
		dir := b.TempDir()
		var group, single fsyncRun
		add := func(dst *fsyncRun, r fsyncRun) {
			dst.appends += r.appends
			dst.elapsed += r.elapsed
			dst.syncs += r.syncs
			dst.logSyncs += r.logSyncs
		}
		b.StopTimer()
		for i := range b.N {
			phases := []bool{true, false}
			if i%2 == 1 {
				phases = []bool{false, true}
			}
			for _, g := range phases {
				r := runFsyncAppends(b, filepath.Join(dir, "topic-"+strconv.Itoa(i)), perPhase, g, timer(b))
				if g {
					add(&group, r)
				} else {
					add(&single, r)
				}
			}
		}
		groupRate := float64(group.appends) / group.elapsed.Seconds()
		singleRate := float64(single.appends) / single.elapsed.Seconds()
		b.ReportMetric(groupRate, "group_appends/s")
		b.ReportMetric(singleRate, "per-append_appends/s")
		b.ReportMetric(groupRate/singleRate, "group_speedup")
		b.ReportMetric(float64(group.syncs)/float64(group.appends), "group_fsyncs/append")
		b.ReportMetric(float64(single.syncs)/float64(single.appends), "per-append_fsyncs/append")
	})
}

// fillReadLog appends totalRecords 1 KiB records in batches of perBatch
// to a fresh log and returns it.
func fillReadLog(tb testing.TB, fsys vfs.FS, dir string, perBatch, totalRecords, valueSize int) *Log {
	tb.Helper()
	l := openBenchLog(tb, fsys, dir, DefaultLogConfig())
	appendN(tb, l, benchBatch(tb, perBatch, valueSize), totalRecords/perBatch)
	return l
}

// walkSlice advances a fetch position over the whole batches of a read
// result the way a fetch session does, without copying the data: only the
// batch headers are read, into hdr. It returns the next offset to fetch and
// the number of whole batches in the slice.
func walkSlice(tb testing.TB, fd FetchDataInfo, from int64, hdr []byte) (next int64, batches int) {
	s := fd.Records
	pos, end := s.Position, s.Position+int64(s.Size)
	next = from
	for pos+record.HeaderSize <= end {
		if n, err := s.File.ReadAt(hdr[:record.HeaderSize], pos); n < record.HeaderSize {
			tb.Fatalf("header at %d: %d bytes, %v", pos, n, err)
		}
		h := record.Batch(hdr[:record.HeaderSize])
		size := int64(h.Size())
		if pos+size > end {
			break // a trailing partial batch: fetched again next time
		}
		next = h.NextOffset()
		batches++
		pos += size
	}
	return next, batches
}

// BenchmarkRead measures sequential catch-up reads (FetchLogEnd, 1 MiB per
// Read) over a pre-filled 32 MiB log of 1 KiB records, for batches of 1, 16
// and 256 records. One op is one Read plus the header walk that finds the
// next offset; ns/read times the Read call alone. allocs/read is measured
// with testing.AllocsPerRun on Read alone; allocs/op (b.ReportAllocs)
// covers Read plus the walk, which itself allocates nothing.
func BenchmarkRead(b *testing.B) {
	const totalRecords = 32 << 10 // 32 MiB of 1 KiB values
	for _, perBatch := range []int{1, 16, 256} {
		b.Run("batch="+strconv.Itoa(perBatch), func(b *testing.B) {
			l := fillReadLog(b, vfs.OS{}, filepath.Join(b.TempDir(), "topic-0"), perBatch, totalRecords, benchValueSize)
			defer closeBenchLog(b, l)
			leo := l.logEndOffset()
			if leo != totalRecords {
				b.Fatalf("log end offset %d, want %d", leo, totalRecords)
			}
			hdr := make([]byte, record.HeaderSize)
			var (
				off               int64
				readTime          time.Duration
				bytesRead, nBatch int64
			)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				fd, err := l.Read(off, benchReadMaxBytes, FetchLogEnd, true)
				readTime += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				next, n := walkSlice(b, fd, off, hdr)
				if n == 0 {
					b.Fatalf("read at %d returned %d bytes and no whole batch", off, fd.Records.Size)
				}
				bytesRead += int64(fd.Records.Size)
				nBatch += int64(n)
				off = next
				if off == leo {
					off = 0 // caught up: start the next pass
				}
			}
			b.StopTimer()
			allocs := testing.AllocsPerRun(100, func() {
				if _, err := l.Read(0, benchReadMaxBytes, FetchLogEnd, true); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(allocs, "allocs/read")
			b.ReportMetric(float64(readTime.Nanoseconds())/float64(b.N), "ns/read")
			b.ReportMetric(float64(nBatch)/float64(b.N), "batches/read")
			b.ReportMetric(float64(bytesRead)/1e6/b.Elapsed().Seconds(), "MB/s")
		})
	}
}

// TestReadAllocsIndependentOfBatchCount checks that what one Read
// allocates does not grow with the number of batches it returns: a read
// hands out a FileSlice over the segment and must not touch the batches
// inside it. A fetch of 500 small batches and a fetch of one batch must
// allocate the same small constant.
func TestReadAllocsIndependentOfBatchCount(t *testing.T) {
	for _, fsCase := range []struct {
		name string
		fs   func(t *testing.T) (vfs.FS, string)
	}{
		{"os", func(t *testing.T) (vfs.FS, string) { return vfs.OS{}, filepath.Join(t.TempDir(), "topic-0") }},
		{"mem", func(t *testing.T) (vfs.FS, string) { return vfs.NewMem(), "/data/topic-0" }},
	} {
		t.Run(fsCase.name, func(t *testing.T) {
			fsys, dir := fsCase.fs(t)
			const batches = 500
			l := fillReadLog(t, fsys, dir, 1, batches, 100)
			defer closeBenchLog(t, l)
			batchSize := int32(l.Size() / batches)
			if int64(batchSize)*batches != l.Size() {
				t.Fatalf("log size %d is not %d equal batches", l.Size(), batches)
			}
			hdr := make([]byte, record.HeaderSize)
			cases := []struct {
				name     string
				offset   int64
				maxBytes int32
				batches  int
			}{
				{"one batch", 0, batchSize, 1},
				{"500 batches", 0, 1 << 20, batches},
				// From the middle of the segment the read first scans
				// forward from the offset index's floor entry.
				{"one batch mid-segment", 250, batchSize, 1},
				{"250 batches mid-segment", 250, 1 << 20, 250},
			}
			var allocs []float64
			for _, c := range cases {
				fd, err := l.Read(c.offset, c.maxBytes, FetchLogEnd, true)
				if err != nil {
					t.Fatal(err)
				}
				next, n := walkSlice(t, fd, c.offset, hdr)
				if n != c.batches || next != c.offset+int64(c.batches) {
					t.Fatalf("%s: slice holds %d batches ending at %d, want %d ending at %d",
						c.name, n, next, c.batches, c.offset+int64(c.batches))
				}
				a := testing.AllocsPerRun(200, func() {
					if _, err := l.Read(c.offset, c.maxBytes, FetchLogEnd, true); err != nil {
						t.Fatal(err)
					}
				})
				t.Logf("%s: %v allocs per Read", c.name, a)
				allocs = append(allocs, a)
			}
			// The one allocation is the Read's batch-header scratch buffer:
			// it is handed to vfs.File.ReadAt, an interface call, so escape
			// analysis moves it to the heap. It is one per Read however many
			// batches the slice holds or the index scan passes over.
			const want = 1
			for i, c := range cases {
				if allocs[i] != want {
					t.Errorf("%s: %v allocs per Read, want %d (the same for any number of batches)", c.name, allocs[i], want)
				}
			}
		})
	}
}
