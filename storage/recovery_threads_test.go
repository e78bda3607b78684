package storage

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/vfs"
)

// overlapProbe is an Injector that holds each op on a .log file until a
// second one is in flight, or until patience runs out, and records
// whether two ever ran at once. It fails nothing.
type overlapProbe struct {
	op       vfs.Op
	mu       sync.Mutex
	inFlight int
	overlap  bool
}

func newOverlapProbe(op vfs.Op) *overlapProbe {
	return &overlapProbe{op: op}
}

func (p *overlapProbe) inject(op vfs.Op, path string) error {
	if op != p.op || !strings.HasSuffix(path, LogFileSuffix) {
		return nil
	}
	p.mu.Lock()
	p.inFlight++
	if p.inFlight > 1 {
		p.overlap = true
	}
	p.mu.Unlock()
	// Wait for another op to arrive, as a disk with several requests
	// queued serves them together; alone, give up after a while.
	select {
	case <-time.After(2 * time.Second):
	case <-waitOther(p):
	}
	p.mu.Lock()
	p.inFlight--
	p.mu.Unlock()
	return nil
}

// waitOther is closed once some other op overlaps this one.
func waitOther(p *overlapProbe) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for range 200 {
			p.mu.Lock()
			o := p.overlap
			p.mu.Unlock()
			if o {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return ch
}

func (p *overlapProbe) overlapped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.overlap
}

// TestLogManagerOpensAndClosesLogsInParallel: a log directory's logs open
// at start-up and are flushed and closed at shutdown
// num.recovery.threads.per.data.dir at a time (Kafka's LogManager.loadLogs
// and shutdown), so a broker with thousands of partitions does not wait for
// each one's files and fsyncs in turn; every record is still there after
// the restart. Before, both ran one log after the other.
func TestLogManagerOpensAndClosesLogsInParallel(t *testing.T) {
	e := newManagerEnv(t)
	efs := vfs.WithErrors(e.fs, nil)
	open := func() *LogManager {
		t.Helper()
		m, err := OpenManager("/kafka-logs", ManagerOptions{FS: efs, Clock: e.clock, Scheduler: InlineScheduler{},
			DefaultConfig: e.cfg, RecoveryThreadsPerDataDir: 2})
		if err != nil {
			t.Fatalf("open manager: %v", err)
		}
		return m
	}
	m := open()
	const parts = 6
	for i := range parts {
		l, err := m.GetOrCreateLog(TopicPartition{"many", int32(i)}, idA, e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.produce(l, i+1)
	}

	// The file system is synced whole after the closes (closeLogs), so
	// the probe holds the .log files' closes.
	closes := newOverlapProbe(vfs.OpClose)
	efs.SetInjector(closes.inject)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if !closes.overlapped() {
		t.Error("shutdown closed the logs one after the other: no two .log closes overlapped")
	}

	opens := newOverlapProbe(vfs.OpOpen)
	efs.SetInjector(opens.inject)
	m = open()
	defer m.Close()
	efs.SetInjector(nil)
	if !opens.overlapped() {
		t.Error("start-up opened the logs one after the other: no two .log opens overlapped")
	}
	for i := range parts {
		tp := TopicPartition{"many", int32(i)}
		l, ok := m.Log(tp)
		if !ok {
			t.Fatalf("%s not loaded", tp)
		}
		if want := int64(2 * (i + 1)); l.LogEndOffset() != want {
			t.Errorf("%s ends at %d after the restart, want %d", tp, l.LogEndOffset(), want)
		}
		if rep, _ := m.RecoveryReport(tp); rep == nil || !rep.Clean {
			t.Errorf("%s: recovery report %v, want a clean load", tp, rep)
		}
	}
}
