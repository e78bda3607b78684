package storage

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// fillFuture copies cur into its future log until it is caught up.
func fillFuture(t *testing.T, cur, fut *Log) {
	t.Helper()
	for range 10_000 {
		_, done, err := CopyToFuture(cur, fut, 1500)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
	}
	t.Fatalf("the future log never caught up: %d of %d", fut.LogEndOffset(), cur.LogEndOffset())
}

func listDir(t *testing.T, e *managerEnv, dir string) []string {
	t.Helper()
	names, err := e.fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A replica moves from /d1 to /d2: a future log in /d2, filled from the
// current one (segments, then a tail written meanwhile), swapped in, the
// old directory gone once released; a restart finds the log in /d2.
func TestFutureLogMove(t *testing.T) {
	e := newManagerEnv(t)
	m, err := e.openDirs("/d1", "/d2")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := m.GetOrCreateLog(tpA, idA, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.produce(cur, 30) // several 2 KiB segments
	cur.UpdateHighWatermark(cur.LogEndOffset())
	if _, err := m.CreateFutureLog(tpA, "/nowhere"); !errors.Is(err, ErrLogDirNotFound) {
		t.Fatalf("future in an unknown dir: %v", err)
	}
	if _, err := m.CreateFutureLog(TopicPartition{"none", 0}, "/d2"); !errors.Is(err, ErrNoCurrentLog) {
		t.Fatalf("future of an unknown partition: %v", err)
	}
	fut, err := m.CreateFutureLog(tpA, "/d2/")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := m.CreateFutureLog(tpA, "/d2"); err != nil || again != fut {
		t.Fatalf("the same future again: %v %v", again, err)
	}
	if name := filepath.Base(fut.Dir()); !strings.HasPrefix(name, "orders-0.") || !strings.HasSuffix(name, "-future") || len(name) != len("orders-0.")+32+len("-future") {
		t.Fatalf("future dir name %s", name)
	}
	if _, ok := m.Logs()[tpA]; !ok || len(m.Logs()) != 1 {
		t.Fatal("the future log must not be one of Logs()")
	}
	fillFuture(t, cur, fut)
	e.produce(cur, 5) // the tail written while it copied
	cur.UpdateHighWatermark(cur.LogEndOffset())
	fillFuture(t, cur, fut)
	if len(fut.Segments()) < 2 {
		t.Fatalf("the future has %d segments, want several", len(fut.Segments()))
	}
	leo, hw := cur.LogEndOffset(), cur.HighWatermark()
	want := readAll(t, cur, 0, FetchLogEnd)

	l, release, err := m.ReplaceCurrentWithFuture(tpA)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := m.Log(tpA); got != l || l.Dir() != "/d2/orders-0" || l.LogEndOffset() != leo || l.HighWatermark() != hw {
		t.Fatalf("after the swap: %s LEO %d HW %d, want /d2/orders-0 LEO %d HW %d", l.Dir(), l.LogEndOffset(), l.HighWatermark(), leo, hw)
	}
	if _, ok := m.FutureLog(tpA); ok {
		t.Fatal("the future log is still there after the swap")
	}
	if _, err := cur.Read(0, 100, FetchLogEnd, true); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("the old log still answers: %v", err)
	}
	got := readAll(t, l, 0, FetchLogEnd)
	if len(got) != len(want) {
		t.Fatalf("%d batches after the move, %d before", len(got), len(want))
	}
	for i := range got {
		if string(got[i]) != string(want[i]) {
			t.Fatalf("batch %d differs after the move", i)
		}
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	for _, n := range listDir(t, e, "/d1") {
		if strings.HasPrefix(n, "orders-0") {
			t.Fatalf("/d1 still holds %s", n)
		}
	}
	e.produce(l, 1)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = e.openDirs("/d1", "/d2")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if d, _ := m.LogDir(tpA); d != "/d2" {
		t.Fatalf("after the restart the log is in %q", d)
	}
	if l, _ := m.Log(tpA); l.LogEndOffset() != leo+2 {
		t.Fatalf("after the restart LEO %d, want %d", l.LogEndOffset(), leo+2)
	}
}

// A future log survives a restart (the move resumes), a crash between
// the swap's two renames leaves the future alone and it becomes the
// current log, and deleting the partition deletes its future too.
func TestFutureLogRestart(t *testing.T) {
	e := newManagerEnv(t)
	m, err := e.openDirs("/d1", "/d2")
	if err != nil {
		t.Fatal(err)
	}
	cur, _ := m.GetOrCreateLog(tpA, idA, e.cfg)
	e.produce(cur, 10)
	fut, err := m.CreateFutureLog(tpA, "/d2")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := CopyToFuture(cur, fut, 1500); err != nil {
		t.Fatal(err)
	}
	copied := fut.LogEndOffset()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = e.openDirs("/d1", "/d2")
	if err != nil {
		t.Fatal(err)
	}
	fut, ok := m.FutureLog(tpA)
	if !ok || fut.LogEndOffset() != copied || copied == 0 {
		t.Fatalf("future after the restart: %v, LEO %d, want %d", ok, fut.LogEndOffset(), copied)
	}
	cur, _ = m.Log(tpA)
	fillFuture(t, cur, fut)
	leo := cur.LogEndOffset()
	curDir := cur.Dir()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// The crash: the current log renamed away, the future not yet renamed.
	if err := e.fs.Rename(curDir, curDir+".0123-delete"); err != nil {
		t.Fatal(err)
	}
	m, err = e.openDirs("/d1", "/d2")
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := m.Log(tpA); !ok || l.Dir() != "/d2/orders-0" || l.LogEndOffset() != leo {
		t.Fatalf("the orphan future was not promoted: %v %+v", ok, m.Logs())
	}
	// Deleting a partition deletes its future log too.
	if _, err := m.CreateFutureLog(tpA, "/d1"); err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteLog(tpA); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/d1", "/d2"} {
		for _, n := range listDir(t, e, d) {
			if strings.HasPrefix(n, "orders-0") {
				t.Fatalf("%s still holds %s after the deletion", d, n)
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}
