package wire

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// maxIovecs bounds the buffers handed to one AsyncWritev: gnet passes them
// to writev(2) as they are, and Linux rejects more than IOV_MAX (1024).
const maxIovecs = 256

// conn is one client connection: Kafka's KafkaChannel plus the Processor's
// per-connection bookkeeping.
//
// Ownership. Fields marked (loop) belong to the connection's gnet event
// loop (OnOpen, OnTraffic, OnClose, the AsyncWritev callbacks and the
// sendfile grant all run there), except that the fields reading requests
// (nextSeq through stopReading) pass for good to the connection's runner
// when the loop hands reading over (reader.go). Request goroutines put
// responses in the queue under mu, and one of them at a time writes the
// queue out (see complete). The atomics are read from anywhere: the
// loop's pause decisions, the listener's ticker and Shutdown.
type conn struct {
	srv  *Server
	ln   *listener
	gc   gnet.Conn   // only its concurrency-safe methods off the loop
	info reqctx.Info // ConnID, ClientHost, Listener, Principal; copied per request
	ip   netip.Addr  // the client's address, as the connection quotas count it

	// ctx is canceled when the connection closes, so handlers parked on
	// its behalf (long polls, group joins) give up; it carries the
	// server's drain channel (reqctx.Draining) so they answer at once
	// when a graceful shutdown begins.
	ctx    context.Context
	cancel context.CancelFunc

	nextSeq     uint32        // (loop) sequence number of the next request read
	lastTurn    chan struct{} // (loop) closed when the newest request lets the next one start
	lastDone    chan struct{} // (loop) closed when the newest request and all before it have been handled
	lastKey     int16         // (loop) the newest request's API key, -1 before the first
	stopReading bool          // (loop) a request failed on the loop: parse no more frames
	readPaused  bool          // (loop) requests are left unparsed and EPOLLIN is off
	lastInbound int           // (loop) InboundBuffered after the last pass, to spot new bytes
	pollFD      int           // (loop) epoll descriptor of the loop, -1 when unknown
	inboundCap  int           // hard cap on buffered input while paused
	frame       frameRead     // (loop) the request being read (frame.go)

	inflight   atomic.Int32 // requests read whose response is not yet handed to gnet or to a direct write
	unsent     atomic.Int64 // encoded response bytes not yet taken by gnet or written directly
	outbound   atomic.Int64 // gnet's OutboundBuffered as last seen by the loop
	inbound    atomic.Int64 // InboundBuffered as last seen by the loop
	lastActive atomic.Int64 // clock nanoseconds of the last request read or response written
	wantWake   atomic.Bool  // the loop paused; whoever frees room wakes it
	failed     atomic.Bool  // a request failed: later requests are not run
	flushClose atomic.Bool  // close once the responses before the failure are written
	drainSeen  atomic.Bool  // the loop saw Shutdown begin and reads no more requests
	// throttledUntil is the clock nanoseconds until which a client quota
	// mutes the connection: no request is read before (0: never muted;
	// client_quota_throttle.go).
	throttledUntil atomic.Int64

	loopClosed bool         // (loop) OnClose ran: the socket descriptor is no longer this conn's
	gnetWrites atomic.Int32 // AsyncWritev tasks queued whose callback has not run
	direct     bool         // Fetch responses may go out with sendfile (plaintext listener)

	// auth is the SASL authenticator on a SASL listener (sasl_auth.go),
	// nil elsewhere.
	auth *authenticator

	// sock is the socket lent to the writer for good (sendfile.go): once
	// set, on the loop by the grant, every response goes out on it and
	// none through gnet. closeConn closes it.
	sock atomic.Pointer[directSocket]

	// tlsOut is the tls.Conn of an SSL or SASL_SSL connection, set at
	// OnOpen: every response goes into it from the writer, none through
	// gnet (tls_write.go).
	tlsOut *tlsWriter

	// The runner (runqueue.go): whether a goroutine is running the
	// connection's requests, and those read while it does.
	runMu    sync.Mutex
	running  bool
	runQueue []*request
	reading  bool // the runner reads the socket when its queue is empty (reader.go)

	// reader is set, once and for good, when the loop hands reading the
	// connection over to its runner (reader.go); nil while the loop reads.
	reader atomic.Pointer[socketReader]

	mu        sync.Mutex
	closed    bool                 // OnClose ran, or a failure was reached in order
	writing   bool                 // a goroutine is writing the queue out (complete)
	pending   map[uint32]*outFrame // finished responses waiting for earlier ones
	nextWrite uint32               // sequence number of the next response to send
}

