package sim

import (
	"container/heap"
	"fmt"
)

// controllerID is the controller's end of the node-controller links.
const controllerID int32 = 0

// message is one delivery: a request, an answer or a timer.
type message struct {
	at   int    // step at which it is delivered
	seq  uint64 // tie-break: sending order
	what string
	// deliver runs at delivery; it decides itself whether the
	// destination can still receive it.
	deliver func()
}

type messageQueue []*message

func (q messageQueue) Len() int { return len(q) }
func (q messageQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q messageQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *messageQueue) Push(x any)   { *q = append(*q, x.(*message)) }
func (q *messageQueue) Pop() any {
	old := *q
	m := old[len(old)-1]
	*q = old[:len(old)-1]
	return m
}

// network carries messages between nodes with random delays (so they
// reorder) and drops, and knows which links are cut.
type network struct {
	c     *Cluster
	queue messageQueue
	seq   uint64
	cut   map[[2]int32]bool
	// dropRate is the chance a message is lost; maxDelay the most steps a
	// message waits.
	dropRate float64
	maxDelay int
	faulty   bool // false once healed: no drops, no delays
}

func link(a, b int32) [2]int32 {
	if a > b {
		a, b = b, a
	}
	return [2]int32{a, b}
}

// connected reports whether a and b can talk.
func (n *network) connected(a, b int32) bool { return !n.cut[link(a, b)] }

// send schedules deliver after a random delay, unless the message is
// dropped or the link is cut; it reports whether it was sent.
func (n *network) send(from, to int32, what string, deliver func()) bool {
	if !n.connected(from, to) {
		n.c.tracef("net: %d->%d %s: link cut", from, to, what)
		return false
	}
	if n.faulty && n.c.rng.Float64() < n.dropRate {
		n.c.tracef("net: %d->%d %s: dropped", from, to, what)
		return false
	}
	delay := 0
	if n.faulty && n.maxDelay > 0 {
		delay = n.c.rng.IntN(n.maxDelay + 1)
	}
	n.after(delay, fmt.Sprintf("%d->%d %s", from, to, what), func() {
		// A link cut while the message was in flight loses it too.
		if !n.connected(from, to) {
			n.c.tracef("net: %d->%d %s: lost in a cut link", from, to, what)
			return
		}
		deliver()
	})
	return true
}

// after schedules a timer.
func (n *network) after(steps int, what string, fn func()) {
	n.seq++
	heap.Push(&n.queue, &message{at: n.c.step + steps, seq: n.seq, what: what, deliver: fn})
}

// deliverDue delivers every message due by the current step, in order;
// messages sent meanwhile with no delay are delivered too.
func (n *network) deliverDue(each func()) {
	for len(n.queue) > 0 && n.queue[0].at <= n.c.step {
		m := heap.Pop(&n.queue).(*message)
		m.deliver()
		each()
	}
}

func (n *network) setCut(a, b int32, cut bool) {
	if cut {
		n.cut[link(a, b)] = true
	} else {
		delete(n.cut, link(a, b))
	}
}

// cutLinks returns the cut links, sorted.
func (n *network) cutLinks() [][2]int32 {
	var out [][2]int32
	for a := int32(0); a <= int32(len(n.c.nodes)); a++ {
		for b := a + 1; b <= int32(len(n.c.nodes)); b++ {
			if n.cut[[2]int32{a, b}] {
				out = append(out, [2]int32{a, b})
			}
		}
	}
	return out
}
