package wire

import (
	"fmt"
	"time"
)

// gnet runs a listener's event loops until they are stopped, and a loop
// only ends early when epoll_wait itself fails (its descriptor closed or
// replaced under it). Such a loop closes its connections and stops the
// engine's ticker, but the other loops run on, and the acceptor, which
// waits for each connection it hands over to be registered, would hang
// on the dead loop the first time gnet's balancer picked it (the least
// loaded, having no connections left). Nothing in gnet's Client reports
// it; the ticker's silence does: OnTick runs every tickEvery, on its own
// goroutine, unless the engine stopped. Without it paused connections
// would never be woken either, so a listener whose ticks stop has failed.

const (
	// watchEvery is how often the watchdog looks at the listeners' ticks.
	watchEvery = time.Second
	// defaultStallChecks is how many looks in a row without a tick mean
	// the loops are gone: counted in looks rather than measured in time
	// so that a process stopped and continued (SIGSTOP, a suspended
	// machine) is not taken for a dead one; both goroutines resume
	// together.
	defaultStallChecks = 10
)

// watchLoops reports the server failed when a listener's ticks stop while
// it serves. It returns when Shutdown begins.
func (s *Server) watchLoops(lns []*listener) {
	limit := s.cfg.stallChecks
	if limit <= 0 {
		limit = defaultStallChecks
	}
	every := watchEvery
	if s.cfg.watchEvery > 0 {
		every = s.cfg.watchEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	last := make([]uint64, len(lns))
	stalled := make([]int, len(lns))
	for {
		select {
		case <-s.drainCh:
			return
		case <-s.baseCtx.Done():
			return
		case <-t.C:
		}
		for i, l := range lns {
			ticks := l.ticks.Load()
			if ticks != last[i] {
				last[i], stalled[i] = ticks, 0
				continue
			}
			if stalled[i]++; stalled[i] == limit {
				s.fail(fmt.Errorf("wire: listener %s on %s: its event loops stopped (no tick for %d checks %v apart)",
					l.cfg.Name, l.addr, limit, every))
			}
		}
	}
}
