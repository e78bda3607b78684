package faultnet

import (
	"fmt"
	"syscall"
	"time"
)

// Partition cuts the links between every node of a and every node of b,
// in both directions, as a switch failure between two racks would: new
// dials between them fail (see Dialer) and existing connections between
// them are reset at once by closing their sockets, so blocked reads on
// either end return. A link stays cut until Heal.
func (n *Network) Partition(a, b []int32) {
	n.mu.Lock()
	for _, x := range a {
		for _, y := range b {
			if x == y {
				continue
			}
			n.cut[Link{x, y}] = struct{}{}
			n.cut[Link{y, x}] = struct{}{}
		}
	}
	broken := n.cutConnsLocked()
	n.mu.Unlock()
	n.breakAll(broken)
}

// Isolate cuts node from every other node, including nodes registered
// after the call, until Heal. A node's links to itself stay up.
func (n *Network) Isolate(node int32) {
	n.mu.Lock()
	n.isolated[node] = struct{}{}
	broken := n.cutConnsLocked()
	n.mu.Unlock()
	n.breakAll(broken)
}

// Heal restores every link cut by Partition or Isolate: new dials succeed
// again. Connections already broken stay broken; their owners reconnect,
// as they would after a real partition. Delays and drops are kept.
func (n *Network) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.cut)
	clear(n.isolated)
}

// Cut reports whether the link from->to is cut.
func (n *Network) Cut(from, to int32) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cutLocked(Link{from, to})
}

// SetCutDialDelay sets how long a dial over a cut link takes to fail
// (DefaultCutDialDelay unless set); 0 refuses at once.
func (n *Network) SetCutDialDelay(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cutDelay = max(d, 0)
}

// SetLinkDelay holds back every byte sent from->to by d (0 removes the
// delay). It acts on connections already open as well as new ones. Bytes
// keep their order on each connection: lowering the delay never lets later
// bytes overtake earlier ones.
//
// On a connection dialed by from, Write queues the bytes and returns, and
// one goroutine per connection sends them when due, so pipelined writes
// each see latency d rather than queueing behind each other. On a
// connection dialed by to, Read holds the bytes it got for d before
// returning them; bytes that arrived while it waited wait their own d
// afterwards, so under a continuous stream the latency lies between d and
// 2d.
func (n *Network) SetLinkDelay(from, to int32, d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if d <= 0 {
		delete(n.delay, Link{from, to})
		return
	}
	n.delay[Link{from, to}] = d
}

// SetLinkDrop makes the link from->to lossy: each write of bytes from->to
// (a Write on a connection dialed by from, a Read returning bytes on one
// dialed by to) resets the connection with probability p, and 0 removes
// the drop. A lossy TCP link never delivers a stream with bytes missing; it
// stalls and then resets, so a reset is the faithful way to lose data.
// Draws come from the Network's seed (NewWithSeed). It panics unless
// 0 <= p <= 1.
func (n *Network) SetLinkDrop(from, to int32, p float64) {
	if !(p >= 0 && p <= 1) { // also rejects NaN
		panic(fmt.Sprintf("faultnet: drop probability %v not in [0, 1]", p))
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if p == 0 {
		delete(n.drop, Link{from, to})
		return
	}
	n.drop[Link{from, to}] = p
}

// cutLocked reports whether l is cut. n.mu must be held.
func (n *Network) cutLocked(l Link) bool {
	if l.From == l.To {
		return false
	}
	if _, ok := n.cut[l]; ok {
		return true
	}
	_, fromIsolated := n.isolated[l.From]
	_, toIsolated := n.isolated[l.To]
	return fromIsolated || toIsolated
}

// cutConnsLocked returns the live connections whose link is now cut.
// n.mu must be held.
func (n *Network) cutConnsLocked() []*conn {
	var out []*conn
	for c := range n.conns {
		if n.cutLocked(c.link) {
			out = append(out, c)
		}
	}
	return out
}

// breakAll resets conns because their link was cut. It runs without n.mu:
// breaking closes sockets and calls back into forget.
func (n *Network) breakAll(conns []*conn) {
	for _, c := range conns {
		err := &faultError{link: c.link, cause: ErrLinkCut, errno: syscall.ECONNRESET}
		if c.fail(err, true) {
			n.count(c.link, func(s *LinkStats) { s.Broken++ })
		}
	}
}

// onData is called for each chunk of bytes crossing l. It returns how long
// to hold them back and whether the link drops them, drawing the drop
// under n.mu since the generator is shared.
func (n *Network) onData(l Link) (delay time.Duration, drop bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delay = n.delay[l]
	if p := n.drop[l]; p > 0 {
		drop = p >= 1 || n.rng.Float64() < p
		if drop {
			n.statsLocked(l).Dropped++
		}
	}
	return delay, drop
}
