package wire

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A producing or fetching connection is read by its runner, not by the
// event loop.
//
// Through the loop, every produce request cost an epoll wake-up of the
// loop, a read into gnet's buffer, a copy into the frame, and a hand-off
// to the connection's runner goroutine, which the scheduler had to wake
// (issue 29's p1 profile: a context switch and 1.6 epoll_pwait calls per
// request; scheduling was 30% of the broker's CPU). Once a connection
// that produces or fetches holds a lent socket (sendfile.go; a producer's
// first answer asks for it, as does the first Fetch sent from files), the
// loop hands reading over: it takes EPOLLIN off the socket, as a read
// pause does, and the runner (runqueue.go), once its queue is empty,
// reads the next requests from the lent socket itself, parking in Go's
// netpoller, and runs them in place. Requests a pipelining producer sent
// meanwhile arrive in one read. A follower's fetch that finds data is
// read, answered with sendfile and followed by the next read on one
// goroutine; one that waits (Unmute) passes reading on, as a produce
// waiting for the ISR does. Measured: p1 produce -17% CPU per GiB and
// +20% MiB/s; three nodes at RF=3 +22% MiB/s and -17% CPU per GiB for
// the fetches.
//
// What the loop checks before each frame, the reader checks too, so a
// client gets the same broker either way:
//   - socket.request.max.bytes and a negative size close the connection
//     (frame.go, as Kafka's NetworkReceive);
//   - request memory (reqmem.go, queued.max.request.bytes) is reserved
//     before a frame is allocated; when there is none, the reader waits
//     for the pool to wake the connection, reading nothing;
//   - a quota mute (KIP-219) is slept out before the next frame is read;
//   - past max in-flight requests or buffered response bytes, the reader
//     waits for an answer to go out (Kafka mutes the channel);
//   - on a SASL listener, a SaslHandshake or SaslAuthenticate (a
//     re-authentication, KIP-368) is handled before the next frame is
//     read, and sasl.server.max.receive.size caps frames while the
//     connection is not authenticated (sasl_auth.go);
//   - after a failed request nothing more is read, and the connection
//     closes once the answers before it are out (the writer's flushClose);
//   - once Shutdown begins nothing more is read (drainSeen), a read
//     parked in the netpoller is interrupted for it.
//
// The hand-over is one way and happens only between frames: nothing of a
// frame in gnet's buffer and reads not paused. A TLS connection's runner
// reads gnet's end of the relay's socketpair (tls.go) the same way, on a
// duplicate of its own: the relay's hop through the loop goes, the relay
// stays. gnet reads nothing afterwards: it turns EPOLLIN on only in its
// write path, and gnet writes nothing once the socket is lent
// (sendfile.go), nor ever on a TLS connection (tls_write.go); a
// socket error with EPOLLIN off makes gnet close the connection without
// reading. The client's end of stream reaches the reader, which closes the
// connection; a close (idle, quota, OnClose) closes the lent socket, which
// ends a parked read.

// readChunk is what one read of the socket asks for: gnet's read size.
const readChunk = 64 << 10

// socketReader is the reading half of a connection its runner reads. Its
// fields belong to whichever goroutine is the runner (runqueue.go hands
// the role on with a worker start, which orders the accesses), except
// wake and ended.
type socketReader struct {
	cn   *conn
	sock *directSocket // the lent socket, or a TLS connection's own duplicate
	// ownSock: sock is the reader's own, closed with the connection
	// (closeConn), not the writer's lent socket.
	ownSock bool
	// buf holds bytes read and not yet framed, buf[r:w]; it comes from
	// the server's pool while it holds bytes or a read is under way, and
	// goes back when it empties, so an idle producer holds none.
	buf   []byte
	r, w  int
	frame frameRead // the request being read (frame.go)
	// wake is signalled when room may have freed up: an answer went out
	// (conn.wakeIfWanted) or request memory came back (through the loop).
	wake  chan struct{}
	ended atomic.Bool // reading stopped for good
}

// mayHandOverReading reports whether the loop may give reading cn to its
// runner now: see above. Loop only, at the end of a pass.
func (cn *conn) mayHandOverReading(gc gnet.Conn) bool {
	if !readPauseSupported || cn.pollFD < 0 || (cn.lastKey != int16(kmsg.Produce) && cn.lastKey != int16(kmsg.Fetch)) {
		return false
	}
	if (cn.sock.Load() == nil && cn.tlsOut == nil) || cn.frame.active || cn.readPaused || cn.stopReading {
		return false
	}
	if cn.failed.Load() || cn.flushClose.Load() || cn.srv.draining.Load() {
		return false
	}
	return gc.InboundBuffered() == 0 && gc.OutboundBuffered() == 0 && cn.gnetWrites.Load() == 0
}

