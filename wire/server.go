package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/wire/clientquota"
)

// Server is the Kafka protocol server: gnet event loops frame requests and
// write responses; every request runs on its own goroutine, which calls the
// handler registered for its key; handlers delegate to Services.
type Server struct {
	cfg      Config
	cfgErr   error
	svc      Services
	logger   *slog.Logger
	metrics  Metrics
	lmetrics ListenerMetrics // metrics, when it implements it
	clock    clock.Clock
	apis     *apiTable
	quotas   *connQuotas // connection quotas of every listener (quotas.go)
	// clientQuotas measures clients against their quotas
	// (client_quota_throttle.go).
	clientQuotas *clientquota.Manager

	failOnce sync.Once
	failErr  error
	failed   chan struct{} // closed by fail: a listener stopped for good

	baseCtx    context.Context // parent of every connection's context
	cancelBase context.CancelFunc
	draining   atomic.Bool   // Shutdown began: admit no connection, read no request
	drainCh    chan struct{} // closed when Shutdown begins: parked requests answer now (reqctx.Draining)
	// producing counts the produce requests being carried out, those of
	// closed connections too (request.run): Shutdown drains them before
	// the broker closes its logs.
	producing  atomic.Int64
	nextConnID atomic.Uint64

	// metadataTopics caches Metadata's answer per image and listener
	// (metadata_topics.go).
	metadataTopics    metadataTopicCache
	bufs              bufferPool      // response buffers and Produce frames (bufpool.go)
	reqMem            *requestMemory  // queued.max.request.bytes (reqmem.go)
	frames            frameLimits     // how request frames are read (frame.go)
	workers           *requestWorkers // the goroutines requests run on (workers.go)
	sendfile          bool            // Fetch data may go out with sendfile (sendfile.go)
	sendfileMin       int             // least file data a response needs for sendfile
	directSends       atomic.Int64    // Fetch responses written with sendfile
	responseWrites    atomic.Int64    // writes of in-memory responses, one or more frames each (conn.writeFrames)
	directFallbacks   atomic.Int64    // sendfile-eligible responses the loop could not lend the socket for
	socketsLent       atomic.Int64    // connections whose socket the loop lent to their writer
	readersHandedOver atomic.Int64    // connections whose loop handed reading to their runner (reader.go)
	stalledWrites     atomic.Int64    // connections closed because a direct or TLS write made no progress for connections.max.idle.ms

	mu        sync.Mutex
	state     serverState
	listeners []*listener
	addrs     map[string]string
}

type serverState int

const (
	stateNew serverState = iota
	stateStarted
	stateClosed
)

// NewServer returns a server for cfg; Start reports a bad cfg. A nil
// logger discards, nil metrics are NopMetrics.
func NewServer(cfg Config, svc Services, logger *slog.Logger, metrics Metrics) *Server {
	return newServer(cfg, svc, logger, metrics, newAPITable(svc))
}

func newServer(cfg Config, svc Services, logger *slog.Logger, metrics Metrics, apis *apiTable) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if metrics == nil {
		metrics = NopMetrics{}
	}
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:     cfg,
		cfgErr:  cfg.validate(),
		svc:     svc,
		logger:  logger,
		metrics: metrics,
		clock:   cfg.Clock,
		apis:    apis,
		quotas:  newConnQuotas(cfg),
		failed:  make(chan struct{}),
		addrs:   make(map[string]string),
		drainCh: make(chan struct{}),

		clientQuotas: clientquota.NewManager(cfg.ClientQuotaWindow),

		sendfile:    sendfileSupported && !cfg.DisableSendfile,
		sendfileMin: defaultSendfileMin,
	}
	s.lmetrics, _ = metrics.(ListenerMetrics)
	if s.lmetrics == nil {
		s.lmetrics = NopMetrics{}
	}
	if cfg.sendfileMin != 0 {
		s.sendfileMin = max(cfg.sendfileMin, 0)
	}
	s.baseCtx, s.cancelBase = context.WithCancel(context.Background())
	s.workers = newRequestWorkers(s.baseCtx.Done())
	s.reqMem = newRequestMemory(cfg, logger, metrics)
	s.bufs.limit = pooledBytesLimit(s.reqMem.capacity)
	s.frames = frameLimits{maxBytes: cfg.SocketRequestMaxBytes, bufs: &s.bufs, poolKey: apis.poolsFrame}
	return s
}

