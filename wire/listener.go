package wire

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// tickEvery is how often a listener's ticker wakes the connections whose
// reads are paused (gnet says nothing when its outbound buffer drains) and,
// every few ticks, closes idle ones.
const tickEvery = 10 * time.Millisecond

// listener serves one configured listener: Kafka's Acceptor is our own
// accept loop on a Go listening socket (accept.go), its Processors are the
// event loops of a gnet engine that has no listener of its own (gnet's
// Client), to which each accepted connection is handed. gnet's own
// acceptor stops the whole engine, and with it every connection, when
// accept(2) fails with anything but EAGAIN, EINTR, ECONNRESET or
// ECONNABORTED (gnet v2.9 acceptor_unix.go returns ErrAcceptSocket, which
// ends its poller loop), so a burst of connections past the open-file
// limit (EMFILE) would leave the broker running with no listener. Kafka's
// Acceptor logs such errors and goes on; ours also backs off.
//
// One engine per listener keeps the listener name of every connection
// known without address matching.
type listener struct {
	gnet.BuiltinEventEngine
	srv *Server
	cfg Listener

	ln   net.Listener // ours: accept.go accepts on it
	cli  *gnet.Client // the event loops; they serve what the acceptor hands them
	addr string       // the address the kernel bound (port 0 resolved)

	stopOnce sync.Once
	stopping chan struct{} // closed by stop: the acceptor returns
	accepted chan struct{} // closed once the acceptor returned
	done     chan struct{} // closed once the event loops have stopped

	ticks      atomic.Uint64 // OnTick calls, for the watchdog
	sweepTicks int           // ticks between idle sweeps

	acceptLog logEvery // accept failures
	rejectLog logEvery // connections refused by the per-address limit
	blockLog  logEvery // the acceptor waiting for a connection slot

	// tlsConfig serves the TLS handshakes of an SSL listener; replaced at
	// runtime (SetListenerTLS), it serves the connections that arrive
	// after, while the open ones keep theirs.
	tlsConfig    atomic.Pointer[tls.Config]
	handshakes   sync.WaitGroup // TLS handshakes under way (tls.go)
	handshakeLog logEvery       // failed TLS handshakes

	mu      sync.Mutex
	conns   map[*conn]struct{}
	watched map[*conn]struct{} // reads paused or closing: woken every tick
}

func newListener(s *Server, cfg Listener) *listener {
	l := &listener{
		srv:          s,
		cfg:          cfg,
		stopping:     make(chan struct{}),
		accepted:     make(chan struct{}),
		done:         make(chan struct{}),
		acceptLog:    logEvery{every: acceptLogEvery},
		rejectLog:    logEvery{every: acceptLogEvery},
		blockLog:     logEvery{every: blockLogEvery},
		handshakeLog: logEvery{every: acceptLogEvery},
		conns:        make(map[*conn]struct{}),
		watched:      make(map[*conn]struct{}),
	}
	l.tlsConfig.Store(cfg.TLS)
	if idle := s.cfg.ConnectionsMaxIdle; idle > 0 {
		l.sweepTicks = int(min(max(idle/4, tickEvery), time.Second) / tickEvery)
	}
	return l
}

// start binds the listening socket, starts the event loops and then the
// acceptor. On error nothing is left running.
func (l *listener) start(ctx context.Context) error {
	lc := net.ListenConfig{
		// Kafka's Acceptor sets SO_KEEPALIVE on every accepted socket
		// and leaves its timings to the system; Go sets SO_REUSEADDR on
		// the listening socket, as the JDK does for Kafka's, and
		// TCP_NODELAY on accepted ones, as Kafka does.
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: -1, Interval: -1, Count: -1},
	}
	ln, err := lc.Listen(ctx, "tcp", l.cfg.address())
	if err != nil {
		return err
	}
	// No socket options for gnet to set on enrolled connections: its
	// EnrollContext would leak the duplicate descriptor if one failed.
	cli, err := gnet.NewClient(l,
		gnet.WithNumEventLoop(l.srv.cfg.EventLoops),
		gnet.WithTicker(true),
		gnet.WithLogger(gnetLogger{l.srv.logger}),
	)
	if err == nil {
		err = cli.Start()
	}
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("starting event loops: %w", err)
	}
	l.ln, l.cli, l.addr = ln, cli, ln.Addr().String()
	go l.acceptLoop()
	return nil
}

// stop closes the listening socket and, once the acceptor has returned,
// stops the event loops, which closes every connection; done is closed
// when that is over. stop does not wait. Only after start succeeded.
func (l *listener) stop() {
	l.stopOnce.Do(func() {
		close(l.stopping)
		_ = l.ln.Close()
		go func() {
			// The acceptor hands connections to the loops and waits
			// for each to be registered, which a stopped loop would
			// never do: the loops stop after it.
			<-l.accepted
			l.handshakes.Wait() // they enroll connections too
			if err := l.cli.Stop(); err != nil {
				l.srv.logger.Warn("stopping event loops", "listener", l.cfg.Name, "err", err)
			}
			close(l.done)
		}()
	})
}

// OnOpen admits a connection the acceptor handed over, unless the server
// is shutting down.
func (l *listener) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	adm, ok := gc.Context().(*admission)
	if !ok {
		return nil, gnet.Close // not one of ours: cannot happen
	}
	adm.opened.Store(true)
	if l.srv.draining.Load() {
		l.srv.quotas.dec(l.cfg.Name, adm.ip)
		return nil, gnet.Close
	}
	cn := newConn(l, gc)
	cn.ip = adm.ip
	if adm.host != "" {
		cn.info.ClientHost = adm.host
	}
	if adm.principal != "" {
		cn.info.Principal = adm.principal
	}
	if adm.tls != nil {
		cn.tlsOut = newTLSWriter(adm.tls, &l.srv.bufs)
	}
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
	l.srv.quotas.dec(l.cfg.Name, cn.ip)
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
	ticks := l.ticks.Add(1)
	sweep := l.sweepTicks > 0 && ticks%uint64(l.sweepTicks) == 0
	var wake, idle []*conn
	var lru *conn // the least recently active, when one must make room
	excess := l.srv.quotas.exceeded(l.cfg.Name)
	l.mu.Lock()
	for cn := range l.watched {
		wake = append(wake, cn)
	}
	if excess {
		for cn := range l.conns {
			if lru == nil || cn.lastActive.Load() < lru.lastActive.Load() {
				lru = cn
			}
		}
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
	if lru != nil {
		l.srv.logger.Info("closing the least recently active connection: the inter-broker listener took one past max.connections",
			"conn", lru.info.ConnID, "client", lru.info.ClientHost, "listener", l.cfg.Name)
		_ = lru.gc.Close()
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