// handOverReading stops the loop reading cn and makes its runner read it,
// starting a runner when none is active. Loop only.
func (cn *conn) handOverReading(gc gnet.Conn) {
	s := cn.srv
	rd := &socketReader{cn: cn, sock: cn.sock.Load(), wake: make(chan struct{}, 1)}
	if rd.sock == nil {
		// A TLS connection: the runner reads gnet's end of the relay's
		// socketpair (tls.go) on a duplicate of its own, as gnet writes
		// nothing there either (the writer writes into the tls.Conn).
		d, err := dupSocket(gc.Fd())
		if err != nil {
			return
		}
		if rd.sock, err = newDirectSocket(d); err != nil {
			return
		}
		rd.ownSock = true
	}
	if err := setReadInterest(cn.pollFD, gc.Fd(), false, false); err != nil {
		s.logger.Warn("cannot change read interest; the event loop keeps reading",
			"conn", cn.info.ConnID, "err", err)
		cn.pollFD = -1
		if rd.ownSock {
			rd.sock.close()
		}
		return
	}
	cn.reader.Store(rd)
	s.readersHandedOver.Add(1)
	cn.runMu.Lock()
	cn.reading = true
	start := !cn.running
	cn.running = true
	cn.runMu.Unlock()
	if start {
		s.workers.start(task{cn: cn})
	}
}

// onTraffic is the connection's OnTraffic once its runner reads it: the
// loop only closes it after a failure, tells the reader that room may
// have freed up, and interrupts it when Shutdown begins.
func (rd *socketReader) onTraffic(gc gnet.Conn) gnet.Action {
	cn, s := rd.cn, rd.cn.srv
	if cn.flushClose.Load() {
		return cn.closeWhenFlushed(gc)
	}
	if gc.InboundBuffered() > 0 {
		// Not reached (see above); were it, the bytes would be split
		// between two readers, so nothing more may be parsed.
		s.logger.Error("closing connection: the event loop read bytes of a connection its runner reads",
			"conn", cn.info.ConnID, "client", cn.info.ClientHost, "bytes", gc.InboundBuffered())
		return gnet.Close
	}
	if s.draining.Load() {
		if rd.ended.Load() {
			cn.drainSeen.Store(true)
		}
		rd.sock.interruptRead()
	}
	rd.signal()
	cn.outbound.Store(int64(gc.OutboundBuffered()))
	return gnet.None
}

func (rd *socketReader) signal() {
	select {
	case rd.wake <- struct{}{}:
	default:
	}
}

// readFrames reads the connection's next requests and queues them for the
// runner, returning once at least one is queued and no whole frame is
// left to take without waiting; false: reading has ended for good (the
// connection failed, closes or drains), with or without requests queued.
// Runner only.
func (rd *socketReader) readFrames() bool {
	cn, s := rd.cn, rd.cn.srv
	queued := 0
	for {
		if !rd.frame.active {
			switch {
			case cn.failed.Load() || cn.stopReading || cn.flushClose.Load() || cn.ctx.Err() != nil:
				return rd.end()
			case s.draining.Load():
				cn.drainSeen.Store(true)
				return rd.end()
			case queued > 0 && rd.w-rd.r < 4:
				return true // run what is queued before waiting for bytes
			case cn.throttled():
				if queued > 0 {
					return true
				}
				cn.waitThrottle() // a quota's mute: nothing is read meanwhile
				continue
			case rd.overLimit():
				if queued > 0 {
					return true
				}
				rd.waitForRoom()
				continue
			case cn.auth != nil && cn.auth.gate.Load():
				// A SASL request (a re-authentication, KIP-368) is
				// handled before the next frame is read: what it
				// decides may change what that frame may be.
				if queued > 0 {
					return true
				}
				rd.waitForGate()
				continue
			}
		}
		lim := cn.frameLimits()
		st, err := rd.frame.next(rd, lim, rd, s.clock.Now().UnixNano())
		if err != nil {
			cn.badFrame(lim, err)
			_ = cn.gc.Close()
			return rd.end()
		}
		switch st {
		case frameNoMemory:
			if queued > 0 {
				return true
			}
			rd.waitForMemory()
			continue
		case frameIncomplete:
			if queued > 0 {
				return true
			}
			if err := rd.fill(); err != nil {
				rd.readFailed(err)
				return rd.end()
			}
			continue
		}
		cn.startFrame(&rd.frame) // queued: the runner is running
		queued++
	}
}

// overLimit is conn.overLimit for a connection gnet writes nothing on.
func (rd *socketReader) overLimit() bool {
	cfg := &rd.cn.srv.cfg
	return int(rd.cn.inflight.Load()) >= cfg.MaxInflightRequests || rd.cn.unsent.Load() >= cfg.MaxBufferedResponseBytes
}

// waitForRoom waits until an answer goes out (conn.finished wakes it), the
// connection closes or Shutdown begins.
func (rd *socketReader) waitForRoom() {
	cn := rd.cn
	// Published before the second look, so an answer finishing in
	// between either sees the wish or is seen by the look.
	cn.wantWake.Store(true)
	if !rd.overLimit() {
		cn.wantWake.Store(false)
		return
	}
	rd.waitForWake()
}