// outFrame is a finished request waiting for its turn to be written.
type outFrame struct {
	buf          []byte       // the framed response, from srv.bufs; nil sends nothing (acks=0)
	direct       *directFetch // instead of buf: a Fetch response to send from its files
	err          error        // the request failed: close the connection here
	closeAfter   bool         // send buf, then close (a failed authentication's answer)
	key, version int16
	received     time.Time
}

func newConn(l *listener, gc gnet.Conn) *conn {
	s := l.srv
	cn := &conn{
		srv:      s,
		ln:       l,
		gc:       gc,
		pending:  make(map[uint32]*outFrame),
		lastTurn: closedTurn,
		lastDone: closedTurn,
		lastKey:  -1,
		pollFD:   -1,
		// A paused connection may legitimately hold what gnet reads each
		// time its own write path turns EPOLLIN back on (at most twice
		// per response written); a partial request is not in gnet's
		// buffer but in its own (frame.go). More than that means reads
		// are not actually paused.
		inboundCap: (2*s.cfg.MaxInflightRequests + 8) * gnet.MaxStreamBufferCap,
	}
	cn.info = reqctx.Info{
		ConnID:    s.nextConnID.Add(1),
		Listener:  l.cfg.Name,
		Principal: "User:ANONYMOUS",
	}
	if a, ok := gc.RemoteAddr().(*net.TCPAddr); ok {
		cn.info.ClientHost = a.IP.String()
	}
	if fd, ok := pollFD(gc); ok {
		cn.pollFD = fd
	}
	// SASL_PLAINTEXT carries Kafka frames as they are once authenticated
	// (Kafka has no SASL wrapping), so Fetch may use sendfile there too.
	cn.direct = s.sendfile && (l.cfg.SecurityProtocol == SecurityProtocolPlaintext || l.cfg.SecurityProtocol == SecurityProtocolSASLPlaintext)
	if l.cfg.SASL != nil {
		cn.auth = newAuthenticator(s, l)
	}
	cn.ctx, cn.cancel = context.WithCancel(reqctx.WithDraining(s.baseCtx, s.drainCh))
	cn.touch()
	return cn
}

// closedTurn lets the first request of a connection start at once.
var closedTurn = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (cn *conn) touch() { cn.lastActive.Store(cn.srv.clock.Now().UnixNano()) }

// complete queues the finished request seq and makes sure every response
// that is now next in line gets written, so responses leave in request
// order however their handlers interleave (kfake's clientConn.write with
// its seq and out-of-order map). A failed request closes the connection
// after the responses before it; what comes after it is dropped.
//
// One goroutine at a time is the connection's writer: the first to find
// nobody writing takes the role and writes out everything in line,
// including frames other requests queue meanwhile; they only queue. A
// single writer is what lets a Fetch response go out with sendfile on the
// request's goroutine while the responses behind it wait (sendfile.go).
//
// r is the request whose goroutine completes: before a transfer that may
// take long (a Fetch sent from its files) it stops being the connection's
// runner, so the requests behind are handled meanwhile (runqueue.go).
func (cn *conn) complete(r *request, out *outFrame) {
	seq := r.seq
	cn.mu.Lock()
	if cn.closed {
		cn.mu.Unlock()
		cn.release(out)
		cn.finished(1)
		return
	}
	cn.pending[seq] = out
	if cn.writing || cn.holdForNext(r) {
		cn.mu.Unlock()
		return
	}
	cn.writing = true
	cn.writeOut(r)
}

