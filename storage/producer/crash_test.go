package producer

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

const crashDir = "/data/t-0"

func newCrashFS(t *testing.T) *vfs.MemFS {
	t.Helper()
	fs := vfs.NewMem()
	if err := fs.MkdirAll(crashDir); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/", "/data", crashDir} {
		if err := fs.SyncDir(d); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

func openManager(t *testing.T, fsys vfs.FS) *Manager {
	t.Helper()
	m, err := NewManager(fsys, crashDir, DefaultConfig(), clock.NewManual(time.UnixMilli(0)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// snapshotView is the state a snapshot preserves: per producer, the entry
// with only its last batch and that batch's timestamp set to the entry's
// (Kafka restores exactly this), plus the ongoing transactions.
type snapshotView struct {
	MapEnd  int64
	Entries []Entry
	Ongoing []TxnMetadata
}

func viewOf(m *Manager) snapshotView {
	v := snapshotView{MapEnd: m.MapEndOffset(), Ongoing: m.OngoingTxns()}
	for _, p := range m.Producers() {
		e, _ := m.Entry(p.ProducerID)
		if n := len(e.Batches); n > 0 {
			last := e.Batches[n-1]
			last.Timestamp = e.LastTimestamp
			e.Batches = []BatchMetadata{last}
		}
		v.Entries = append(v.Entries, e)
	}
	return v
}

// writeHistory appends a mix of idempotent and transactional batches from
// several producers and takes a snapshot after each step, returning the
// view at each snapshot offset.
func writeHistory(t *testing.T, m *Manager) map[int64]snapshotView {
	t.Helper()
	views := map[int64]snapshotView{}
	off := int64(0)
	seq := map[int64]int32{}
	for step := range 6 {
		var batches []record.Batch
		for pid := int64(1); pid <= 3; pid++ {
			txn := pid == 3
			b := dataBatch(t, pid, 0, seq[pid], 2, off, txn, int64(1000+step*10+int(pid)))
			seq[pid] += 2
			off += 2
			batches = append(batches, b)
		}
		if step%2 == 1 {
			batches = append(batches, markerBatch(3, 0, step%4 == 1, 1, off, int64(1000+step*10+5)))
			off++
		}
		appendBatches(t, m, record.OriginClient, batches[:3]...)
		if len(batches) > 3 {
			appendBatches(t, m, record.OriginCoordinator, batches[3:]...)
		}
		if err := m.TakeSnapshot(); err != nil {
			t.Fatal(err)
		}
		views[m.MapEndOffset()] = viewOf(m)
	}
	return views
}

func reloadView(t *testing.T, fsys vfs.FS, logEnd int64) snapshotView {
	t.Helper()
	m := openManager(t, fsys)
	if err := m.TruncateAndReload(0, logEnd, time.UnixMilli(2000)); err != nil {
		t.Fatal(err)
	}
	return viewOf(m)
}

// TestCrashAfterEachSnapshot crashes after every snapshot and checks that a
// reload restores exactly the state that snapshot captured.
func TestCrashAfterEachSnapshot(t *testing.T) {
	fs := newCrashFS(t)
	m := openManager(t, fs)
	views := map[int64]snapshotView{}
	var clones []*vfs.MemFS
	var offs []int64
	// Clone right after each snapshot by interleaving writeHistory's steps.
	seq := map[int64]int32{}
	off := int64(0)
	for step := range 6 {
		for pid := int64(1); pid <= 3; pid++ {
			appendBatches(t, m, record.OriginClient, dataBatch(t, pid, 0, seq[pid], 2, off, pid == 3, int64(1000+step)))
			seq[pid] += 2
			off += 2
		}
		if step%2 == 1 {
			appendBatches(t, m, record.OriginCoordinator, markerBatch(3, 0, true, 1, off, int64(1000+step)))
			off++
		}
		if err := m.TakeSnapshot(); err != nil {
			t.Fatal(err)
		}
		views[off] = viewOf(m)
		offs = append(offs, off)
		clones = append(clones, fs.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewPCG(uint64(step), 1))}))
	}
	for i, c := range clones {
		got := reloadView(t, c, offs[i])
		if !reflect.DeepEqual(got, views[offs[i]]) {
			t.Fatalf("crash after snapshot %d: reloaded\n%+v\nwant\n%+v", offs[i], got, views[offs[i]])
		}
		// A log end past the snapshot loads it and leaves the rest to replay.
		if got := reloadView(t, c, offs[i]+100); got.MapEnd != offs[i] {
			t.Fatalf("crash after snapshot %d: map end %d after reload to a longer log", offs[i], got.MapEnd)
		}
	}
}

// TestCrashDuringSnapshotWrite fails each step of the atomic write in turn
// and crashes: the new snapshot is either absent or complete, and a reload
// gets the older snapshot's state.
func TestCrashDuringSnapshotWrite(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpRename, vfs.OpSyncDir} {
		t.Run(op.String(), func(t *testing.T) {
			mem := newCrashFS(t)
			efs := vfs.WithErrors(mem, nil)
			m := openManager(t, efs)
			views := writeHistory(t, m)
			oldEnd := m.MapEndOffset()

			appendBatches(t, m, record.OriginClient, dataBatch(t, 9, 0, 0, 1, oldEnd, false, 5000))
			efs.SetInjector(vfs.OnOp(op, 0))
			if err := m.TakeSnapshot(); !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("TakeSnapshot error = %v, want injected", err)
			}
			efs.SetInjector(nil)

			c := mem.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewPCG(1, 2))})
			got := reloadView(t, c, oldEnd+1)
			if !reflect.DeepEqual(got, views[oldEnd]) {
				t.Fatalf("reloaded\n%+v\nwant the previous snapshot's\n%+v", got, views[oldEnd])
			}

			// The failed snapshot is retried by the next TakeSnapshot.
			if err := m.TakeSnapshot(); err != nil {
				t.Fatal(err)
			}
			want := viewOf(m)
			if got := reloadView(t, mem.CrashClone(vfs.CrashOptions{}), oldEnd+1); !reflect.DeepEqual(got, want) {
				t.Fatalf("after retry reloaded\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// TestCorruptNewestSnapshotFallsBack flips a byte in the newest snapshots
// one after another: each reload deletes the corrupt file and loads the
// next older one, and with none left the state starts empty at log start.
func TestCorruptNewestSnapshotFallsBack(t *testing.T) {
	fs := newCrashFS(t)
	m := openManager(t, fs)
	views := writeHistory(t, m)
	offs := m.SnapshotOffsets()
	if len(offs) != 6 {
		t.Fatalf("snapshots %v, want 6", offs)
	}
	logEnd := offs[len(offs)-1]
	for i := len(offs) - 1; i >= 0; i-- {
		// Corrupt a byte in the middle of the entries, then crash so that
		// only durable state is left.
		flipByte(t, fs, filepath.Join(crashDir, SnapshotFileName(offs[i])), 30)
		fs = fs.CrashClone(vfs.CrashOptions{})
		got := reloadView(t, fs, logEnd)
		var want snapshotView
		if i > 0 {
			want = views[offs[i-1]]
		} else {
			want = snapshotView{MapEnd: 0}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("corrupting %d: reloaded\n%+v\nwant\n%+v", offs[i], got, want)
		}
		// The corrupt file was deleted, durably.
		names, err := fs.CrashClone(vfs.CrashOptions{}).List(crashDir)
		if err != nil {
			t.Fatal(err)
		}
		if want := snapshotNames(offs[:i]); !slices.Equal(names, want) {
			t.Fatalf("files after corrupting %d: %v, want %v", offs[i], names, want)
		}
	}
}

// TestSnapshotDeletionsAreDurable checks that snapshots deleted by
// truncation do not come back after a crash, where a later, longer log
// would load them as if they described it.
func TestSnapshotDeletionsAreDurable(t *testing.T) {
	fs := newCrashFS(t)
	m := openManager(t, fs)
	writeHistory(t, m)
	offs := m.SnapshotOffsets()
	// Truncate the log to the second snapshot.
	if err := m.TruncateAndReload(0, offs[1], time.UnixMilli(2000)); err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteSnapshotsBefore(offs[1]); err != nil {
		t.Fatal(err)
	}
	c := fs.CrashClone(vfs.CrashOptions{})
	names, err := c.List(crashDir)
	if err != nil {
		t.Fatal(err)
	}
	if want := snapshotNames(offs[1:2]); !slices.Equal(names, want) {
		t.Fatalf("files after crash %v, want %v", names, want)
	}
	if err := m.TruncateFullyAndStartAt(500); err != nil {
		t.Fatal(err)
	}
	names, err = fs.CrashClone(vfs.CrashOptions{}).List(crashDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Fatalf("files after truncate-fully and crash: %v", names)
	}
}

func snapshotNames(offs []int64) []string {
	names := []string{}
	for _, o := range offs {
		names = append(names, SnapshotFileName(o))
	}
	if len(names) == 0 {
		return nil
	}
	return names
}

func TestRemoveStraySnapshots(t *testing.T) {
	for _, tc := range []struct {
		snaps, bases, want []int64
	}{
		// Strays below the newest segment go; matching ones stay.
		{snaps: []int64{0, 5, 10, 15, 20}, bases: []int64{0, 10, 20}, want: []int64{0, 10, 20}},
		// The newest stray above every segment is the clean-shutdown one.
		{snaps: []int64{0, 5, 10, 27}, bases: []int64{0, 10}, want: []int64{0, 10, 27}},
		{snaps: []int64{3, 7, 27}, bases: []int64{0, 10}, want: []int64{27}},
		// No segments: only the newest stray survives.
		{snaps: []int64{3, 7}, bases: nil, want: []int64{7}},
		{snaps: nil, bases: []int64{0}, want: nil},
	} {
		t.Run(fmt.Sprint(tc.snaps, tc.bases), func(t *testing.T) {
			fs := newCrashFS(t)
			for _, o := range tc.snaps {
				if err := vfs.WriteFileAtomic(fs, crashDir, SnapshotFileName(o), EncodeSnapshot(nil)); err != nil {
					t.Fatal(err)
				}
			}
			m := openManager(t, fs)
			if err := m.RemoveStraySnapshots(tc.bases); err != nil {
				t.Fatal(err)
			}
			if got := m.SnapshotOffsets(); !slices.Equal(got, tc.want) {
				t.Fatalf("kept %v, want %v", got, tc.want)
			}
			names, err := fs.CrashClone(vfs.CrashOptions{}).List(crashDir)
			if err != nil {
				t.Fatal(err)
			}
			if want := snapshotNames(tc.want); !slices.Equal(names, want) {
				t.Fatalf("files %v, want %v", names, want)
			}
		})
	}
}
