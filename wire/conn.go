package wire

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/strait-io/strait/wire/reqctx"
)

// maxIovecs bounds the buffers handed to one AsyncWritev: gnet passes them
// to writev(2) as they are, and Linux rejects more than IOV_MAX (1024).
const maxIovecs = 256

// conn is one client connection: Kafka's KafkaChannel plus the Processor's
// per-connection bookkeeping.
//
// Ownership. Fields marked (loop) belong to the connection's gnet event
// loop (OnOpen, OnTraffic, OnClose and the AsyncWritev callbacks all run
// there). Request goroutines put responses in the queue under mu. The
// atomics are read from anywhere: the loop's pause decisions, the
// listener's ticker and Shutdown.
type conn struct {
	srv  *Server
	ln   *listener
	gc   gnet.Conn   // only its concurrency-safe methods off the loop
	info reqctx.Info // ConnID, ClientHost, Listener, Principal; copied per request

	// ctx is canceled when the connection closes, so handlers parked on
	// its behalf (long polls, group joins) give up; it carries the
	// server's drain channel (reqctx.Draining) so they answer at once
	// when a graceful shutdown begins.
	ctx    context.Context
	cancel context.CancelFunc

	nextSeq     uint32        // (loop) sequence number of the next request read
	lastTurn    chan struct{} // (loop) closed when the newest request lets the next one start
	stopReading bool          // (loop) a request failed on the loop: parse no more frames
	readPaused  bool          // (loop) requests are left unparsed and EPOLLIN is off
	lastInbound int           // (loop) InboundBuffered after the last pass, to spot new bytes
	pollFD      int           // (loop) epoll descriptor of the loop, -1 when unknown
	inboundCap  int           // hard cap on buffered input while paused

	inflight   atomic.Int32 // requests read whose response is not yet handed to gnet
	unsent     atomic.Int64 // encoded response bytes not yet taken by gnet
	outbound   atomic.Int64 // gnet's OutboundBuffered as last seen by the loop
	inbound    atomic.Int64 // InboundBuffered as last seen by the loop
	lastActive atomic.Int64 // clock nanoseconds of the last request read or response written
	wantWake   atomic.Bool  // the loop paused; whoever frees room wakes it
	failed     atomic.Bool  // a request failed: later requests are not run
	flushClose atomic.Bool  // close once the responses before the failure are written
	drainSeen  atomic.Bool  // the loop saw Shutdown begin and reads no more requests

	mu        sync.Mutex
	closed    bool                 // OnClose ran, or a failure was reached in order
	pending   map[uint32]*outFrame // finished responses waiting for earlier ones
	nextWrite uint32               // sequence number of the next response to send
}

// outFrame is a finished request waiting for its turn to be written.
type outFrame struct {
	buf          []byte // the framed response; nil sends nothing (acks=0)
	err          error  // the request failed: close the connection here
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
		pollFD:   -1,
		// A paused connection may legitimately hold one partial request
		// plus what gnet reads each time its own write path turns
		// EPOLLIN back on (at most twice per response written); more
		// than that means reads are not actually paused.
		inboundCap: int(s.cfg.SocketRequestMaxBytes) + 4 + (2*s.cfg.MaxInflightRequests+8)*gnet.MaxStreamBufferCap,
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
	cn.ctx, cn.cancel = context.WithCancel(reqctx.WithDraining(s.baseCtx, s.drainCh))
	cn.touch()
	return cn
}

// closedTurn lets the first request of a connection start at once.
var closedTurn = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (cn *conn) touch() { cn.lastActive.Store(cn.srv.clock.Now().UnixNano()) }

// complete queues the finished request seq and hands every response that
// is now next in line to gnet, so responses leave in request order however
// their handlers interleave (kfake's clientConn.write with its seq and
// out-of-order map). A failed request closes the connection after the
// responses before it; what comes after it is dropped.
func (cn *conn) complete(seq uint32, out *outFrame) {
	var done []*outFrame
	dropped := 1 // out itself, unless it is queued below
	cn.mu.Lock()
	if !cn.closed {
		dropped = 0
		cn.pending[seq] = out
		var batch [][]byte
		for {
			o, ok := cn.pending[cn.nextWrite]
			if !ok {
				break
			}
			delete(cn.pending, cn.nextWrite)
			cn.nextWrite++
			done = append(done, o)
			if o.err != nil {
				dropped = cn.dropPendingLocked()
				break
			}
			if o.buf != nil {
				batch = append(batch, o.buf)
			}
		}
		// Still under mu: AsyncWritev only queues a task for the loop,
		// and queuing in sequence order is what keeps the order.
		cn.writeLocked(batch)
		if cn.closed {
			cn.flushClose.Store(true)
			_ = cn.gc.Wake(nil)
		}
	}
	cn.mu.Unlock()

	cn.inflight.Add(-int32(len(done) + dropped))
	now := cn.srv.clock.Now()
	for _, o := range done {
		cn.srv.metrics.RequestDone(o.key, o.version, now.Sub(o.received), o.err != nil)
	}
	if len(done)+dropped > 0 && cn.wantWake.CompareAndSwap(true, false) {
		_ = cn.gc.Wake(nil)
	}
}

// dropPendingLocked marks the queue closed and forgets the responses still
// in it, returning how many. mu must be held.
func (cn *conn) dropPendingLocked() int {
	n := len(cn.pending)
	cn.closed = true
	cn.pending = nil
	return n
}

// writeLocked hands batch to gnet in chunks writev accepts. mu must be held.
func (cn *conn) writeLocked(batch [][]byte) {
	for len(batch) > 0 {
		chunk := batch[:min(len(batch), maxIovecs)]
		batch = batch[len(chunk):]
		n := 0
		for _, b := range chunk {
			n += len(b)
		}
		cn.unsent.Add(int64(n))
		err := cn.gc.AsyncWritev(chunk, func(gc gnet.Conn, err error) error {
			cn.written(gc, n, err)
			return nil
		})
		if err != nil {
			cn.unsent.Add(-int64(n))
		}
	}
}

// written runs on the loop once gnet has taken n response bytes: written
// them to the socket or copied them into its outbound buffer.
func (cn *conn) written(gc gnet.Conn, n int, err error) {
	cn.unsent.Add(-int64(n))
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
	cn.mu.Lock()
	dropped := 0
	if !cn.closed {
		dropped = cn.dropPendingLocked()
	}
	cn.mu.Unlock()
	cn.inflight.Add(-int32(dropped))
	cn.cancel()
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
