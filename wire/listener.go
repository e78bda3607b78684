package wire

import (
	"context"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// tickEvery is how often a listener's ticker wakes the connections whose
// reads are paused (gnet says nothing when its outbound buffer drains) and,
// every few ticks, closes idle ones.
const tickEvery = 10 * time.Millisecond

// listener is one gnet engine serving one configured listener (Kafka's
// Acceptor plus its Processors). One engine per listener keeps the
// listener name of every connection known without address matching, and
// lets Addrs report each listener's own bound port.
type listener struct {
	gnet.BuiltinEventEngine
	srv *Server
	cfg Listener

	booted chan struct{} // closed by OnBoot; eng and addr are set
	done   chan struct{} // closed when gnet.Run returns; runErr is set
	eng    gnet.Engine
	addr   string
	runErr error

	ticks      int // (ticker goroutine)
	sweepTicks int // ticks between idle sweeps

	mu      sync.Mutex
	conns   map[*conn]struct{}
	watched map[*conn]struct{} // reads paused or closing: woken every tick
}

func newListener(s *Server, cfg Listener) *listener {
	l := &listener{
		srv:     s,
		cfg:     cfg,
		booted:  make(chan struct{}),
		done:    make(chan struct{}),
		conns:   make(map[*conn]struct{}),
		watched: make(map[*conn]struct{}),
	}
	if idle := s.cfg.ConnectionsMaxIdle; idle > 0 {
		l.sweepTicks = int(min(max(idle/4, tickEvery), time.Second) / tickEvery)
	}
	return l
}

// run serves until the engine stops; gnet.Run blocks for the engine's life.
func (l *listener) run() {
	defer close(l.done)
	l.runErr = gnet.Run(l, "tcp://"+l.cfg.address(),
		gnet.WithNumEventLoop(l.srv.cfg.EventLoops),
		gnet.WithTicker(true),
		gnet.WithReuseAddr(true), // as the JDK sets SO_REUSEADDR on Kafka's server socket
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(gnetLogger{l.srv.logger}),
	)
	select {
	case <-l.booted:
		if !l.srv.draining.Load() {
			// gnet stops the whole engine when accept(2) fails with
			// anything but EAGAIN/EINTR/ECONNRESET/ECONNABORTED (e.g.
			// EMFILE), where Kafka's Acceptor logs and keeps accepting.
			l.srv.logger.Error("listener stopped unexpectedly", "listener", l.cfg.Name, "addr", l.addr, "err", l.runErr)
		}
	default:
	}
}

// stop asks the engine to stop without waiting for it; wait on done.
// gnet's Engine.Stop polls for completion every 500 ms, so it is given a
// context that is already done: it still triggers the shutdown.
func (l *listener) stop() {
	select {
	case <-l.booted:
	default:
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = l.eng.Stop(ctx)
}

// OnBoot records the engine and the address the kernel bound.
func (l *listener) OnBoot(eng gnet.Engine) gnet.Action {
	l.eng = eng
	l.addr = boundAddr(eng, l.cfg.address())
	close(l.booted)
	return gnet.None
}

// OnOpen admits a connection, unless the server is shutting down.
func (l *listener) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	if l.srv.draining.Load() {
		return nil, gnet.Close
	}
	cn := newConn(l, gc)
	gc.SetContext(cn)
	l.mu.Lock()
	l.conns[cn] = struct{}{}
	l.mu.Unlock()
	l.srv.metrics.ConnOpened()
	return nil, gnet.None
}

// OnClose forgets the connection and cancels what runs on its behalf.
func (l *listener) OnClose(gc gnet.Conn, err error) gnet.Action {
	cn, ok := gc.Context().(*conn)
	if !ok {
		return gnet.None
	}
	cn.closeConn()
	l.mu.Lock()
	delete(l.conns, cn)
	delete(l.watched, cn)
	l.mu.Unlock()
	l.srv.metrics.ConnClosed()
	l.srv.logger.Debug("connection closed", "conn", cn.info.ConnID, "client", cn.info.ClientHost, "listener", l.cfg.Name, "err", err)
	return gnet.None
}

// OnTraffic splits and dispatches the connection's requests.
func (l *listener) OnTraffic(gc gnet.Conn) gnet.Action {
	cn, ok := gc.Context().(*conn)
	if !ok {
		return gnet.Close
	}
	return cn.onTraffic(gc)
}

// OnTick runs on gnet's ticker goroutine, not on a loop: it only calls
// the concurrency-safe Wake and Close.
func (l *listener) OnTick() (time.Duration, gnet.Action) {
	l.ticks++
	sweep := l.sweepTicks > 0 && l.ticks%l.sweepTicks == 0
	var wake, idle []*conn
	l.mu.Lock()
	for cn := range l.watched {
		wake = append(wake, cn)
	}
	if sweep {
		limit := l.srv.clock.Now().Add(-l.srv.cfg.ConnectionsMaxIdle).UnixNano()
		for cn := range l.conns {
			// A connection with work in flight is not idle, however
			// long its long poll takes.
			if cn.lastActive.Load() < limit && cn.inflight.Load() == 0 && cn.unsent.Load() == 0 {
				idle = append(idle, cn)
			}
		}
	}
	l.mu.Unlock()
	for _, cn := range wake {
		_ = cn.gc.Wake(nil)
	}
	for _, cn := range idle {
		l.srv.logger.Debug("closing idle connection", "conn", cn.info.ConnID, "client", cn.info.ClientHost,
			"connections.max.idle.ms", l.srv.cfg.ConnectionsMaxIdle.Milliseconds())
		_ = cn.gc.Close()
	}
	return tickEvery, gnet.None
}

// watch adds or removes cn from the set the ticker wakes. Loop only.
func (l *listener) watch(cn *conn, on bool) {
	l.mu.Lock()
	if on {
		l.watched[cn] = struct{}{}
	} else {
		delete(l.watched, cn)
	}
	l.mu.Unlock()
}

// snapshot lists the open connections.
func (l *listener) snapshot() []*conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*conn, 0, len(l.conns))
	for cn := range l.conns {
		out = append(out, cn)
	}
	return out
}
