package wire

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

// Connection quotas, as Kafka's ConnectionQuotas applies them in its
// Acceptor (SocketServer.scala):
//
//   - max.connections, and listener.name.<l>.max.connections per listener:
//     once a listener has accepted a connection that finds no slot, it
//     waits for one before accepting more (waitForConnectionSlot), so the
//     connections arriving meanwhile wait in the kernel's listen backlog
//     and take no descriptor of ours. The inter-broker listener is exempt
//     from the broker-wide limit when there are other listeners (Kafka's
//     protectedListener); a connection it takes past the limit makes each
//     other listener close its least recently active connection, one per
//     tick, until the count is back under it (Processor.closeExcessConnections).
//   - max.connections.per.ip and its overrides: a connection from an
//     address that already holds its maximum is closed at once and logged
//     ("Rejected connection from ..."), on every listener.
//
// Counts cover every listener of the server, from the accept that
// admitted a connection to its OnClose.

// unlimited is Kafka's default for every connection limit, Int.MaxValue.
const unlimited = math.MaxInt32

// errListenerStopping: the listener is stopping while its acceptor waited
// for a connection slot.
var errListenerStopping = errors.New("wire: listener stopping")

// perIPLimitError refuses a connection whose address holds its maximum.
type perIPLimitError struct {
	ip  netip.Addr
	max int
}

func (e *perIPLimitError) Error() string {
	return fmt.Sprintf("Rejected connection from %s, address already has the configured maximum of %d connections.", e.ip, e.max)
}

type connQuotas struct {
	lim       ConnectionLimits
	protected string // the inter-broker listener when it is exempt from MaxConnections
	clock     clock.Clock

	mu          sync.Mutex
	total       int
	perListener map[string]int
	perIP       map[netip.Addr]int
	waiting     int           // acceptors waiting for a slot
	freed       chan struct{} // closed and replaced when a connection is released while some wait
}

func newConnQuotas(cfg Config) *connQuotas {
	lim := ConnectionLimits{MaxConnections: unlimited, MaxConnectionsPerIP: unlimited}
	if cfg.Limits != nil {
		lim = *cfg.Limits
	}
	q := &connQuotas{
		lim:         lim,
		clock:       cfg.Clock,
		perListener: make(map[string]int),
		perIP:       make(map[netip.Addr]int),
		freed:       make(chan struct{}),
	}
	if len(cfg.Listeners) > 1 {
		q.protected = lim.InterBrokerListener
	}
	return q
}

// inc counts a connection from ip that listener accepted. It first waits
// until the listener may hold another connection (or until stop closes:
// errListenerStopping), then refuses the connection with a
// *perIPLimitError if its address holds its maximum. onWait, if not nil,
// is called when the wait begins; blocked is how long it lasted (Kafka's
// AcceptorBlockedPercent).
func (q *connQuotas) inc(listener string, ip netip.Addr, stop <-chan struct{}, onWait func()) (blocked time.Duration, err error) {
	q.mu.Lock()
	if !q.slotAvailableLocked(listener) {
		start := q.clock.Now()
		q.waiting++
		if onWait != nil {
			q.mu.Unlock()
			onWait()
			q.mu.Lock()
		}
		for !q.slotAvailableLocked(listener) {
			freed := q.freed
			q.mu.Unlock()
			select {
			case <-freed:
			case <-stop:
				q.mu.Lock()
				q.waiting--
				q.mu.Unlock()
				return q.clock.Now().Sub(start), errListenerStopping
			}
			q.mu.Lock()
		}
		q.waiting--
		blocked = q.clock.Now().Sub(start)
	}
	defer q.mu.Unlock()
	n := q.perIP[ip]
	if limit := q.maxForIP(ip); n >= limit {
		return blocked, &perIPLimitError{ip: ip, max: limit}
	}
	q.perIP[ip] = n + 1
	q.perListener[listener]++
	q.total++
	return blocked, nil
}

// dec forgets a connection inc counted and wakes the acceptors waiting
// for a slot.
func (q *connQuotas) dec(listener string, ip netip.Addr) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n := q.perIP[ip]; n > 1 {
		q.perIP[ip] = n - 1
	} else {
		delete(q.perIP, ip)
	}
	q.perListener[listener]--
	q.total--
	q.wakeWaitersLocked()
}

// wakeWaitersLocked wakes the acceptors waiting for a slot, which look
// again. mu is held.
func (q *connQuotas) wakeWaitersLocked() {
	if q.waiting > 0 {
		close(q.freed)
		q.freed = make(chan struct{})
	}
}

// exceeded reports whether connections past max.connections are open and
// listener must close one to make room (only the protected listener can
// take them).
func (q *connQuotas) exceeded(listener string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.total > q.lim.MaxConnections && listener != q.protected
}

// connections is how many connections are counted now.
func (q *connQuotas) connections() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.total
}

// slotAvailableLocked is Kafka's connectionSlotAvailable. mu is held.
func (q *connQuotas) slotAvailableLocked(listener string) bool {
	if max, ok := q.lim.ListenerMaxConnections[listener]; ok && q.perListener[listener] >= max {
		return false
	}
	return listener == q.protected || q.total < q.lim.MaxConnections
}

func (q *connQuotas) maxForIP(ip netip.Addr) int {
	if n, ok := q.lim.MaxConnectionsPerIPOverrides[ip]; ok {
		return n
	}
	return q.lim.MaxConnectionsPerIP
}