// holdForNext reports whether the runner leaves a Produce answer queued
// for the next request's completion to write with its own: the next
// request in the runner's queue is a Produce too, so it runs at once, and
// the two answers (or more) leave in one write. A pipelining producer's
// answers then cost a system call and a wake-up of the client per batch
// of them rather than one each (a response write was 15% of the broker's
// CPU per request at one partition, issue 29). An answer waits at most
// for the next append; if that produce instead waits for the ISR, its
// Unmute writes the held answers first (flushHeld). mu is held.
func (cn *conn) holdForNext(r *request) bool {
	// Never behind a client quota's mute: the answer carrying the
	// throttle time goes out at once, and the next request waits out
	// the mute (KIP-219).
	if r.handedOff || r.hdr.key != int16(kmsg.Produce) || cn.throttled() {
		return false
	}
	cn.runMu.Lock()
	defer cn.runMu.Unlock()
	return len(cn.runQueue) > 0 && cn.runQueue[0].hdr.key == int16(kmsg.Produce)
}

// flushHeld writes the answers holdForNext left queued, unless a writer
// is at work (it writes them). Called when the runner hands its role on,
// since the request after the held answers may now wait for long.
func (cn *conn) flushHeld(r *request) {
	cn.mu.Lock()
	if cn.closed || cn.writing {
		cn.mu.Unlock()
		return
	}
	if _, ok := cn.pending[cn.nextWrite]; !ok {
		cn.mu.Unlock()
		return
	}
	cn.writing = true
	cn.writeOut(r)
}

// writeOut is the writer's loop. mu is held on entry and released on
// return. Frames are written outside mu: no one else writes, and queuing
// AsyncWritev tasks in sequence order is what keeps the order.
func (cn *conn) writeOut(r *request) {
	for {
		var (
			batch   []*outFrame // plain frames in line, in order
			fetch   *outFrame   // a Fetch to send from its files, after batch
			failure *outFrame   // a failed request, after batch: close
			closing bool        // batch ends with an answer after which to close
			dropped []*outFrame // frames after the failure or closing answer
		)
		for {
			o, ok := cn.pending[cn.nextWrite]
			if !ok {
				break
			}
			delete(cn.pending, cn.nextWrite)
			cn.nextWrite++
			if o.err != nil {
				failure = o
				dropped = cn.dropPendingLocked()
				break
			}
			if o.direct != nil {
				fetch = o
				break
			}
			batch = append(batch, o)
			if o.closeAfter {
				closing = true
				dropped = cn.dropPendingLocked()
				break
			}
		}
		if batch == nil && fetch == nil && failure == nil {
			cn.writing = false
			cn.mu.Unlock()
			return
		}
		cn.mu.Unlock()

		cn.writeFrames(batch)
		if closing {
			// Close once the answer is out (onTraffic), as for a
			// failure, but the answer counts as answered.
			cn.flushClose.Store(true)
			_ = cn.gc.Wake(nil)
			for _, o := range dropped {
				cn.release(o)
			}
			cn.finished(len(dropped))
		}
		if failure != nil {
			// Counted before the close is set in motion, so the
			// request's metrics never trail the connection's close.
			cn.srv.metrics.RequestDone(failure.key, failure.version, cn.srv.clock.Now().Sub(failure.received), true)
			// Close once what is queued before it is out (onTraffic).
			cn.flushClose.Store(true)
			_ = cn.gc.Wake(nil)
			for _, o := range dropped {
				cn.release(o)
			}
			cn.finished(1 + len(dropped))
		}
		if fetch != nil {
			if !r.handedOff {
				r.handOff()
			}
			cn.sendFetch(fetch)
		}
		cn.mu.Lock()
	}
}

