package wire

import (
	"runtime"
	"runtime/debug"
	"time"
)

// Giving memory back. The collector runs when the heap reaches GOGC
// percent over the live heap (400 for `strait serve`), and returns freed
// pages to the OS slowly, keeping about as much as that goal; left alone,
// a burst of 100 MB requests leaves the broker's resident set near its
// peak for minutes. The reclaimer runs next to the server:
//
//   - A dropped frame buffer of reclaimFrameBytes or more keeps its
//     request memory reserved (debt, reqmem.go) until a collection has
//     run. It runs one (runtime.GC) as soon as a connection waits for
//     request memory or the debt reaches a quarter of the pool, so the
//     pool's bound covers that garbage too, and returns the debt.
//   - Otherwise debt is collected reclaimDelay after it began, and once a
//     burst is over (reclaimDelay without new debt) the freed pages go
//     back to the OS (debug.FreeOSMemory).
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
	// reclaimDelay is how long debt waits for a collection when nobody
	// needs the memory, and how long a burst must be over before its
	// pages go back to the OS.
	reclaimDelay = time.Second
	// trimEvery is how often idle pooled buffers are dropped.
	trimEvery = 10 * time.Second
)

// reclaim runs until done is closed. It is the only caller of the
// collector here, so collections never pile up.
func (m *requestMemory) reclaim(done <-chan struct{}, bufs *bufferPool) {
	trim := time.NewTicker(trimEvery)
	defer trim.Stop()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var scavengeAt time.Time // when freed pages go back to the OS; zero: nothing to give back
	for {
		select {
		case <-done:
			return
		case <-m.kick:
		case <-timer.C:
		case <-trim.C:
			if bufs.trimIdle() >= reclaimFrameBytes && scavengeAt.IsZero() {
				scavengeAt = time.Now()
			}
		}
		now := time.Now()
		debt, owedAt, waiting := m.debtState()
		switch {
		case debt > 0 && (waiting || debt >= m.capacity/4):
			m.collect()
			m.repay(debt)
			scavengeAt = now.Add(reclaimDelay)
		case debt > 0 && now.Sub(owedAt) >= reclaimDelay:
			m.scavenge()
			m.repay(debt)
			scavengeAt = time.Time{}
		case debt == 0 && !scavengeAt.IsZero() && !now.Before(scavengeAt):
			m.scavenge()
			scavengeAt = time.Time{}
		}
		var next time.Time
		if debt, owedAt, _ := m.debtState(); debt > 0 {
			next = owedAt.Add(reclaimDelay)
		}
		if !scavengeAt.IsZero() && (next.IsZero() || scavengeAt.Before(next)) {
			next = scavengeAt
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