// waitForGate waits until the SASL request that gates the connection has
// been handled (its goroutine wakes it: request.run).
func (rd *socketReader) waitForGate() {
	cn := rd.cn
	cn.wantWake.Store(true)
	if !cn.auth.gate.Load() {
		cn.wantWake.Store(false)
		return
	}
	rd.waitForWake()
}

// waitForMemory waits until the request memory pool wakes the connection
// (through its loop, onTraffic above) or its listener's tick passes: the
// pool also closes stalled holders only when asked again.
func (rd *socketReader) waitForMemory() {
	t := time.NewTimer(tickEvery)
	defer t.Stop()
	select {
	case <-rd.wake:
	case <-t.C:
	case <-rd.cn.ctx.Done():
	case <-rd.cn.srv.drainCh:
	}
}

func (rd *socketReader) waitForWake() {
	select {
	case <-rd.wake:
	case <-rd.cn.ctx.Done():
	case <-rd.cn.srv.drainCh:
	}
}

// fill reads what the socket has, waiting in the netpoller when it has
// nothing: into the frame being assembled when its remainder is large
// and nothing is buffered (one copy fewer), else into buf.
func (rd *socketReader) fill() error {
	cn := rd.cn
	if fr := &rd.frame; fr.active && rd.r == rd.w && len(fr.buf)-fr.filled >= readChunk {
		n, err := rd.sock.read(func() []byte { return fr.buf[fr.filled:] }, func() {})
		if n > 0 {
			fr.filled += n
			fr.progress.Store(cn.srv.clock.Now().UnixNano())
			cn.touch()
		}
		return err
	}
	n, err := rd.sock.read(rd.space, rd.release)
	if n > 0 {
		rd.w += n
		cn.touch()
	}
	return err
}

// space is where the next read goes: the free end of buf, taken from the
// pool when the reader holds none, after moving what is left to its start.
func (rd *socketReader) space() []byte {
	if rd.buf == nil {
		rd.buf = rd.cn.srv.bufs.get(readChunk)[:readChunk]
	}
	if rd.r > 0 {
		rd.w = copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.r = 0
	}
	return rd.buf[rd.w:]
}

// release gives buf back when it holds nothing: before the reader parks,
// and when framing has consumed it.
func (rd *socketReader) release() {
	if rd.buf != nil && rd.r == rd.w {
		rd.cn.srv.bufs.put(rd.buf[:0])
		rd.buf, rd.r, rd.w = nil, 0, 0
	}
}

// readFailed handles the end of reading the socket: the client's end of
// stream or a reset closes the connection, as gnet's loop would on the
// same read; an interrupted read while Shutdown drains stops reading; a
// read of a socket closed under it (OnClose ran) has nothing left to do.
func (rd *socketReader) readFailed(err error) {
	cn, s := rd.cn, rd.cn.srv
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) && s.draining.Load():
		cn.drainSeen.Store(true)
	case cn.ctx.Err() != nil || errors.Is(err, os.ErrClosed):
	default:
		if !errors.Is(err, io.EOF) {
			s.logger.Debug("closing connection: reading the socket failed",
				"conn", cn.info.ConnID, "client", cn.info.ClientHost, "err", err)
		}
		_ = cn.gc.Close()
	}
}

// end stops reading for good: the frame being read and buf go back, and
// the request memory pool forgets the connection. It reports false, what
// readFrames then returns.
func (rd *socketReader) end() bool {
	s := rd.cn.srv
	if rd.frame.active {
		s.freeFrame(rd.frame.take())
	}
	s.reqMem.forget(rd.cn)
	if rd.buf != nil {
		s.bufs.put(rd.buf[:0])
		rd.buf, rd.r, rd.w = nil, 0, 0
	}
	rd.ended.Store(true)
	return false
}

// reserveFrame implements frameMemory for the reader's frames.
func (rd *socketReader) reserveFrame(n int) bool {
	return rd.cn.srv.reqMem.reserve(rd.cn, &rd.frame, n)
}

// The inbound of frameRead.next: what buf holds.

func (rd *socketReader) InboundBuffered() int { return rd.w - rd.r }

func (rd *socketReader) Peek(n int) ([]byte, error) {
	if n > rd.w-rd.r {
		return nil, io.ErrShortBuffer
	}
	return rd.buf[rd.r : rd.r+n], nil
}

func (rd *socketReader) Discard(n int) (int, error) {
	n = min(n, rd.w-rd.r)
	rd.r += n
	rd.release()
	return n, nil
}

func (rd *socketReader) Read(p []byte) (int, error) {
	n := copy(p, rd.buf[rd.r:rd.w])
	rd.r += n
	rd.release()
	return n, nil
}