// dropPendingLocked marks the queue closed and returns the responses
// still in it for release. mu must be held.
func (cn *conn) dropPendingLocked() []*outFrame {
	dropped := make([]*outFrame, 0, len(cn.pending))
	for _, o := range cn.pending {
		dropped = append(dropped, o)
	}
	cn.closed = true
	cn.pending = nil
	return dropped
}

// release gives a response's buffers back that never reached gnet.
func (cn *conn) release(o *outFrame) {
	if o.buf != nil {
		cn.srv.bufs.put(o.buf)
		o.buf = nil
	}
	if o.direct != nil {
		cn.srv.bufs.put(o.direct.hdr)
		o.direct = nil
	}
}

// finished counts n requests as answered (or dropped) and wakes the loop
// if it paused reading for them.
func (cn *conn) finished(n int) {
	cn.inflight.Add(-int32(n))
	cn.wakeIfWanted()
}

func (cn *conn) wakeIfWanted() {
	if cn.wantWake.CompareAndSwap(true, false) {
		if rd := cn.reader.Load(); rd != nil {
			rd.signal() // its runner reads it and waits for room (reader.go)
			return
		}
		_ = cn.gc.Wake(nil)
	}
}

// writeFrames writes frames out in order: into the tls.Conn of a TLS
// connection (tls_write.go), on the lent socket when the connection has
// one (sendfile.go), else handed to gnet in chunks writev accepts.
// Writer only.
func (cn *conn) writeFrames(frames []*outFrame) {
	if len(frames) == 0 {
		return
	}
	var bufs [][]byte
	for _, o := range frames {
		if o.buf != nil {
			bufs = append(bufs, o.buf)
			o.buf = nil
		}
	}
	failed := false
	if cn.tlsOut != nil {
		failed = cn.writeTLS(bufs)
	} else if sock := cn.responseSocket(frames); sock != nil {
		failed = cn.writeLent(sock, bufs)
	} else {
		for len(bufs) > 0 {
			chunk := bufs[:min(len(bufs), maxIovecs)]
			bufs = bufs[len(chunk):]
			cn.writev(chunk)
		}
	}
	cn.srv.responseWrites.Add(1)
	now := cn.srv.clock.Now()
	for _, o := range frames {
		cn.srv.metrics.RequestDone(o.key, o.version, now.Sub(o.received), failed)
	}
	cn.finished(len(frames))
}

// writev queues one AsyncWritev of pooled buffers; they go back to the
// pool in its callback, when gnet holds no reference to them any more.
func (cn *conn) writev(chunk [][]byte) {
	n := 0
	for _, b := range chunk {
		n += len(b)
	}
	// gnet re-slices the [][]byte it is given as it writes; keep the
	// buffers as they were for the pool.
	owned := append([][]byte(nil), chunk...)
	cn.unsent.Add(int64(n))
	cn.gnetWrites.Add(1)
	err := cn.gc.AsyncWritev(chunk, func(gc gnet.Conn, err error) error {
		cn.written(gc, owned, n, err)
		return nil
	})
	if err != nil {
		// The task was not queued: nothing will call back.
		cn.gnetWrites.Add(-1)
		cn.unsent.Add(-int64(n))
		for _, b := range owned {
			cn.srv.bufs.put(b)
		}
	}
}

// written runs on the loop once gnet has taken n response bytes: written
// them to the socket or copied them into its outbound buffer, or failed
// because the connection is closed. Either way it holds no reference to
// bufs any more.
func (cn *conn) written(gc gnet.Conn, bufs [][]byte, n int, err error) {
	for _, b := range bufs {
		cn.srv.bufs.put(b)
	}
	cn.unsent.Add(-int64(n))
	cn.gnetWrites.Add(-1)
	if err != nil {
		return // the connection is closed; gc is no longer usable
	}
	cn.srv.metrics.BytesOut(n)
	cn.touch()
	cn.outbound.Store(int64(gc.OutboundBuffered()))
	if cn.readPaused || cn.flushClose.Load() {
		_ = gc.Wake(nil) // room may have freed up: let onTraffic decide
	}
}

