package wire

import (
	"fmt"

	"github.com/panjf2000/gnet/v2"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// onTraffic is the connection's OnTraffic: new bytes arrived, or someone
// woke the loop because room freed up. It only splits frames, reads
// headers and hands requests to goroutines; it never blocks.
func (cn *conn) onTraffic(gc gnet.Conn) gnet.Action {
	if rd := cn.reader.Load(); rd != nil {
		return rd.onTraffic(gc) // its runner reads it (reader.go)
	}
	s := cn.srv
	if s.draining.Load() {
		// From here on this loop starts no request on cn (the checks
		// below see the flag too), so Shutdown may count on inflight.
		cn.drainSeen.Store(true)
	}
	if gc.InboundBuffered() > cn.lastInbound {
		cn.touch()
	}
	if cn.flushClose.Load() {
		return cn.closeWhenFlushed(gc)
	}
	for {
		if cn.stopReading || cn.failed.Load() || s.draining.Load() {
			cn.setReadPaused(gc, true)
			break
		}
		// A client over its quota is muted for its throttle time
		// (KIP-219); the listener's tick wakes the loop to look again.
		if !cn.frame.active && cn.throttled() {
			cn.setReadPaused(gc, true)
			break
		}
		// A request is read whole once begun (Kafka mutes a channel
		// between receives, never inside one), so only a new one waits
		// for room.
		if !cn.frame.active && cn.overLimit(gc) {
			if gc.InboundBuffered() == 0 && !cn.readPaused {
				// Nothing more to parse: reads stay on until bytes
				// come. A producer at its own in-flight limit
				// (Kafka's max.in.flight.requests.per.connection, 5,
				// ours too) sends nothing until an answer, so pausing
				// here cost two epoll_ctl calls and a loop wake-up for
				// about every other request and held back nothing; when
				// bytes do come while over the limit, that pass pauses.
				break
			}
			// Publish the wish to be woken before the second look, so
			// a response finishing in between either sees the flag or
			// is seen by the second look.
			cn.wantWake.Store(true)
			if cn.overLimit(gc) {
				cn.setReadPaused(gc, true)
				break
			}
			cn.wantWake.Store(false)
		}
		lim := &s.frames
		if cn.auth != nil && !cn.frame.active {
			// Before authentication one request at a time (the one
			// being handled may change what the next may be) and
			// none larger than sasl.server.max.receive.size.
			if cn.auth.gate.Load() {
				cn.wantWake.Store(true)
				if cn.auth.gate.Load() {
					cn.setReadPaused(gc, true)
					break
				}
				cn.wantWake.Store(false)
			}
			lim = cn.frameLimits()
		}
		st, err := cn.frame.next(gc, lim, cn, s.clock.Now().UnixNano())
		if err != nil {
			cn.badFrame(lim, err)
			return gnet.Close
		}
		if st == frameNoMemory {
			// The pool wakes the connection when memory comes back,
			// and the listener's ticker every tick while it is paused.
			cn.setReadPaused(gc, true)
			break
		}
		if st == frameIncomplete {
			cn.setReadPaused(gc, false)
			break
		}
		cn.startFrame(&cn.frame)
	}
	if cn.mayHandOverReading(gc) {
		cn.handOverReading(gc)
	}
	cn.lastInbound = gc.InboundBuffered()
	cn.inbound.Store(int64(cn.lastInbound))
	cn.outbound.Store(int64(gc.OutboundBuffered()))
	if cn.readPaused && cn.lastInbound > cn.inboundCap {
		s.logger.Warn("closing connection: input kept arriving while reads were paused",
			"conn", cn.info.ConnID, "client", cn.info.ClientHost, "buffered", cn.lastInbound)
		return gnet.Close
	}
	return gnet.None
}

// frameLimits is what the next frame may be: the server's limits, with
// sasl.server.max.receive.size as the largest before SASL authentication.
func (cn *conn) frameLimits() *frameLimits {
	lim := &cn.srv.frames
	if cn.auth != nil {
		if c := cn.auth.maxFrame(lim.maxBytes); c < lim.maxBytes {
			capped := *lim
			capped.maxBytes = c
			return &capped
		}
	}
	return lim
}

// badFrame logs why a frame read under lim closes the connection, and
// counts a frame refused before SASL authentication.
func (cn *conn) badFrame(lim *frameLimits, err error) {
	if cn.auth != nil && lim != &cn.srv.frames {
		cn.auth.frameRefused()
		err = fmt.Errorf("before SASL authentication (sasl.server.max.receive.size %d): %w", lim.maxBytes, err)
	}
	cn.srv.logger.Warn("closing connection: bad request frame",
		"conn", cn.info.ConnID, "client", cn.info.ClientHost, "listener", cn.info.Listener, "err", err)
}

// closeWhenFlushed closes the connection after a failed request once the
// responses before it are out (Kafka's CloseConnectionResponse after
// earlier sends), reading nothing meanwhile. Loop only.
func (cn *conn) closeWhenFlushed(gc gnet.Conn) gnet.Action {
	cn.setReadPaused(gc, true)
	cn.outbound.Store(int64(gc.OutboundBuffered()))
	if gc.OutboundBuffered() == 0 && cn.unsent.Load() == 0 {
		return gnet.Close
	}
	return gnet.None
}

// startFrame starts the request fr has assembled, whoever read it (the
// loop, or the runner once reading is handed over: reader.go).
func (cn *conn) startFrame(fr *frameRead) {
	s := cn.srv
	frame, pooled, reserved := fr.take()
	if isLargeFrame(reserved) {
		s.reqMem.assembled(cn)
	}
	s.metrics.BytesIn(len(frame) + 4)
	cn.touch()
	cn.startRequest(frame, pooled, reserved)
}

// startRequest numbers the frame, reads its header and starts its
// goroutine. A header that fails here still takes its place in the
// sequence, so the connection closes after the responses before it.
// pooled marks a frame from the server's buffer pool, given back when the
// request's goroutine ends, as is the request memory reserved for it.
func (cn *conn) startRequest(frame []byte, pooled bool, reserved int) {
	s := cn.srv
	r := &request{
		cn:       cn,
		seq:      cn.nextSeq,
		received: s.clock.Now(),
		prev:     cn.lastTurn,
		turn:     make(chan struct{}),
		prevKey:  cn.lastKey,
		prevDone: cn.lastDone,
		done:     make(chan struct{}),
	}
	cn.nextSeq++
	cn.lastTurn, cn.lastDone = r.turn, r.done
	cn.inflight.Add(1)
	if pooled {
		r.pooledFrame = frame
	}
	r.reserved = reserved
	if cn.auth != nil && cn.auth.raw.Load() {
		// A token of a SaslHandshake v0 exchange: no request header.
		r.raw = true
		r.hdr = requestHeader{key: int16(kmsg.SASLAuthenticate), body: frame}
	} else {
		r.hdr, r.err = parseHeader(frame, requestFlexible)
	}
	cn.lastKey = r.hdr.key
	if cn.auth != nil && cn.auth.gates(r.hdr.key) {
		// Set before the loop looks for the next frame; the request's
		// goroutine clears it once handled (sasl_auth.go).
		cn.auth.gate.Store(true)
		r.gated = true
	}
	if r.err == nil && !r.raw {
		r.resolve(s.apis)
	}
	if r.err != nil {
		cn.stopReading = true
	}
	cn.enqueue(r)
}

// setReadPaused stops or resumes reading the socket. Pausing is re-applied
// on every pass because gnet's own write path turns EPOLLIN back on when
// its outbound buffer fills or drains.
func (cn *conn) setReadPaused(gc gnet.Conn, paused bool) {
	if !paused && !cn.readPaused {
		return
	}
	if cn.pollFD >= 0 {
		if err := setReadInterest(cn.pollFD, gc.Fd(), !paused, gc.OutboundBuffered() > 0); err != nil {
			cn.srv.logger.Warn("cannot change read interest; relying on the buffered-input cap",
				"conn", cn.info.ConnID, "err", err)
			cn.pollFD = -1
		}
	}
	if paused != cn.readPaused {
		cn.readPaused = paused
		cn.ln.watch(cn, paused)
	}
}

// reserveFrame implements frameMemory for the connection's next request.
// Loop only.
func (cn *conn) reserveFrame(n int) bool {
	return cn.srv.reqMem.reserve(cn, &cn.frame, n)
}

// dropFrame gives back the buffer and request memory of a request the
// connection closed in the middle of. Loop only, from OnClose.
func (cn *conn) dropFrame() {
	s := cn.srv
	s.reqMem.forget(cn)
	if !cn.frame.active {
		return
	}
	s.freeFrame(cn.frame.take())
}
