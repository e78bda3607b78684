package storage

import (
	"testing"

	"github.com/strait-io/strait/storage/record"
)

func TestLogAppendReadReopen(t *testing.T) {
	e := newTestEnv(t)
	e.cfg.SegmentBytes = 4096
	l, rep := e.open(e.options(false))
	if rep.LogEndOffset != 0 {
		t.Fatalf("fresh log: %v", rep)
	}
	for i := 0; i < 50; i++ {
		info, err := l.AppendAsLeader(e.batch(record.BatchSpec{}, 3, 100), 1, record.OriginClient)
		if err != nil {
			t.Fatal(err)
		}
		if info.FirstOffset != int64(i*3) || info.LastOffset != int64(i*3+2) {
			t.Fatalf("append %d: %+v", i, info)
		}
	}
	if len(l.Segments()) < 5 {
		t.Fatalf("expected rolls, segments %v", l.Segments())
	}
	l.UpdateHighWatermark(150)
	got := readAll(t, l, 0, FetchHighWatermark)
	if len(got) != 50 || got[49].LastOffset() != 149 {
		t.Fatalf("read %d batches", len(got))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, rep = e.open(e.options(true))
	if rep.LogEndOffset != 150 || !rep.Clean {
		t.Fatalf("reopen: %v", rep)
	}
	l.UpdateHighWatermark(150)
	if got := readAll(t, l, 0, FetchHighWatermark); len(got) != 50 {
		t.Fatalf("after reopen read %d batches", len(got))
	}
	// Unclean reopen of a crashed copy: flushed data only.
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(e.batch(record.BatchSpec{}, 3, 100), 1, record.OriginClient); err != nil {
		t.Fatal(err)
	}
	e.fs = e.fs.CrashClone(vfsCrash())
	l2, rep := e.open(e.options(false))
	if rep.LogEndOffset != 150 {
		t.Fatalf("crash reopen: %v", rep)
	}
	l2.UpdateHighWatermark(150)
	if got := readAll(t, l2, 0, FetchHighWatermark); len(got) != 50 {
		t.Fatalf("after crash read %d batches", len(got))
	}
}
