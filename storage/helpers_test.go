package storage

import (
	"fmt"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// testEnv is a log on an in-memory filesystem with a manual clock.
type testEnv struct {
	t     testing.TB
	fs    *vfs.MemFS
	clock *clock.Manual
	cfg   LogConfig
	dir   string
	comp  *record.Compressor
}

func newTestEnv(t testing.TB) *testEnv {
	cfg := DefaultLogConfig()
	return &testEnv{
		t:     t,
		fs:    vfs.NewMem(),
		clock: clock.NewManual(time.UnixMilli(1_700_000_000_000)),
		cfg:   cfg,
		dir:   "/data/topic-0",
		comp:  record.NewCompressor(),
	}
}

func (e *testEnv) options(clean bool) Options {
	return Options{
		FS:               e.fs,
		Clock:            e.clock,
		Scheduler:        InlineScheduler{},
		Config:           e.cfg,
		HadCleanShutdown: clean,
	}
}

func (e *testEnv) open(o Options) (*Log, *RecoveryReport) {
	e.t.Helper()
	l, rep, err := Open(e.dir, o)
	if err != nil {
		e.t.Fatalf("open: %v", err)
	}
	return l, rep
}

// batch builds a client batch of n records with values "v<i>".
func (e *testEnv) batch(spec record.BatchSpec, n int, valueSize int) []byte {
	e.t.Helper()
	if spec.BaseTimestamp == 0 {
		spec.BaseTimestamp = e.clock.Now().UnixMilli()
	}
	if spec.ProducerID == 0 && spec.BaseSequence == 0 && spec.ProducerEpoch == 0 {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = record.NoProducerID, record.NoProducerEpoch, record.NoSequence
	}
	recs := make([]record.Record, n)
	for i := range recs {
		v := []byte(fmt.Sprintf("v%d", i))
		if valueSize > len(v) {
			v = append(v, make([]byte, valueSize-len(v))...)
		}
		recs[i] = record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v))}
	}
	b, err := record.Build(spec, recs, e.comp)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// readAll reads every batch in [from, to) with the given isolation.
func readAll(t testing.TB, l *Log, from int64, iso FetchIsolation) []record.Batch {
	t.Helper()
	var out []record.Batch
	off := from
	for {
		fd, err := l.Read(off, 1<<20, iso, true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if fd.Records.Size == 0 {
			return out
		}
		buf := make([]byte, fd.Records.Size)
		if err := fd.Records.ReadInto(buf); err != nil {
			t.Fatal(err)
		}
		it := record.NewIter(buf)
		n := 0
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			if b.LastOffset() < off {
				continue
			}
			out = append(out, b)
			off = b.NextOffset()
			n++
		}
		if n == 0 {
			t.Fatalf("read at %d returned %d bytes and no whole batch", off, fd.Records.Size)
		}
	}
}

func vfsCrash() vfs.CrashOptions { return vfs.CrashOptions{} }
