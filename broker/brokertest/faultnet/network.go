package faultnet

import (
	"context"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"
)

// DefaultCutDialDelay is how long a dial over a cut link takes to fail
// unless SetCutDialDelay changes it. A partitioned network drops the SYN,
// so a real dial fails only when its timeout expires; a short delay keeps
// that shape (the dialer's retry loop is not spun at full speed) without
// making tests wait out a real connect timeout.
const DefaultCutDialDelay = 100 * time.Millisecond

// defaultSeed seeds New, so a test that does not choose a seed still draws
// the same drops from run to run.
const defaultSeed = 1

// Network is a set of nodes whose connections it can cut, slow and reset.
// It is safe for concurrent use; it holds no goroutines of its own.
type Network struct {
	mu       sync.Mutex
	owners   map[string]int32 // canonical listening address -> node
	nodes    map[int32]struct{}
	cut      map[Link]struct{} // cut by Partition, both directions stored
	isolated map[int32]struct{}
	delay    map[Link]time.Duration
	drop     map[Link]float64
	cutDelay time.Duration
	rng      *rand.Rand         // drop draws; mu guards it, as rand.Rand is not safe for concurrent use
	conns    map[*conn]struct{} // live wrapped connections
	stats    map[Link]*LinkStats
}

// New returns a Network with no nodes and no faults, drawing drops from a
// fixed seed.
func New() *Network { return NewWithSeed(defaultSeed) }

// NewWithSeed returns a Network whose drops (SetLinkDrop) are drawn from a
// generator seeded with seed; tests print the seed to replay a failure.
func NewWithSeed(seed uint64) *Network {
	return &Network{
		owners:   make(map[string]int32),
		nodes:    make(map[int32]struct{}),
		cut:      make(map[Link]struct{}),
		isolated: make(map[int32]struct{}),
		delay:    make(map[Link]time.Duration),
		drop:     make(map[Link]float64),
		cutDelay: DefaultCutDialDelay,
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		conns:    make(map[*conn]struct{}),
		stats:    make(map[Link]*LinkStats),
	}
}

// Register says node owns the listening address addr ("127.0.0.1:port"),
// so dials to it are known to go to node. A node may own several addresses
// (its Kafka listener, its CONTROLLER/raft address). Registering an address
// again moves it to the new owner.
func (n *Network) Register(node int32, addr string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.owners[canonicalAddr(addr)] = node
	n.nodes[node] = struct{}{}
}

// Dialer returns the dialer node from uses for every inter-node
// connection. Dials to addresses no node registered (a test's own client,
// an outside service) pass through untouched.
//
// A dial over a cut link fails after the cut-dial delay (SetCutDialDelay),
// or sooner with ctx's error if ctx ends first; if the link is healed
// during the delay the dial goes ahead, as a retransmitted SYN would get
// through. The error is a *net.OpError with Op "dial" that wraps
// ErrLinkCut and reports Timeout, like a connect timeout.
func (n *Network) Dialer(from int32) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		n.mu.Lock()
		to, ok := n.owners[canonicalAddr(addr)]
		if !ok {
			n.mu.Unlock()
			return d.DialContext(ctx, network, addr)
		}
		l := Link{From: from, To: to}
		n.statsLocked(l).Dials++
		cut, wait := n.cutLocked(l), n.cutDelay
		n.mu.Unlock()

		if cut {
			if err := sleep(ctx, wait); err != nil {
				return nil, &net.OpError{Op: "dial", Net: network, Addr: dialAddr{network, addr}, Err: err}
			}
			if n.Cut(from, to) {
				return nil, n.refuse(l, network, addr)
			}
		}
		raw, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := newConn(n, raw, l)
		// Tracking checks the cut again under the lock Partition takes,
		// so a Partition that lands while the socket was connecting
		// either sees this connection (and breaks it) or is seen here.
		if !n.track(c) {
			_ = raw.Close()
			return nil, n.refuse(l, network, addr)
		}
		return c, nil
	}
}

func (n *Network) refuse(l Link, network, addr string) error {
	n.count(l, func(s *LinkStats) { s.DialsRefused++ })
	return &net.OpError{Op: "dial", Net: network, Addr: dialAddr{network, addr},
		Err: &faultError{link: l, cause: ErrLinkCut, errno: syscall.ETIMEDOUT, timeout: true}}
}

// track adds c to the live connections unless its link is cut.
func (n *Network) track(c *conn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cutLocked(c.link) {
		return false
	}
	n.conns[c] = struct{}{}
	return true
}

func (n *Network) forget(c *conn) {
	n.mu.Lock()
	delete(n.conns, c)
	n.mu.Unlock()
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// canonicalAddr spells an address the way Register and dials compare it:
// IP literals in canonical form and "localhost" as 127.0.0.1, since the
// test nodes listen on loopback.
func canonicalAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().String()
	}
	return net.JoinHostPort(host, port)
}

// dialAddr is the net.Addr of a dial error: the address as the caller
// wrote it, unresolved.
type dialAddr struct{ network, addr string }

func (a dialAddr) Network() string { return a.network }
func (a dialAddr) String() string  { return a.addr }