// Start binds every listener and returns once all are listening, or the
// first error (every listener already bound is stopped again). ctx bounds
// the wait.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateNew {
		return ErrServerClosed
	}
	if s.cfgErr != nil {
		return s.cfgErr
	}
	s.state = stateStarted
	go s.reqMem.reclaim(s.baseCtx.Done(), &s.bufs)
	for _, lc := range s.cfg.Listeners {
		l := newListener(s, lc)
		if err := l.start(ctx); err != nil {
			s.abortStartLocked()
			return fmt.Errorf("wire: listener %s on %s: %w", lc.Name, lc.address(), err)
		}
		s.listeners = append(s.listeners, l)
		s.addrs[lc.Name] = l.addr
		s.logger.Info("listening", "listener", lc.Name, "addr", l.addr, "security_protocol", lc.SecurityProtocol)
	}
	go s.watchLoops(s.listeners)
	return nil
}

// abortStartLocked stops the listeners of a failed Start. mu must be held.
func (s *Server) abortStartLocked() {
	s.state = stateClosed
	s.draining.Store(true)
	for _, l := range s.listeners {
		l.stop()
	}
	s.cancelBase()
}

// Failed is closed when a listener can no longer accept connections, or
// its event loops stopped, while the server runs: the broker should stop
// and let its supervisor start it again rather than run on without the
// listener. Err says what failed.
func (s *Server) Failed() <-chan struct{} { return s.failed }

// Err is why the server failed, once Failed is closed; nil before.
func (s *Server) Err() error {
	select {
	case <-s.failed:
		return s.failErr
	default:
		return nil
	}
}

// fail reports the server failed, once, unless it is shutting down.
func (s *Server) fail(err error) {
	if s.draining.Load() {
		return
	}
	s.failOnce.Do(func() {
		s.failErr = err
		s.logger.Error("listener failed", "err", err)
		close(s.failed)
	})
}

// Addrs maps each listener name to the host:port it is bound to.
func (s *Server) Addrs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.addrs)
}

// drainPoll is how often Shutdown checks that in-flight work is done.
const drainPoll = 5 * time.Millisecond

// Shutdown stops the server as Kafka's SocketServer does on a controlled
// shutdown: new connections are closed as they arrive, no further request
// is read, requests already read finish and their responses are written,
// then every connection and listener is closed. ctx bounds the whole of
// it; when it expires the remaining connections are closed at once and
// ctx's error is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.shutdown(ctx, false)
}

// ShutdownRefusing is Shutdown for a broker that halts: its listening
// sockets close first, so that new connections are refused, as by a
// halted process, instead of accepted and closed at once, which clients
// take for a broker that speaks another protocol (kgo gives up on it),
// while the requests already read are answered.
func (s *Server) ShutdownRefusing(ctx context.Context) error {
	return s.shutdown(ctx, true)
}

func (s *Server) shutdown(ctx context.Context, refuse bool) error {
	s.mu.Lock()
	if s.state == stateClosed {
		s.mu.Unlock()
		return nil
	}
	s.state = stateClosed
	lns := s.listeners
	s.mu.Unlock()

	s.draining.Store(true)
	if refuse {
		for _, l := range lns {
			_ = l.ln.Close() // the acceptor returns: a failed accept while draining is no failure
		}
	}
	close(s.drainCh) // long polls and other parked requests answer now
	err := s.drain(ctx, lns)
	for _, l := range lns {
		l.stop()
	}
	for _, l := range lns {
		select {
		case <-l.done:
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("wire: stopping listener %s: %w", l.cfg.Name, ctx.Err()))
		}
	}
	s.cancelBase()
	return err
}

// drain waits until every connection has answered what it read and
// written it out, waking each loop so it stops reading and reports how
// much output gnet still holds.
func (s *Server) drain(ctx context.Context, lns []*listener) error {
	t := time.NewTicker(drainPoll)
	defer t.Stop()
	for {
		quiet := true
		for _, l := range lns {
			for _, cn := range l.snapshot() {
				_ = cn.gc.Wake(nil)
				if !cn.quiet() {
					quiet = false
				}
			}
		}
		if s.producing.Load() > 0 {
			quiet = false // a closed connection's produce is still appending
		}
		if quiet {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wire: draining connections: %w", ctx.Err())
		case <-t.C:
		}
	}
}
