package storage

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/strait-io/strait/storage/epoch"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// TestNewEpochWrittenByTheFlush: after a restart the controller has
// bumped every partition's leader epoch, and the first append of the new
// epoch leaves the leader-epoch checkpoint alone (the produce path of ten
// thousand partitions spent two fsyncs on each); the cache answers with
// the new epoch at once, the next flush writes the checkpoint before the
// recovery point passes the entry, and a crash before that flush loses the
// entry only together with what recovery re-reads: the restarted log has
// it again from the batch. Before, the append wrote the checkpoint.
func TestNewEpochWrittenByTheFlush(t *testing.T) {
	e := newTestEnv(t)
	var touched touchedPaths
	o := e.options(true)
	o.FS = vfs.WithErrors(e.fs, touched.inject)
	l, _ := e.open(o)
	appendEpoch := func(l *Log, epoch int32) {
		t.Helper()
		if _, err := l.AppendAsLeader(e.batch(record.BatchSpec{PartitionLeaderEpoch: epoch}, 2, 50), epoch, record.OriginClient); err != nil {
			t.Fatal(err)
		}
	}
	appendEpoch(l, 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkpoint := func(fsys vfs.FS) string {
		t.Helper()
		b, err := vfs.ReadFile(fsys, filepath.Join(e.dir, epoch.CheckpointFileName))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := checkpoint(e.fs); got != "0\n1\n1 0\n" {
		t.Fatalf("checkpoint after a clean close: %q", got)
	}

	l, _ = e.open(o)
	touched.reset()
	appendEpoch(l, 3) // the first batch after the restart, at offset 2
	if p := touched.with(epoch.CheckpointFileName); len(p) > 0 {
		t.Errorf("the first append of epoch 3 touched the checkpoint: %v", p)
	}
	want := []epoch.Entry{{Epoch: 1, StartOffset: 0}, {Epoch: 3, StartOffset: 2}}
	if got := l.EpochEntries(); !slices.Equal(got, want) {
		t.Fatalf("epoch entries after the append: %v, want %v", got, want)
	}

	// A power loss now: the file is the one of before, and the batch is
	// lost with the entry (the log ends at 2 again).
	crashed := e.fs.CrashClone(vfs.CrashOptions{})
	if got := checkpoint(crashed); got != "0\n1\n1 0\n" {
		t.Errorf("checkpoint on the crashed disk: %q, want the one of before the append", got)
	}
	ce := *e
	ce.fs = crashed
	co := ce.options(false)
	co.RecoveryPoint = l.RecoveryPoint()
	cl, _ := ce.open(co)
	if got, leo := cl.EpochEntries(), cl.LogEndOffset(); !slices.Equal(got, want[:1]) || leo != 2 {
		t.Errorf("after a power loss: epoch entries %v, log end %d; want %v and 2", got, leo, want[:1])
	}
	cl.Close()

	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := checkpoint(e.fs); got != "0\n2\n1 0\n3 2\n" {
		t.Errorf("checkpoint after the flush: %q", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// A killed process: the kernel keeps the batch of epoch 5 but never
	// had the entry; recovery, from the recovery point at or below the
	// batch, assigns it again.
	l, _ = e.open(o)
	appendEpoch(l, 5) // at offset 4
	ko := e.options(false)
	ko.RecoveryPoint = l.RecoveryPoint()
	if ko.RecoveryPoint > 4 {
		t.Fatalf("recovery point %d is past the unwritten entry's start 4", ko.RecoveryPoint)
	}
	k, _ := e.open(ko) // the abandoned l is never used again
	defer k.Close()
	want = append(want, epoch.Entry{Epoch: 5, StartOffset: 4})
	if got := k.EpochEntries(); !slices.Equal(got, want) {
		t.Errorf("epoch entries after a kill and recovery: %v, want %v", got, want)
	}
}

// touchedPaths records the paths of file-system calls.
type touchedPaths struct {
	mu    sync.Mutex
	paths []string
}

func (p *touchedPaths) inject(_ vfs.Op, path string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paths = append(p.paths, path)
	return nil
}

func (p *touchedPaths) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paths = nil
}

func (p *touchedPaths) with(s string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, path := range p.paths {
		if strings.Contains(path, s) {
			out = append(out, path)
		}
	}
	return out
}
