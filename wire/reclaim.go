package wire

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Giving memory back. The collector runs when the heap reaches GOGC
// percent over the live heap (400 for `strait serve`), and returns freed
// pages to the OS slowly, keeping about as much as that goal; left alone,
// a burst of 100 MB requests leaves the broker's resident set near its
// peak for minutes, and their garbage lets the heap grow to several times
// what the request memory pool allows to be alive. So:
//
//   - A dropped frame buffer of reclaimFrameBytes or more keeps its
//     request memory reserved (debt) until a collection that began after
//     it was dropped has ended: the pool's bound covers the garbage too.
//     Most debt is repaid by the collector's own cycles; the reclaimer
//     forces one (runtime.GC) only when a connection waits for request
//     memory, or when debt is reclaimDelay old.
//   - Once a burst is over (reclaimDelay without new debt) the freed
//     pages go back to the OS (debug.FreeOSMemory).
//   - Every trimEvery the buffer pool drops the buffers that sat unused
//     for the whole period (bufpool.go), and their pages go back too.
//
// A forced collection costs little here: request frames are pointer-free
// and never scanned, so its work is the broker's live heap of metadata
// and state.
const (
	// reclaimFrameBytes is the smallest dropped frame buffer whose
	// reservation waits for a collection; smaller garbage is left to
	// GOGC's pacing.
	reclaimFrameBytes = 1 << 20
	// reclaimDelay is how long debt waits for the collector's own cycles
	// when nobody needs the memory, and how long a burst must be over
	// before its pages go back to the OS.
	reclaimDelay = time.Second
	// trimEvery is how often idle pooled buffers are dropped.
	trimEvery = 10 * time.Second
)

// debt is request memory owed by frames dropped while the collector had
// completed cycle collections, the first of them at at.
type debt struct {
	cycle uint64
	bytes int64
	at    time.Time
}

// gcCycles is the number of collection cycles completed so far.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// owe keeps the reservation of a frame of n bytes whose buffer went to
// the garbage collector until a collection has taken it.
func (m *requestMemory) owe(n int) {
	cycle := gcCycles()
	now := time.Now()
	m.mu.Lock()
	if k := len(m.debts); k > 0 && m.debts[k-1].cycle == cycle {
		m.debts[k-1].bytes += int64(n)
	} else {
		m.debts = append(m.debts, debt{cycle: cycle, bytes: int64(n), at: now})
	}
	m.debt += int64(n)
	m.lastOwe = now
	m.mu.Unlock()
	m.nudge()
}

// repayCollected returns the debt the collector's own cycles have taken,
// given that cycles collections have completed: a buffer dropped while
// cycle c had completed may have been marked by cycle c+1, already under
// way, but c+2 began after the drop. (Sweeping may lag behind; the
// allocator sweeps before it grows the heap.) It reports how much it
// returned.
func (m *requestMemory) repayCollected(cycles uint64) int64 {
	m.mu.Lock()
	var n int64
	for _, d := range m.debts {
		if d.cycle+2 > cycles {
			break
		}
		n += d.bytes
	}
	m.mu.Unlock()
	if n > 0 {
		m.repay(n)
	}
	return n
}

// repay returns the oldest n bytes of debt.
func (m *requestMemory) repay(n int64) {
	m.mu.Lock()
	paid := int64(0)
	for n > 0 && len(m.debts) > 0 {
		d := &m.debts[0]
		take := min(n, d.bytes)
		d.bytes -= take
		n -= take
		paid += take
		if d.bytes == 0 {
			m.debts = m.debts[1:]
		}
	}
	m.debt -= paid
	m.used -= paid
	m.large -= paid
	wake := m.waitersLocked()
	m.reportLocked()
	m.mu.Unlock()
	for _, cn := range wake {
		_ = cn.gc.Wake(nil)
	}
}

// debtState is what the reclaimer decides on: the debt, when its oldest
// part and its newest were incurred, and whether a connection waits for
// request memory.
func (m *requestMemory) debtState() (owed int64, oldest, newest time.Time, waiting bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.debts) > 0 {
		oldest = m.debts[0].at
	}
	return m.debt, oldest, m.lastOwe, len(m.waiters) > 0
}

// reclaim runs until done is closed. It is the only caller of the
// collector here, so forced collections never pile up.
func (m *requestMemory) reclaim(done <-chan struct{}, bufs *bufferPool) {
	trim := time.NewTicker(trimEvery)
	defer trim.Stop()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	returnPages := false // freed memory is still the runtime's, to go back to the OS
	for {
		select {
		case <-done:
			return
		case <-m.kick:
		case <-timer.C:
		case <-trim.C:
			if bufs.trimIdle() >= reclaimFrameBytes {
				returnPages = true
			}
		}
		if m.repayCollected(gcCycles()) > 0 {
			returnPages = true
		}
		now := time.Now()
		owed, owedAt, lastOwe, waiting := m.debtState()
		switch {
		case owed > 0 && (waiting || now.Sub(owedAt) >= reclaimDelay):
			// Everything owed now was dropped before the collection
			// begins, and is freed when it returns.
			m.collect()
			m.repay(owed)
			returnPages = true
		case owed == 0 && returnPages && now.Sub(lastOwe) >= reclaimDelay:
			m.scavenge()
			returnPages = false
		}
		var next time.Time
		if owed, owedAt, lastOwe, _ := m.debtState(); owed > 0 {
			next = owedAt.Add(reclaimDelay)
		} else if returnPages {
			next = lastOwe.Add(reclaimDelay)
		}
		if !next.IsZero() {
			timer.Reset(max(time.Until(next), time.Millisecond))
		}
	}
}

// collect runs a full collection: every buffer dropped before the call is
// freed when it returns.
func (m *requestMemory) collect() {
	m.collections.Add(1)
	runtime.GC()
}

// scavenge collects and returns every free page to the OS.
func (m *requestMemory) scavenge() {
	m.collections.Add(1)
	m.scavenges.Add(1)
	debug.FreeOSMemory()
}
