package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// kvBatch builds a batch of keyed records, "k=v" each, "k=" a tombstone.
func kvBatch(t testing.TB, ts int64, codec record.Codec, kvs ...string) []byte {
	t.Helper()
	var recs []record.Record
	for _, s := range kvs {
		k, v, _ := strings.Cut(s, "=")
		r := record.Record{Key: []byte(k), KeyLen: int32(len(k)), Value: []byte(v), ValueLen: int32(len(v))}
		if v == "" {
			r.Value, r.ValueLen = nil, -1
		}
		recs = append(recs, r)
	}
	b, err := record.Build(record.BatchSpec{ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch,
		BaseSequence: record.NoSequence, BaseTimestamp: ts, Codec: codec}, recs, record.NewCompressor())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func compactEnv(t *testing.T) *testEnv {
	e := newTestEnv(t)
	e.cfg.CleanupPolicy = CleanupPolicy{Compact: true}
	return e
}

func mustAppend(t testing.TB, l *Log, buf []byte) AppendInfo {
	t.Helper()
	info, err := l.AppendAsLeader(buf, 0, record.OriginClient)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// keysAt lists "offset:key=value" for every record in the log.
func keysAt(t *testing.T, l *Log) []string {
	t.Helper()
	var out []string
	for _, r := range readPresentRecords(t, l) {
		v := string(r.value)
		if r.null {
			v = "null"
		}
		out = append(out, fmt.Sprintf("%d:%s=%s", r.offset, r.key, v))
	}
	return out
}

// A map too small for the dirty range cleans up to where it filled, and
// the next cleaning goes on from there (Kafka's endOffset =
// map.latestOffset + 1).
func TestCleanWithFullOffsetMap(t *testing.T) {
	e := compactEnv(t)
	l, _ := e.open(e.options(true))
	defer l.Close()
	for i := range 10 {
		mustAppend(t, l, kvBatch(t, e.clock.Now().UnixMilli(), record.CodecNone, fmt.Sprintf("k%d=a", i%5)))
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	// 4 slots at load factor 0.9 hold 3 keys: k0, k1, k2 at offsets 0-2.
	res, err := l.Clean(context.Background(), CleanOptions{DedupeBufferSize: 4 * offsetMapEntrySize})
	if err != nil {
		t.Fatal(err)
	}
	if res.EndOffset != 3 || res.MapRecords != 3 || l.CleanerCheckpoint() != 3 {
		t.Fatalf("first cleaning %+v, checkpoint %d; want end 3 after mapping 3 keys", res, l.CleanerCheckpoint())
	}
	// Offsets 0-2 are below the end but their keys recur later, unmapped:
	// they stay until a cleaning maps the later ones.
	if got := len(keysAt(t, l)); got != 10 {
		t.Fatalf("%d records after the first cleaning, want 10", got)
	}
	for _, want := range []int64{6, 9, 10} {
		res, err = l.Clean(context.Background(), CleanOptions{DedupeBufferSize: 4 * offsetMapEntrySize})
		if err != nil || res.EndOffset != want {
			t.Fatalf("cleaning ended at %d (%v), want %d", res.EndOffset, err, want)
		}
	}
	got := keysAt(t, l)
	want := []string{"5:k0=a", "6:k1=a", "7:k2=a", "8:k3=a", "9:k4=a"}
	if !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
}

// The cleaner stops at the last stable offset (an open transaction), at the
// high watermark, at the active segment and at min.compaction.lag.ms, and
// max.compaction.lag.ms makes a log due whatever its ratio.
func TestCleanableRange(t *testing.T) {
	e := compactEnv(t)
	e.cfg.MinCompactionLagMs = 10_000
	e.cfg.MaxCompactionLagMs = 30_000
	l, _ := e.open(e.options(true))
	defer l.Close()
	seg := func(kvs ...string) {
		mustAppend(t, l, kvBatch(t, e.clock.Now().UnixMilli(), record.CodecNone, kvs...))
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	seg("a=1", "b=1") // [0,1]
	seg("a=2")        // [2]
	e.clock.Advance(20 * time.Second)
	seg("b=2") // [3], younger than the lag
	info := l.CleanableInfo()
	if info.FirstUncleanableOffset != 0 {
		t.Fatalf("with the high watermark at 0, first uncleanable %d", info.FirstUncleanableOffset)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	info = l.CleanableInfo()
	if info.FirstDirtyOffset != 0 || info.FirstUncleanableOffset != 3 || info.CleanBytes != 0 || info.NeedCompactionNow {
		t.Fatalf("cleanable %+v; want [0,3) held at segment 3 by min.compaction.lag.ms", info)
	}
	e.clock.Advance(20 * time.Second)
	info = l.CleanableInfo()
	if info.FirstUncleanableOffset != 4 || !info.NeedCompactionNow {
		t.Fatalf("cleanable %+v; want up to the active segment, due by max.compaction.lag.ms", info)
	}
	// An open transaction holds the range at its segment.
	txn, err := record.Build(record.BatchSpec{ProducerID: 3, BaseSequence: 0, Transactional: true, BaseTimestamp: e.clock.Now().UnixMilli()},
		[]record.Record{{Key: []byte("t"), KeyLen: 1, Value: []byte("x"), ValueLen: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, txn) // [4]
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	seg("c=1") // [5]
	l.UpdateHighWatermark(l.LogEndOffset())
	if info = l.CleanableInfo(); info.FirstUncleanableOffset != 4 {
		t.Fatalf("cleanable %+v; want it held at the open transaction's segment 4", info)
	}
	res, err := l.Clean(context.Background(), CleanOptions{})
	if err != nil || res.EndOffset != 4 {
		t.Fatalf("clean %+v %v", res, err)
	}
	if got, want := keysAt(t, l), []string{"2:a=2", "3:b=2", "4:t=x", "5:c=1"}; !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	if info = l.CleanableInfo(); info.FirstDirtyOffset != 4 || info.DirtyRatio() != 0 {
		t.Fatalf("after cleaning %+v", info)
	}
}

// hookFS runs a hook before the first Create of a path with the given
// suffix: tests use it to change the log while a cleaning runs unlocked.
type hookFS struct {
	vfs.FS
	suffix string
	hook   func()
}

func (h *hookFS) Create(name string) (vfs.File, error) {
	if h.hook != nil && strings.HasSuffix(name, h.suffix) {
		f := h.hook
		h.hook = nil
		f()
	}
	return h.FS.Create(name)
}

// A truncation or a retention deletion while a cleaning writes its segment
// makes the swap give up: nothing is swapped in, nothing is lost, the
// checkpoint stays, no .cleaned file remains (Kafka aborts cleaning around
// truncation).
func TestCleanAbortsWhenTheLogChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(l *Log) error
		want   []string
	}{
		{"truncation", func(l *Log) error { _, err := l.TruncateTo(3); return err }, []string{"0:a=1", "1:b=1", "2:a=2"}},
		{"retention", func(l *Log) error {
			_, err := l.MaybeIncrementLogStartOffset(3)
			if err == nil {
				_, err = l.DeleteOldSegments()
			}
			return err
		}, []string{"3:b=2", "4:c=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := compactEnv(t)
			e.cfg.CleanupPolicy.Delete = true
			e.cfg.RetentionMs, e.cfg.FileDeleteDelayMs = -1, 0
			hook := &hookFS{FS: e.fs, suffix: LogFileSuffix + CleanedFileSuffix}
			o := e.options(true)
			o.FS = hook
			l, _ := e.open(o)
			defer l.Close()
			for _, kvs := range [][]string{{"a=1", "b=1"}, {"a=2"}, {"b=2"}, {"c=1"}} {
				mustAppend(t, l, kvBatch(t, e.clock.Now().UnixMilli(), record.CodecNone, kvs...))
				if err := l.Roll(); err != nil {
					t.Fatal(err)
				}
			}
			l.UpdateHighWatermark(l.LogEndOffset())
			var changeErr error
			hook.hook = func() { changeErr = tc.change(l) }
			res, err := l.Clean(context.Background(), CleanOptions{})
			if err != nil || changeErr != nil || !res.Aborted || l.CleanerCheckpoint() != 0 {
				t.Fatalf("clean %+v, %v (change: %v), checkpoint %d; want an aborted cleaning", res, err, changeErr, l.CleanerCheckpoint())
			}
			if got := keysAt(t, l); !slices.Equal(got, tc.want) {
				t.Fatalf("records %v, want %v", got, tc.want)
			}
			names, _ := e.fs.List(e.dir)
			for _, n := range names {
				if strings.Contains(n, CleanedFileSuffix) || strings.Contains(n, SwapFileSuffix) {
					t.Fatalf("%s left behind", n)
				}
			}
			// The next cleaning succeeds.
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
			l.UpdateHighWatermark(l.LogEndOffset())
			if res, err := l.Clean(context.Background(), CleanOptions{}); err != nil || res.Aborted {
				t.Fatalf("second clean %+v %v", res, err)
			}
		})
	}
}

// A read that took a file slice before the swap keeps reading the old
// segment until file.delete.delay.ms has passed, as with retention.
func TestReadsOfReplacedSegmentsFinish(t *testing.T) {
	e := compactEnv(t)
	e.cfg.FileDeleteDelayMs = 1000
	l, _ := e.open(e.options(true))
	defer l.Close()
	mustAppend(t, l, kvBatch(t, e.clock.Now().UnixMilli(), record.CodecNone, "a=1", "b=1"))
	mustAppend(t, l, kvBatch(t, e.clock.Now().UnixMilli(), record.CodecNone, "a=2"))
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	fd, err := l.Read(0, 1<<20, FetchHighWatermark, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Clean(context.Background(), CleanOptions{}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, fd.Records.Size)
	if err := fd.Records.ReadInto(buf); err != nil {
		t.Fatalf("reading the replaced segment before the delete delay: %v", err)
	}
	if b, err := record.ReadBatch(buf); err != nil || b.BaseOffset() != 0 || b.RecordCount() != 2 {
		t.Fatalf("old slice reads %v %v", b, err)
	}
	if got := keysAt(t, l); !slices.Equal(got, []string{"1:b=1", "2:a=2"}) {
		t.Fatalf("new reads see %v", got)
	}
	e.clock.Advance(2 * time.Second)
	if err := l.RemoveDeletedSegments(); err != nil {
		t.Fatal(err)
	}
	if err := fd.Records.ReadInto(buf); err == nil {
		t.Fatal("the replaced segment is still readable after its delete delay")
	}
}

// A follower fetching a cleaned range appends the cleaner's empty batches,
// control ones included, and replays them into the same producer state.
func TestFollowerAppendsCleanedBatches(t *testing.T) {
	e := compactEnv(t)
	l, _ := e.open(e.options(true))
	defer l.Close()
	idem, err := record.Build(record.BatchSpec{ProducerID: 7, BaseSequence: 0, BaseTimestamp: 1},
		[]record.Record{{Key: []byte("a"), KeyLen: 1, Value: []byte("1"), ValueLen: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	idem.SetBaseOffset(0)
	marker := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: 9, Timestamp: 2}, true, 0)
	marker.SetBaseOffset(1)
	var buf []byte
	buf = append(buf, record.EmptyBatch(idem)...)
	buf = append(buf, record.EmptyBatch(marker)...)
	info, err := l.AppendAsFollower(buf)
	if err != nil || info.LastOffset != 1 || l.LogEndOffset() != 2 {
		t.Fatalf("follower append of empty batches: %+v %v", info, err)
	}
	p := l.producers.Producers()
	if len(p) != 1 || p[0].ProducerID != 7 || p[0].LastSequence != 0 {
		t.Fatalf("producers %+v; want producer 7 at sequence 0", p)
	}
}

// Interrupted swaps found at open, as a crash leaves them (Kafka's
// LogLoader): a committed swap (.log.swap) is completed, replacing the
// segments whose base offsets it covers and no others; an uncommitted one
// (a .cleaned file at or below it) is dropped.
func TestCompleteSwaps(t *testing.T) {
	// build writes segments 0 ([0,4]), 5 ([5,9]) and 10 (active, [10,11]),
	// then the given swap files, and opens the log.
	type file struct {
		name    string
		offsets []int64 // batches of one record at these offsets
	}
	build := func(t *testing.T, extra []file) (*Log, *vfs.MemFS) {
		e := compactEnv(t)
		l, _ := e.open(e.options(true))
		for i := range 12 {
			mustAppend(t, l, kvBatch(t, 1000+int64(i), record.CodecNone, fmt.Sprintf("k%d=v%d", i%3, i)))
			if i == 4 || i == 9 {
				if err := l.Roll(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		for _, f := range extra {
			var data []byte
			for _, off := range f.offsets {
				b := kvBatch(t, 1000+off, record.CodecNone, fmt.Sprintf("k%d=v%d", off%3, off))
				record.Batch(b).SetBaseOffset(off)
				data = append(data, b...)
			}
			if err := vfs.WriteFileAtomic(e.fs, e.dir, f.name, data); err != nil {
				t.Fatal(err)
			}
		}
		l, _ = e.open(e.options(false))
		return l, e.fs
	}
	for _, tc := range []struct {
		name  string
		extra []file
		segs  []int64
		keys  []string
		gone  []string
	}{
		{
			name:  "swap covering segment 0 only",
			extra: []file{{"00000000000000000000.log.swap", []int64{3, 4}}, {"00000000000000000000.index.swap", nil}},
			segs:  []int64{0, 5, 10},
			keys:  []string{"3:k0=v3", "4:k1=v4", "5:k2=v5", "6:k0=v6", "7:k1=v7", "8:k2=v8", "9:k0=v9", "10:k1=v10", "11:k2=v11"},
		},
		{
			name:  "swap covering segments 0 and 5",
			extra: []file{{"00000000000000000000.log.swap", []int64{7, 8, 9}}},
			segs:  []int64{0, 10},
			keys:  []string{"7:k1=v7", "8:k2=v8", "9:k0=v9", "10:k1=v10", "11:k2=v11"},
			gone:  []string{"00000000000000000005.log", "00000000000000000005.index"},
		},
		{
			// Everything in the group compacted away: the swap still
			// replaces the segment at its own base offset, and that
			// segment's old indexes go with it.
			name:  "empty swap",
			extra: []file{{"00000000000000000000.log.swap", nil}, {"00000000000000000000.txnindex", nil}},
			segs:  []int64{0, 5, 10},
			keys:  []string{"5:k2=v5", "6:k0=v6", "7:k1=v7", "8:k2=v8", "9:k0=v9", "10:k1=v10", "11:k2=v11"},
			gone:  []string{"00000000000000000000.txnindex"},
		},
		{
			// Not committed: a .cleaned file at 5 means the swap of the
			// group at 5 was under way; the committed swap at 0 completes.
			name: "uncommitted swap above a .cleaned file",
			extra: []file{{"00000000000000000000.log.swap", []int64{4}}, {"00000000000000000005.log.swap", []int64{9}},
				{"00000000000000000005.log.cleaned", []int64{9}}, {"00000000000000000005.timeindex.swap", nil}},
			segs: []int64{0, 5, 10},
			keys: []string{"4:k1=v4", "5:k2=v5", "6:k0=v6", "7:k1=v7", "8:k2=v8", "9:k0=v9", "10:k1=v10", "11:k2=v11"},
		},
		{
			name:  "index swap without its log",
			extra: []file{{"00000000000000000005.index.swap", nil}},
			segs:  []int64{0, 5, 10},
			keys:  []string{"0:k0=v0", "1:k1=v1", "2:k2=v2", "3:k0=v3", "4:k1=v4", "5:k2=v5", "6:k0=v6", "7:k1=v7", "8:k2=v8", "9:k0=v9", "10:k1=v10", "11:k2=v11"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, fs := build(t, tc.extra)
			defer l.Close()
			if got := l.Segments(); !slices.Equal(got, tc.segs) {
				t.Fatalf("segments %v, want %v", got, tc.segs)
			}
			if got := keysAt(t, l); !slices.Equal(got, tc.keys) {
				t.Fatalf("records %v, want %v", got, tc.keys)
			}
			names, _ := fs.List(l.Dir())
			for _, n := range names {
				if strings.HasSuffix(n, SwapFileSuffix) || strings.HasSuffix(n, CleanedFileSuffix) || slices.Contains(tc.gone, n) {
					t.Errorf("%s left after open", n)
				}
			}
			if v := verifyLikeDumpLogSegments(t, fs, l.Dir()); strings.Contains(v, "does not") || strings.Contains(v, "not a batch") {
				t.Fatalf("index check: %s", v)
			}
		})
	}
}

// The LogManager cleans compacted logs whose dirty ratio passes
// min.cleanable.dirty.ratio, dirtiest first, keeps cleaner-offset-checkpoint,
// and leaves delete-policy logs alone; compact,delete logs get both.
func TestLogManagerCleanLogs(t *testing.T) {
	e := newManagerEnv(t)
	e.cfg.SegmentBytes = 1 << 20
	compact := e.cfg
	compact.CleanupPolicy = CleanupPolicy{Compact: true}
	both := compact
	both.CleanupPolicy.Delete, both.RetentionMs = true, 60_000
	m, err := OpenManager("/kafka-logs", ManagerOptions{FS: e.fs, Clock: e.clock, Scheduler: InlineScheduler{}, DefaultConfig: e.cfg,
		Cleaner: CleanerConfig{BackoffMs: 5000}})
	if err != nil {
		t.Fatal(err)
	}
	tpC, tpD, tpB := TopicPartition{"changelog", 0}, TopicPartition{"events", 0}, TopicPartition{"both", 0}
	lc, _ := m.GetOrCreateLog(tpC, idA, compact)
	ld, _ := m.GetOrCreateLog(tpD, idA, e.cfg)
	lb, _ := m.GetOrCreateLog(tpB, idA, both)
	fill := func(l *Log, n int) {
		for i := range n {
			mustAppend(t, l, kvBatch(t, e.clock.Now().UnixMilli(), record.CodecNone, fmt.Sprintf("k%d=%d", i%4, i)))
		}
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
		l.UpdateHighWatermark(l.LogEndOffset())
	}
	// cleanAll runs cleaner steps until none finds a log to clean.
	cleanAll := func() []string {
		t.Helper()
		var cleaned []string
		for {
			c, ok, err := m.CleanFilthiestLog(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				return cleaned
			}
			cleaned = append(cleaned, fmt.Sprintf("%s ratio=%.2f end=%d", c.TopicPartition, c.DirtyRatio, c.EndOffset))
		}
	}
	fill(lc, 20)
	fill(ld, 20)
	fill(lb, 8)
	if got, want := cleanAll(), []string{"both-0 ratio=1.00 end=8", "changelog-0 ratio=1.00 end=20"}; !slices.Equal(got, want) {
		t.Fatalf("cleaned %v, want %v", got, want)
	}
	if got := len(readPresentRecords(t, ld)); got != 20 {
		t.Fatalf("the delete-policy log has %d records, want all 20", got)
	}
	ckpt, _ := vfs.ReadFile(e.fs, "/kafka-logs/"+CleanerOffsetCheckpointFile)
	if string(ckpt) != "0\n2\nboth 0 8\nchangelog 0 20\n" {
		t.Fatalf("cleaner-offset-checkpoint is %q", ckpt)
	}

	// A little more dirt: below min.cleanable.dirty.ratio (0.5), not due.
	fill(lc, 1)
	if got := cleanAll(); len(got) != 0 {
		t.Fatalf("cleaned %v; want nothing below the ratio", got)
	}
	// The stats report the dirtiest log seen, due or not.
	if st, want := m.CleanerStats(), lc.CleanableInfo().DirtyRatio(); st.MaxDirtyRatio != want || want == 0 ||
		st.Cleanings != 2 || st.BytesRead <= st.BytesWritten || !st.LastRun.Equal(e.clock.Now()) {
		t.Fatalf("stats %+v, want the max dirty ratio %.3f, 2 cleanings that shrank the logs, last run now", st, want)
	}
	fill(lc, 20)
	if got, want := cleanAll(), []string{"changelog-0 ratio=0.84 end=41"}; !slices.Equal(got, want) {
		t.Fatalf("cleaned %v, want %v", got, want)
	}
	if got := keysAt(t, lc); !slices.Equal(got, []string{"37:k0=16", "38:k1=17", "39:k2=18", "40:k3=19"}) {
		t.Fatalf("changelog-0 holds %v", got)
	}

	// Retention still applies to compact,delete (RunMaintenance).
	e.clock.Advance(2 * time.Minute)
	fill(lb, 1)
	if err := m.RunMaintenance(); err != nil {
		t.Fatal(err)
	}
	if lb.LogStartOffset() != 8 || len(lb.Segments()) != 2 {
		t.Fatalf("both-0: log start %d, segments %v; want retention to delete the old segment", lb.LogStartOffset(), lb.Segments())
	}

	// The checkpoint comes back after a restart.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = e.open()
	defer m.Close()
	lc, _ = m.Log(tpC)
	if lc.CleanerCheckpoint() != 41 || lc.CleanableInfo().FirstDirtyOffset != 41 {
		t.Fatalf("reopened checkpoint %d", lc.CleanerCheckpoint())
	}
}

// A log whose data the cleaner cannot read (a corrupt batch) is marked
// uncleanable and skipped from then on, without taking the log offline; a
// disabled cleaner does nothing.
func TestLogManagerUncleanable(t *testing.T) {
	e := newManagerEnv(t)
	e.cfg.SegmentBytes = 1 << 20
	e.cfg.CleanupPolicy = CleanupPolicy{Compact: true}
	m := e.open()
	defer m.Close()
	l, _ := m.GetOrCreateLog(tpA, idA, e.cfg)
	for i := range 4 {
		mustAppend(t, l, kvBatch(t, e.clock.Now().UnixMilli(), record.CodecNone, fmt.Sprintf("k=%d", i)))
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	// Flip a byte inside the second batch's records: its CRC fails.
	f, err := e.fs.OpenReadWrite(filepath.Join(l.Dir(), "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	size, _ := f.Size()
	var b [1]byte
	f.ReadAt(b[:], size/4+size/8)
	b[0] ^= 0xff
	f.WriteAt(b[:], size/4+size/8)
	f.Close()
	_, cleaned, err := m.CleanFilthiestLog(context.Background())
	if err == nil || !strings.Contains(err.Error(), "fails its CRC") || cleaned {
		t.Fatalf("clean of a corrupt log: cleaned=%t %v", cleaned, err)
	}
	var se *StorageError
	if errors.As(err, &se) || l.check() != nil {
		t.Fatalf("the log was taken offline: %v", l.check())
	}
	c, cleaned, err := m.CleanFilthiestLog(context.Background())
	if err != nil || cleaned {
		t.Fatalf("second step %+v %t %v; want the uncleanable log skipped", c, cleaned, err)
	}
	if st := m.CleanerStats(); st.UncleanablePartitions != 1 || st.Cleanings != 0 {
		t.Fatalf("stats %+v, want one uncleanable partition and no cleaning", st)
	}
}

func TestParseLogConfigCleanerKeys(t *testing.T) {
	c, err := ParseLogConfig(DefaultLogConfig(), map[string]string{
		"min.cleanable.dirty.ratio": "0.25",
		"min.compaction.lag.ms":     "1000",
		"max.compaction.lag.ms":     "90000",
		"delete.retention.ms":       "5",
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	if c.MinCleanableRatio != 0.25 || c.MinCompactionLagMs != 1000 || c.MaxCompactionLagMs != 90000 || c.DeleteRetentionMs != 5 {
		t.Fatalf("%+v", c)
	}
	d := DefaultLogConfig()
	if d.MinCleanableRatio != 0.5 || d.MinCompactionLagMs != 0 || d.MaxCompactionLagMs != 1<<63-1 || d.DeleteRetentionMs != 86400000 {
		t.Fatalf("defaults differ from Kafka's: %+v", d)
	}
	for k, v := range map[string]string{"min.cleanable.dirty.ratio": "1.5", "max.compaction.lag.ms": "0", "delete.retention.ms": "-1",
		"min.compaction.lag.ms": "x"} {
		_, err := ParseLogConfig(DefaultLogConfig(), map[string]string{k: v}, true)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != k {
			t.Fatalf("%s=%s: %v", k, v, err)
		}
	}
}

// The record filter keeps a kept record's bytes (key, value, headers) and
// timestamp when it rewrites a batch, including with a delete horizon.
func TestBuildRetainedKeepsRecords(t *testing.T) {
	for _, codec := range []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd} {
		c := record.NewCompressor()
		src, err := record.Build(record.BatchSpec{BaseOffset: 100, PartitionLeaderEpoch: 4, ProducerID: 9, ProducerEpoch: 2, BaseSequence: 17,
			Transactional: true, Codec: codec, BaseTimestamp: 5000}, []record.Record{
			{Key: []byte("a"), KeyLen: 1, Value: []byte("1"), ValueLen: 1, TimestampDelta: 1},
			{Key: []byte("b"), KeyLen: 1, ValueLen: -1, TimestampDelta: 2, Headers: []record.Header{{Key: "h", Value: []byte("v")}}},
			{Key: []byte("c"), KeyLen: 1, Value: []byte("3"), ValueLen: 1, TimestampDelta: 3},
		}, c)
		if err != nil {
			t.Fatal(err)
		}
		d := record.NewDecompressor()
		data, err := d.RecordsData(src, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		var kept []record.RawRecord
		if err := record.ParseRawRecords(data, 3, func(r record.RawRecord) error {
			if string(r.Key) != "a" {
				kept = append(kept, r)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, horizon := range []int64{-1, 90000} {
			b, err := record.BuildRetained(src, kept, horizon, c)
			if err != nil {
				t.Fatal(err)
			}
			var kb kmsg.RecordBatch
			if err := kb.ReadFrom(b); err != nil || !b.ValidCRC() {
				t.Fatalf("%s: %v (crc ok %t)", codec, err, b.ValidCRC())
			}
			h, hasH := b.DeleteHorizonMs()
			if b.BaseOffset() != 100 || b.LastOffset() != 102 || b.RecordCount() != 2 || b.ProducerID() != 9 || b.ProducerEpoch() != 2 ||
				b.BaseSequence() != 17 || !b.IsTransactional() || b.Compression() != codec || b.PartitionLeaderEpoch() != 4 ||
				b.MaxTimestamp() != 5003 || hasH != (horizon >= 0) || (hasH && h != horizon) {
				t.Fatalf("%s horizon %d: header %+v", codec, horizon, kb)
			}
			rr, done, err := d.OpenRecords(b, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rr.Remaining() > 0 {
				r, err := rr.Next(true)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%d %s=%s/%d ts=%d h=%v", r.OffsetDelta, r.Key, r.Value, r.ValueLen, b.BaseTimestamp()+r.TimestampDelta, r.Headers))
			}
			done()
			if want := []string{"1 b=/-1 ts=5002 h=[{h [118]}]", "2 c=3/1 ts=5003 h=[]"}; !slices.Equal(got, want) {
				t.Fatalf("%s horizon %d: records %q, want %q", codec, horizon, got, want)
			}
		}
		e := record.EmptyBatch(src)
		if !e.ValidCRC() || e.RecordCount() != 0 || e.LastOffset() != 102 || e.LastSequence() != 19 || e.Compression() != record.CodecNone || e.MaxTimestamp() != 5003 {
			t.Fatalf("%s: empty batch header wrong", codec)
		}
	}
}
