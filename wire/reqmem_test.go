package wire

import (
	"context"
	"errors"
	"math"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// gatedStandIn answers SaslAuthenticate (key 36) once the gate named by
// the first byte of its SASLAuthBytes opens (or the connection closes):
// a request that holds its frame for as long as the test says.
type gatedStandIn struct {
	p     *probe
	mu    sync.Mutex
	gates map[string]chan struct{}
}

func newGatedStandIn() *gatedStandIn {
	return &gatedStandIn{p: newProbe(), gates: map[string]chan struct{}{}}
}

func (g *gatedStandIn) gate(name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gates[name] == nil {
		g.gates[name] = make(chan struct{})
	}
	return g.gates[name]
}

func (g *gatedStandIn) open(name string) { close(g.gate(name)) }

func (g *gatedStandIn) api() api {
	return api{key: 36, min: 0, max: 2, handle: func(_ *Server, ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		req := kreq.(*kmsg.SASLAuthenticateRequest)
		if len(req.SASLAuthBytes) == 0 {
			return nil, errors.New("no gate named")
		}
		name := string(req.SASLAuthBytes[:1])
		g.p.handled.Add(1)
		g.p.start(name)
		defer g.p.finish(name)
		select {
		case <-g.gate(name):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return req.ResponseKind(), nil
	}}
}

// gatedRequest is a SaslAuthenticate frame of about size bytes whose
// handler waits for gate name.
func gatedRequest(name string, size int) []byte {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version = 2
	req.SASLAuthBytes = make([]byte, size)
	copy(req.SASLAuthBytes, name)
	return encodeRequest(1, "gated", req)
}

// memMetrics records the request memory measurements.
type memMetrics struct {
	NopMetrics
	mu          sync.Mutex
	used, avail int64
	waits       int
	waitBytes   int
}

func (m *memMetrics) RequestMemory(used, avail int64) {
	m.mu.Lock()
	m.used, m.avail = used, avail
	m.mu.Unlock()
}

func (m *memMetrics) RequestMemoryWait(n int) {
	m.mu.Lock()
	m.waits++
	m.waitBytes += n
	m.mu.Unlock()
}

func (m *memMetrics) get() (used, avail int64, waits, waitBytes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used, m.avail, m.waits, m.waitBytes
}

func (g *gatedStandIn) started(name string) bool {
	_, ok := g.p.startedAt(name)
	return ok
}

// waitMemoryUsed waits until the pool holds exactly used bytes.
func waitMemoryUsed(t *testing.T, s *Server, used int64) {
	t.Helper()
	waitFor(t, 10*time.Second, "request memory in use to settle", func() bool {
		u, _, _, _, _ := s.reqMem.state()
		return u == used
	})
}

// Large requests wait for request memory (queued.max.request.bytes): the
// connection is not read until a request holding memory ends, small
// requests are served meanwhile even with the pool full, a request larger
// than the whole pool is read when nothing else holds memory, and
// everything is given back.
func TestRequestMemoryHoldsBackLargeRequests(t *testing.T) {
	const capacity = 4 << 20
	g := newGatedStandIn()
	m := &memMetrics{}
	s := newTestServer(t, Config{QueuedMaxRequestBytes: capacity}, m, g.api())
	// A takes the whole pool.
	overhead := len(gatedRequest("A", 0)) - 4
	frameA, frameB := gatedRequest("A", capacity-overhead), gatedRequest("B", 1<<20)

	a := dialRaw(t, s.plaintextAddr())
	a.write(frameA)
	waitFor(t, 5*time.Second, "A to be handled", func() bool { return g.started("A") })

	b := dialRaw(t, s.plaintextAddr())
	go func() { _, _ = b.Write(frameB) }() // blocks while the server does not read b
	waitFor(t, 5*time.Second, "B to wait for memory", func() bool {
		_, _, _, waiters, _ := s.reqMem.state()
		return waiters == 1
	})
	time.Sleep(200 * time.Millisecond)
	if g.started("B") {
		t.Fatal("B was read while A held the memory it needs")
	}
	if used, avail, waits, waitBytes := m.get(); used != int64(len(frameA)-4) || avail != capacity-used || waits != 1 || waitBytes != len(frameB)-4 {
		t.Fatalf("metrics: used %d, available %d, %d waits for %d bytes; want used %d, 1 wait for %d bytes",
			used, avail, waits, waitBytes, len(frameA)-4, len(frameB)-4)
	}
	// Small requests are not held back, although the pool is full.
	apiVersionsOK(t, s.plaintextAddr())

	// A ends: its frame's memory comes back (after a collection) and B
	// is read.
	g.open("A")
	a.readFrame(5 * time.Second)
	waitFor(t, 5*time.Second, "B to be handled", func() bool { return g.started("B") })
	g.open("B")
	b.readFrame(5 * time.Second)
	waitMemoryUsed(t, s, 0)

	// One request larger than the whole pool is read, alone.
	c := dialRaw(t, s.plaintextAddr())
	c.write(gatedRequest("C", capacity+1<<20))
	waitFor(t, 5*time.Second, "C, larger than the pool, to be handled", func() bool { return g.started("C") })
	g.open("C")
	c.readFrame(5 * time.Second)
	waitMemoryUsed(t, s, 0)
	if used, avail, _, _ := m.get(); used != 0 || avail != capacity {
		t.Fatalf("metrics after: used %d, available %d", used, avail)
	}
}

// A large partial request that makes no progress is closed once another
// connection waits for the memory it holds, and only then.
func TestRequestMemoryClosesStalledPartialRequests(t *testing.T) {
	const (
		capacity = 4 << 20
		size     = 3 << 20
		stall    = 300 * time.Millisecond
	)
	g := newGatedStandIn()
	s := newTestServer(t, Config{QueuedMaxRequestBytes: capacity, stallTimeout: stall}, nil, g.api())

	staller := dialRaw(t, s.plaintextAddr())
	frame := gatedRequest("S", size)
	staller.write(frame[:len(frame)/2])
	waitFor(t, 5*time.Second, "the partial request to hold memory", func() bool {
		_, _, _, _, holders := s.reqMem.state()
		return holders == 1
	})
	// Nobody waits: the stalled request may stay.
	time.Sleep(3 * stall)
	_ = staller.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := staller.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("a stalled partial request was closed while nobody waited: %v", err)
	}

	b := dialRaw(t, s.plaintextAddr())
	go func() { _, _ = b.Write(gatedRequest("B", size)) }()
	staller.expectClosed(10 * time.Second)
	waitFor(t, 5*time.Second, "B to be handled", func() bool { return g.started("B") })
	g.open("B")
	b.readFrame(5 * time.Second)
	waitMemoryUsed(t, s, 0)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// A connection that closes in the middle of a request gives its memory
// back: a pooled Produce frame's at once, another's after a collection.
func TestRequestMemoryReturnedWhenPartialRequestsClose(t *testing.T) {
	g := newGatedStandIn()
	s := newTestServer(t, Config{QueuedMaxRequestBytes: 64 << 20}, nil, g.api())
	produce := kmsg.NewPtrProduceRequest()
	produce.Version, produce.Acks = 9, 1
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = make([]byte, 3<<20)
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	for _, frame := range [][]byte{encodeRequest(1, "half", produce), gatedRequest("H", 3<<20)} {
		c := dialRaw(t, s.plaintextAddr())
		c.write(frame[:len(frame)/2])
		waitFor(t, 5*time.Second, "the partial request to hold memory", func() bool {
			used, _, _, _, holders := s.reqMem.state()
			return holders == 1 && used == int64(len(frame)-4)
		})
		c.Close()
		waitMemoryUsed(t, s, 0)
	}
	if s.bufs.outstanding() != 0 {
		t.Fatalf("%d pooled buffers not given back", s.bufs.outstanding())
	}
}

func TestDefaultQueuedMaxRequestBytes(t *testing.T) {
	for _, c := range []struct{ avail, want int64 }{
		{0, 256 << 20},        // unknown
		{24 << 30, 256 << 20}, // this machine: the upper bound
		{2 << 30, 256 << 20},
		{1 << 30, 128 << 20},
		{512 << 20, 64 << 20},
		{64 << 20, 16 << 20}, // the lower bound
	} {
		if got := DefaultQueuedMaxRequestBytes(c.avail); got != c.want {
			t.Errorf("DefaultQueuedMaxRequestBytes(%d MiB) = %d MiB, want %d MiB", c.avail>>20, got>>20, c.want>>20)
		}
	}
	cfg := Config{}.withDefaults()
	if cfg.QueuedMaxRequestBytes < minDefaultQueuedRequestBytes || cfg.QueuedMaxRequestBytes > maxDefaultQueuedRequestBytes || cfg.queuedFrom == "" {
		t.Fatalf("derived default %d (%q)", cfg.QueuedMaxRequestBytes, cfg.queuedFrom)
	}
	if m := newRequestMemory(Config{QueuedMaxRequestBytes: -1}.withDefaults(), testLogger(), nil); m.capacity != math.MaxInt64 {
		t.Fatalf("queued.max.request.bytes=-1: capacity %d, want unbounded", m.capacity)
	}
}

// A dropped frame buffer's request memory comes back only after a
// collection that began after the drop: the pool bounds the garbage too.
// A buffer kept for reuse, or a small one, gives it back at once.
func TestRequestMemoryDebtWaitsForCollection(t *testing.T) {
	m := newRequestMemory(Config{QueuedMaxRequestBytes: 64 << 20}.withDefaults(), testLogger(), nil)
	const big = 2 << 20
	for _, c := range []struct {
		n    int
		kept bool
	}{{big, true}, {reclaimFrameBytes - 1, false}} {
		if !m.reserve(nil, &frameRead{}, c.n) {
			t.Fatal("no room in an empty pool")
		}
		m.assembled(nil)
		m.releaseFrame(c.n, c.kept)
		if used, _, owed, _, _ := m.state(); used != 0 || owed != 0 {
			t.Fatalf("a %d-byte frame (kept %t) left %d bytes used, %d owed", c.n, c.kept, used, owed)
		}
	}
	m.reserve(nil, &frameRead{}, big)
	m.assembled(nil)
	m.releaseFrame(big, false)
	if used, large, owed, _, _ := m.state(); used != big || large != big || owed != big {
		t.Fatalf("a dropped %d-byte frame: used %d, large %d, owed %d; want all %d until a collection", big, used, large, owed, big)
	}
	if paid := m.repayCollected(gcCycles()); paid != 0 {
		t.Fatalf("repaid %d bytes before any collection began after the drop", paid)
	}
	runtime.GC()
	runtime.GC()
	if paid := m.repayCollected(gcCycles()); paid != big {
		t.Fatalf("repaid %d bytes after two collections, want %d", paid, big)
	}
	if used, large, owed, _, _ := m.state(); used != 0 || large != 0 || owed != 0 {
		t.Fatalf("after: used %d, large %d, owed %d", used, large, owed)
	}
}
