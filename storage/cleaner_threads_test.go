package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/record"
)

// dirtyCompactedLog creates a compacted log with n duplicate-key records
// in a closed segment below the high watermark: ratio 1, due at once.
func dirtyCompactedLog(t *testing.T, e *managerEnv, m *LogManager, topic string, n int) *Log {
	t.Helper()
	cfg := e.cfg
	cfg.SegmentBytes = 1 << 20
	cfg.CleanupPolicy = CleanupPolicy{Compact: true}
	l, err := m.GetOrCreateLog(TopicPartition{topic, 0}, idA, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		mustAppend(t, l, kvBatch(t, e.clock.Now().UnixMilli(), record.CodecNone, fmt.Sprintf("k%d=%d", i%2, i)))
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	return l
}

// waitCleaned waits, generously, for the cleaner to move l's checkpoint to
// want.
func waitCleaned(t *testing.T, l *Log, want int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for l.CleanerCheckpoint() != want {
		if time.Now().After(deadline) {
			t.Fatalf("cleaner checkpoint %d, want %d", l.CleanerCheckpoint(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func cleanerThreadCount(m *LogManager) int {
	m.cleanerThreads.mu.Lock()
	defer m.cleanerThreads.mu.Unlock()
	return len(m.cleanerThreads.cancels)
}

// The cleaner threads run on their own: nothing is cleaned before
// StartCleaner (the broker starts them once every log has its topic's
// config), then a dirty log is cleaned without any maintenance pass.
func TestCleanerThreadsCleanOnTheirOwn(t *testing.T) {
	e := newManagerEnv(t)
	m, err := OpenManager("/kafka-logs", ManagerOptions{FS: e.fs, Clock: e.clock, DefaultConfig: e.cfg,
		Cleaner: CleanerConfig{BackoffMs: 10}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l := dirtyCompactedLog(t, e, m, "changelog", 10)
	time.Sleep(50 * time.Millisecond)
	if cp := l.CleanerCheckpoint(); cp != 0 || cleanerThreadCount(m) != 0 {
		t.Fatalf("before StartCleaner: checkpoint %d, %d threads", cp, cleanerThreadCount(m))
	}
	m.StartCleaner()
	waitCleaned(t, l, 10)
	// The stats count the cleaning just after its checkpoint moved.
	deadline := time.Now().Add(20 * time.Second)
	for st := m.CleanerStats(); st.Threads != 1 || st.Cleanings != 1; st = m.CleanerStats() {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, want one thread, one cleaning", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := keysAt(t, l); len(got) != 2 {
		t.Fatalf("cleaned log holds %v, want one record per key", got)
	}
	// More dirt is found after the backoff.
	l2 := dirtyCompactedLog(t, e, m, "later", 6)
	waitCleaned(t, l2, 6)
}

// SetCleanerConfig applies at once: a resting thread wakes for a shorter
// backoff, and log.cleaner.threads adds or stops threads.
func TestCleanerThreadsReconfigure(t *testing.T) {
	e := newManagerEnv(t)
	m, err := OpenManager("/kafka-logs", ManagerOptions{FS: e.fs, Clock: e.clock, DefaultConfig: e.cfg,
		Cleaner: CleanerConfig{BackoffMs: time.Hour.Milliseconds()}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.StartCleaner()
	if n := cleanerThreadCount(m); n != 1 {
		t.Fatalf("%d threads by default, want 1", n)
	}
	// The thread found nothing and rests for an hour; dirt written now
	// waits for the rest to end unless the new backoff wakes it.
	time.Sleep(20 * time.Millisecond)
	l := dirtyCompactedLog(t, e, m, "changelog", 10)
	m.SetCleanerConfig(CleanerConfig{BackoffMs: 10, Threads: 3})
	waitCleaned(t, l, 10)
	if n := cleanerThreadCount(m); n != 3 {
		t.Fatalf("%d threads after log.cleaner.threads=3", n)
	}
	m.SetCleanerConfig(CleanerConfig{BackoffMs: 10, Threads: 2})
	if n := cleanerThreadCount(m); n != 2 {
		t.Fatalf("%d threads after log.cleaner.threads=2", n)
	}
	m.SetCleanerConfig(CleanerConfig{BackoffMs: 10, Disable: true})
	if n := cleanerThreadCount(m); n != 0 {
		t.Fatalf("%d threads after the cleaner was disabled", n)
	}
	if got := m.cleanerConfig().cleanOptions(nil).DedupeBufferSize; got != DefaultDedupeBufferSize {
		t.Fatalf("dedupe buffer of one thread %d, want all of it", got)
	}
	if got := (CleanerConfig{Threads: 4}).cleanOptions(nil).DedupeBufferSize; got != DefaultDedupeBufferSize/4 {
		t.Fatalf("dedupe buffer of one of 4 threads %d, want a quarter", got)
	}
}

// Two threads never take the same log (Kafka's inProgress).
func TestCleanerGrabSkipsLogsInProgress(t *testing.T) {
	e := newManagerEnv(t)
	m := e.open()
	defer m.Close()
	dirtyCompactedLog(t, e, m, "a", 4)
	dirtyCompactedLog(t, e, m, "b", 4)
	first, ok1 := m.grabFilthiestLog()
	second, ok2 := m.grabFilthiestLog()
	_, ok3 := m.grabFilthiestLog()
	if !ok1 || !ok2 || ok3 || first.tp == second.tp {
		t.Fatalf("grabs: %v %t, %v %t, third %t", first.tp, ok1, second.tp, ok2, ok3)
	}
}

// log.cleaner.io.max.bytes.per.second: past the limit a cleaning waits
// (here until its context ends); without a limit it never does.
func TestCleanerIOThrottle(t *testing.T) {
	e := newManagerEnv(t)
	th := newIOThrottler(e.clock, CleanerConfig{IoMaxBytesPerSecond: 100})
	th.maybeThrottle(context.Background(), 1000) // within the first check interval
	e.clock.Advance(cleanerThrottleCheckInterval)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		th.maybeThrottle(ctx, 0) // 1000 bytes in 300 ms at 100 B/s: wait ~9.7 s
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("1000 bytes in 300 ms did not wait at 100 bytes/s")
	case <-time.After(200 * time.Millisecond):
	}
	// A new limit does not wait for the sleeping thread (the broker sets
	// it from the metadata subscriber).
	set := make(chan struct{})
	go func() {
		th.setRate(CleanerConfig{IoMaxBytesPerSecond: 1000})
		close(set)
	}()
	select {
	case <-set:
	case <-time.After(5 * time.Second):
		t.Fatal("setRate waited for the throttled thread")
	}
	cancel()
	<-done

	th.setRate(CleanerConfig{})
	e.clock.Advance(time.Hour)
	th.maybeThrottle(context.Background(), 1<<40) // no limit: returns at once
}
