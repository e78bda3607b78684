package wire

import (
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

// RequestMemoryMetrics receives the request memory pool's measurements
// (Kafka's SocketServer MemoryPoolAvailable and MemoryPoolUsed gauges,
// plus how often reading waited for it). A Metrics that implements it
// gets them; calls come from event loops and request goroutines and must
// not block.
type RequestMemoryMetrics interface {
	// RequestMemory reports the bytes reserved for requests and the bytes
	// left (negative while over capacity; math.MaxInt64 when unbounded)
	// after every change.
	RequestMemory(used, available int64)
	// RequestMemoryWait counts a connection that stopped being read
	// because its next request, of n bytes, found no room.
	RequestMemoryWait(n int)
}

// Request memory: Kafka's queued.max.request.bytes (KIP-72). Every request
// frame is read into a buffer of its own size, reserved from a pool of
// capacity bytes as soon as the frame's 4-byte size is known and before
// anything of that size is allocated. When the pool has no room, the
// connection stops being read (its size prefix stays unread) until memory
// comes back, as Kafka's Selector mutes a channel whose
// MemoryPool.tryAllocate failed; the client is held back by TCP flow
// control instead of growing the broker. The frame is assembled straight
// from the socket reads into its buffer, so a request exists once, and a
// half-sent one holds no more than its reservation.
//
// Admission, like Kafka's non-strict SimpleMemoryPool, never refuses a
// request for being larger than the pool: a frame is admitted when it fits
// in what is left, or when no other large frame holds memory (so one frame
// larger than the whole pool is still read, alone). Unlike Kafka's pool,
// which admits anything while any memory is left and so may reach capacity
// plus socket.request.max.bytes, ours stays within capacity except for
// that lone frame, which is what lets the default be derived from the
// machine's memory and hold.
//
// Small frames never wait. A frame of at most smallFrameBytes (what one
// read of the socket brings in) usually is in memory already when its size
// is read, so holding it back would save nothing, and it is what ordinary
// clients send: metadata, fetches, heartbeats, commits, most produce
// requests. They count in the pool's use but are admitted over capacity,
// so clients sending huge requests (or half of one, then nothing) cannot
// starve everyone else; what they cost is bounded per connection by
// MaxInflightRequests.
//
// A stalled partial frame is closed when others wait. Kafka frees the
// memory of a client that sent half a request only when
// connections.max.idle.ms closes it (10 minutes by default). A large frame
// that has received nothing for stallTimeout while another connection
// waits for request memory is closed instead: its client gave up on it
// (the Java client's request.timeout.ms is 30 s) or never meant to finish
// it.
//
// Memory comes back. A frame buffer that goes to the garbage collector
// (every frame but a pooled Produce frame kept for reuse by bufpool.go)
// keeps its reservation until a collection has run (reclaim.go), so the
// pool bounds the request frames alive and the garbage they left not yet
// collected, not only the former: with GOGC=400 the collector would
// otherwise let garbage grow to four times the live heap before running.

const (
	// smallFrameBytes is the largest frame that never waits for request
	// memory: gnet's read size, gnet.MaxStreamBufferCap.
	smallFrameBytes = 64 << 10
	// defaultStallTimeout is how long a large partial frame may go without
	// a byte while others wait for request memory: the Java producer's
	// default request.timeout.ms.
	defaultStallTimeout = 30 * time.Second
	// Bounds of the derived default of queued.max.request.bytes.
	minDefaultQueuedRequestBytes = 16 << 20
	maxDefaultQueuedRequestBytes = 256 << 20
)

// DefaultQueuedMaxRequestBytes is the request memory of a process that may
// use available bytes of memory: an eighth of it, at least 16 MiB and at
// most 256 MiB; 256 MiB when available is unknown (0). 256 MiB keeps two
// requests of the default socket.request.max.bytes, or hundreds of
// ordinary ones, in flight, more than a broker's disks and network can use
// at once, while bounding what a handful of clients can make it hold;
// an eighth leaves a small container most of its memory for the live heap
// and the page cache.
func DefaultQueuedMaxRequestBytes(available int64) int64 {
	if available <= 0 {
		return maxDefaultQueuedRequestBytes
	}
	return min(max(available/8, minDefaultQueuedRequestBytes), maxDefaultQueuedRequestBytes)
}

// requestMemory is the pool. Reservations are taken on event loops and
// returned from request goroutines and the reclaimer.
type requestMemory struct {
	capacity     int64 // math.MaxInt64 when unbounded
	stallTimeout time.Duration
	clock        clock.Clock
	logger       *slog.Logger
	metrics      RequestMemoryMetrics // nil when the server's Metrics does not take them
	kick         chan struct{}        // tells the reclaimer something changed; buffered 1

	mu      sync.Mutex
	used    int64                // bytes reserved, debt included
	large   int64                // the part of used held by frames above smallFrameBytes
	debt    int64                // reservations of dropped frame buffers, returned after a collection
	debts   []debt               // debt by the collection cycle it was incurred in, oldest first
	lastOwe time.Time            // when debt was last incurred
	waiters map[*conn]struct{}   // connections not read for want of memory
	holders map[*conn]*frameRead // connections assembling a large frame

	collections atomic.Int64 // collections the reclaimer ran (tests)
	scavenges   atomic.Int64 // of which returned free pages to the OS
}

// newRequestMemory is the pool of cfg (defaults applied), logged as the
// server starts.
func newRequestMemory(cfg Config, logger *slog.Logger, metrics Metrics) *requestMemory {
	capacity := cfg.QueuedMaxRequestBytes
	if capacity < 0 {
		capacity = math.MaxInt64
		logger.Info("request memory is unbounded", "queued.max.request.bytes", cfg.QueuedMaxRequestBytes)
	} else {
		attrs := []any{"queued.max.request.bytes", capacity}
		if cfg.queuedFrom != "" {
			attrs = append(attrs, "derived_from", cfg.queuedFrom)
		}
		logger.Info("request memory bounded", attrs...)
	}
	m := &requestMemory{
		capacity:     capacity,
		stallTimeout: cfg.stallTimeout,
		clock:        cfg.Clock,
		logger:       logger,
		kick:         make(chan struct{}, 1),
		waiters:      make(map[*conn]struct{}),
		holders:      make(map[*conn]*frameRead),
	}
	m.metrics, _ = metrics.(RequestMemoryMetrics)
	m.reportLocked()
	return m
}

func isLargeFrame(n int) bool { return n > smallFrameBytes }

// reserve takes n bytes for cn's next frame, whose assembly is fr, or
// reports false and remembers cn as waiting: its loop stops reading it,
// and a release wakes it to try again. Called by whoever reads cn: its
// loop, or its runner once reading is handed over (reader.go).
func (m *requestMemory) reserve(cn *conn, fr *frameRead, n int) bool {
	size := int64(n)
	large := isLargeFrame(n)
	m.mu.Lock()
	if large && m.used+size > m.capacity && m.large > 0 {
		_, already := m.waiters[cn]
		m.waiters[cn] = struct{}{}
		stalled := m.stalledLocked()
		m.mu.Unlock()
		if !already {
			if m.metrics != nil {
				m.metrics.RequestMemoryWait(n)
			}
			m.nudge()
		}
		m.closeStalled(stalled, n)
		return false
	}
	delete(m.waiters, cn)
	m.used += size
	if large {
		m.large += size
		m.holders[cn] = fr
	}
	m.reportLocked()
	m.mu.Unlock()
	return true
}

// assembled notes that cn's large frame is complete: it no longer holds a
// partial frame. Called by whoever reads cn.
func (m *requestMemory) assembled(cn *conn) {
	m.mu.Lock()
	delete(m.holders, cn)
	m.mu.Unlock()
}

// forget drops cn from the waiters and holders: it closed (on its loop)
// or its runner stopped reading it (reader.go).
func (m *requestMemory) forget(cn *conn) {
	m.mu.Lock()
	delete(m.waiters, cn)
	delete(m.holders, cn)
	m.mu.Unlock()
}

// release returns the reservation of a frame of n bytes whose buffer is
// reused or small enough to leave to the collector's pacing.
func (m *requestMemory) release(n int) {
	m.mu.Lock()
	m.used -= int64(n)
	var wake []*conn
	if isLargeFrame(n) {
		m.large -= int64(n)
		wake = m.waitersLocked()
	}
	m.reportLocked()
	m.mu.Unlock()
	for _, cn := range wake {
		_ = cn.gc.Wake(nil)
	}
}

// releaseFrame returns the reservation of a frame of n bytes: at once when
// its buffer was kept for reuse (kept) or is small, else once the garbage
// collector has had a chance to take it.
func (m *requestMemory) releaseFrame(n int, kept bool) {
	if n <= 0 {
		return
	}
	if kept || n < reclaimFrameBytes {
		m.release(n)
		return
	}
	m.owe(n)
}

// freeFrame gives a request frame back: a pooled buffer to the buffer
// pool, and the request memory reserved for it to the pool.
func (s *Server) freeFrame(buf []byte, pooled bool, reserved int) {
	kept := pooled && s.bufs.put(buf)
	s.reqMem.releaseFrame(reserved, kept)
}

func (m *requestMemory) nudge() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

func (m *requestMemory) waitersLocked() []*conn {
	if len(m.waiters) == 0 {
		return nil
	}
	out := make([]*conn, 0, len(m.waiters))
	for cn := range m.waiters {
		out = append(out, cn)
	}
	return out
}

// stalledLocked takes out of holders the connections whose large partial
// frame has had no byte for stallTimeout.
func (m *requestMemory) stalledLocked() []*conn {
	if m.stallTimeout <= 0 || len(m.holders) == 0 {
		return nil
	}
	limit := m.clock.Now().Add(-m.stallTimeout).UnixNano()
	var out []*conn
	for cn, fr := range m.holders {
		if fr.progress.Load() < limit {
			delete(m.holders, cn)
			out = append(out, cn)
		}
	}
	return out
}

func (m *requestMemory) closeStalled(stalled []*conn, waiting int) {
	for _, cn := range stalled {
		m.logger.Warn("closing connection: its partial request holds request memory without progress while others wait",
			"conn", cn.info.ConnID, "client", cn.info.ClientHost, "listener", cn.info.Listener,
			"stalled_for", m.stallTimeout, "waiting_request_bytes", waiting)
		_ = cn.gc.Close()
	}
}

func (m *requestMemory) reportLocked() {
	if m.metrics == nil {
		return
	}
	avail := int64(math.MaxInt64)
	if m.capacity != math.MaxInt64 {
		avail = m.capacity - m.used
	}
	m.metrics.RequestMemory(m.used, avail)
}

// state is the pool's use, for tests and Server.RequestMemory.
func (m *requestMemory) state() (used, large, debt int64, waiters, holders int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used, m.large, m.debt, len(m.waiters), len(m.holders)
}