// closeConn runs on the loop from OnClose.
func (cn *conn) closeConn() {
	cn.loopClosed = true
	cn.dropFrame()
	if sock := cn.sock.Load(); sock != nil {
		sock.close() // a direct write under way fails and the writer drops the rest
	}
	if rd := cn.reader.Load(); rd != nil && rd.ownSock {
		rd.sock.close() // a parked read ends (reader.go)
	}
	cn.mu.Lock()
	var dropped []*outFrame
	if !cn.closed {
		dropped = cn.dropPendingLocked()
	}
	cn.mu.Unlock()
	for _, o := range dropped {
		cn.release(o)
	}
	cn.inflight.Add(-int32(len(dropped)))
	cn.cancel()
}

// abort closes the connection from the writer after a write that may
// have left a partial frame on the socket: nothing more may follow it.
func (cn *conn) abort() {
	cn.failed.Store(true)
	cn.mu.Lock()
	var dropped []*outFrame
	if !cn.closed {
		dropped = cn.dropPendingLocked()
	}
	cn.mu.Unlock()
	for _, o := range dropped {
		cn.release(o)
	}
	cn.finished(len(dropped))
	_ = cn.gc.Close()
}

// overLimit reports whether the connection has as many requests in flight
// or as many response bytes unsent as it may, so no more requests are read
// (Kafka mutes a channel until its response is sent). Loop only.
func (cn *conn) overLimit(gc gnet.Conn) bool {
	cfg := &cn.srv.cfg
	return int(cn.inflight.Load()) >= cfg.MaxInflightRequests ||
		cn.unsent.Load()+int64(gc.OutboundBuffered()) >= cfg.MaxBufferedResponseBytes
}

// quiet reports whether the loop has stopped reading requests for
// Shutdown and every request read has been answered and written out, as
// far as the loop last saw; Shutdown waits for it.
func (cn *conn) quiet() bool {
	return cn.drainSeen.Load() && cn.inflight.Load() == 0 && cn.unsent.Load() == 0 && cn.outbound.Load() == 0
}

// responseSocket is the socket the writer writes frames on itself: the
// lent one, or nil to hand them to gnet. A connection that may have it
// asks for it with its first producer's answer (lendsSocket), as with its
// first Fetch sent from files (sendfile.go): from then on its answers
// cost no trip through gnet's task queue and no wake-up of the event loop
// each, which for a producer's small answers was a large part of a
// request's cost. Connections that never produce or fetch (Metadata,
// group traffic) keep writing through gnet and hold no second descriptor.
func (cn *conn) responseSocket(frames []*outFrame) *directSocket {
	if sock := cn.sock.Load(); sock != nil || !cn.direct {
		return sock
	}
	for _, o := range frames {
		if lendsSocket(o.key) {
			return cn.lentSocket()
		}
	}
	return nil
}

// lendsSocket reports whether an answer to key asks for the lent socket:
// Produce, and the transaction coordinator's requests a transactional
// producer sends every transaction (AddPartitionsToTxn, AddOffsetsToTxn,
// EndTxn, TxnOffsetCommit). Clients send those on a connection of their
// own (kgo's non-produce connection, the Java producer's to the
// coordinator), two or more answers per transaction; through gnet each
// cost an eventfd wake-up of the loop and a writev there. The descriptor
// budget already counts two a plaintext connection (broker's
// connection_limits.go: any connection may come to hold the duplicate).
func lendsSocket(key int16) bool {
	switch kmsg.Key(key) {
	case kmsg.Produce, kmsg.AddPartitionsToTxn, kmsg.AddOffsetsToTxn, kmsg.EndTxn, kmsg.TxnOffsetCommit:
		return true
	}
	return false
}
