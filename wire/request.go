package wire

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// request is one framed request on its way through a worker: decode,
// wait for its turn, handle, encode, queue the response.
type request struct {
	cn       *conn
	seq      uint32
	hdr      requestHeader
	api      api
	kreq     kmsg.Request // the body's type at hdr.version; nil for failures and fallbacks
	fallback bool         // ApiVersions at a version we do not serve: answer v0
	err      error        // a failure found while reading the header
	gated    bool         // the loop reads nothing more from the connection until this request is handled (sasl_auth.go)
	raw      bool         // a raw token of a SaslHandshake v0 exchange, not a request (sasl_auth.go)
	received time.Time
	// pooledFrame is the request's frame when it came from the server's
	// buffer pool (api.poolFrame): hdr.body and kreq's byte fields are
	// slices of it, so it goes back only when run ends.
	pooledFrame []byte
	// reserved is the request memory held for the frame (reqmem.go),
	// given back when run ends.
	reserved int

	// Kafka processes a connection's requests one at a time, in order
	// (the protocol guide promises it, and producers rely on it for the
	// order of their batches). prev is closed when the request before
	// this one lets it start; turn is this request's own, closed when it
	// returns or calls Unmute.
	prev     <-chan struct{}
	turn     chan struct{}
	turnOnce sync.Once
	// Unmute lets only a request of the same API key start early (the
	// next produce of a pipelined producer appends while the first waits
	// for the ISR). Any other request waits until every request before it
	// has been handled, as Kafka, which reads nothing more from a
	// connection until its response is out, would run it: a Metadata
	// request behind an acks=all produce waiting out a leader's failure
	// must describe the cluster after that wait, not before it. Answered
	// early, it told librdkafka that the dead broker still led, after a
	// fresher answer on another connection had moved the partition away,
	// and the producer went back to the dead broker and stayed there until
	// its messages timed out. prevKey is the API key of the request before
	// this one (-1 for none); prevDone is closed once it and every request
	// before it have been handled (their handlers returned); done is this
	// request's own.
	prevKey  int16
	prevDone <-chan struct{}
	done     chan struct{}
	// handedOff is set inside turnOnce by unmute: the goroutine running
	// this request is no longer the connection's runner (runqueue.go).
	// Read by that goroutine after handled, which ran turnOnce too.
	handedOff bool
}

// Unmute lets the connection's next request start before this one has
// finished; see reqctx.Unmute, which services call.
func Unmute(ctx context.Context) { reqctx.Unmute(ctx) }

func (r *request) releaseTurn() { r.turnOnce.Do(func() { close(r.turn) }) }

// unmute is the Unmute of a request: it lets the next request start, and
// the request's goroutine stops being the connection's runner
// (runqueue.go), since it is about to wait. After handled, it does
// nothing: the request is done and its goroutine goes on running the
// queue.
func (r *request) unmute() {
	r.turnOnce.Do(func() {
		close(r.turn)
		r.handOff()
	})
}

// handled ends the request's hold on the connection once its handler has
// returned (the response is built; writing it out may take longer): the
// next request may start, and so may any later one once every request
// before it has been handled too.
func (r *request) handled() {
	r.releaseTurn()
	r.finished()
}

// finished closes done once the requests before this one have been
// handled too; a request handled before them (it started early) leaves
// that to a goroutine waiting for them.
func (r *request) finished() {
	select {
	case <-r.prevDone:
		close(r.done)
	default:
		go func() {
			<-r.prevDone
			close(r.done)
		}()
	}
}

// resolve checks the header against the server's API table (Kafka's
// SocketServer.parseRequestHeader and ApiVersionManager.isApiEnabled): an
// unknown key (one the table lacks: not registered, or not served by this
// server's services, as the mirror keys without a MirrorService) or a
// version outside the registered range fails the request, which closes the
// connection, except ApiVersions, which Kafka accepts at any version and
// answers in v0 (RequestContext.parseRequest).
func (r *request) resolve(t *apiTable) {
	a, ok := t.lookup(r.hdr.key)
	if !ok {
		r.err = fmt.Errorf("%w: %d", ErrUnknownAPIKey, r.hdr.key)
		return
	}
	r.api = a
	if r.hdr.version < a.min || r.hdr.version > a.max {
		if r.hdr.key == int16(kmsg.ApiVersions) {
			r.fallback = true
			return
		}
		r.err = fmt.Errorf("%w: %s v%d, serving v%d-v%d", ErrUnsupportedVersion, NameForKey(r.hdr.key), r.hdr.version, a.min, a.max)
		return
	}
	r.kreq = requestForKey(r.hdr.key)
	r.kreq.SetVersion(r.hdr.version)
}

// run handles the request on its worker goroutine (workers.go).
func (r *request) run() {
	cn, s := r.cn, r.cn.srv
	defer r.releaseFrame()
	out := &outFrame{key: r.hdr.key, version: r.hdr.version, received: r.received}
	if r.err == nil && r.kreq != nil {
		r.err = decodeBody(r.kreq, r.hdr.body)
	}

	start := r.prevDone
	if r.hdr.key == r.prevKey {
		start = r.prev
	}
	// A produce already read is carried out even when the connection
	// closes before its turn, as Kafka's request handlers process every
	// request the socket server queued and only the response is dropped:
	// an acks=0 producer that flushed and closed counts its records as
	// sent. Any other request of a closed connection is dropped: Kafka
	// would run those too, but here the ones that wait (a Fetch long poll,
	// a JoinGroup held for its rebalance) would then wait out their
	// timeouts for a client that is gone; of the writes, only a produce's
	// sender may count it done without an answer.
	carryOut := r.err == nil && r.hdr.key == int16(kmsg.Produce)
	if carryOut {
		s.producing.Add(1)
		defer s.producing.Add(-1)
	}
	select {
	case <-start:
	case <-cn.ctx.Done():
		if !carryOut {
			r.handled()
			cn.complete(r, out) // dropped: the connection is gone
			return
		}
		select {
		case <-start:
		case <-s.baseCtx.Done():
			r.handled()
			cn.complete(r, out) // the server is stopping
			return
		}
	}
	if r.err == nil && cn.failed.Load() {
		// An earlier request closed the connection; Kafka would never
		// have read this one.
		r.handled()
		cn.complete(r, out)
		return
	}

	if r.err == nil && cn.auth != nil && !r.raw {
		r.err = cn.auth.admit(r.hdr.key, s.clock.Now())
	}
	var resp kmsg.Response
	switch {
	case r.err != nil:
	case r.raw:
		var reply []byte
		if reply, r.err = cn.auth.rawStep(r.hdr.body, s.clock.Now()); r.err == nil {
			out.buf = rawFrame(&s.bufs, reply)
		}
	case r.fallback:
		resp = s.unsupportedApiVersions()
	default:
		info := cn.info
		info.ClientID = r.hdr.clientID
		info.APIKey, info.APIVersion = r.hdr.key, r.hdr.version
		ctx := cn.ctx
		if carryOut && ctx.Err() != nil {
			// Closed before its turn: the handler runs under the
			// server's lifetime, not the connection's.
			dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			stop := context.AfterFunc(s.baseCtx, cancel)
			defer func() { stop(); cancel() }()
			ctx = dctx
		}
		if cn.auth != nil {
			// The SASL principal, over a TLS certificate's (Kafka's
			// SaslServerAuthenticator builds it from the SASL server).
			info.Principal = cn.auth.principalOr(info.Principal)
			ctx = withAuth(ctx, cn.auth)
		}
		ctx = reqctx.WithUnmute(reqctx.With(ctx, info), r.unmute)
		// A request read before its connection was muted waits out
		// the mute, as it would have waited unread in Kafka.
		cn.waitThrottle()
		began := s.clock.Now()
		resp, r.err = r.api.handle(s, ctx, r.kreq)
		if r.err == nil && resp != nil && resp.Key() != r.hdr.key {
			r.err = fmt.Errorf("handler answered %s with %s", NameForKey(r.hdr.key), NameForKey(resp.Key()))
		}
		if r.err == nil && !r.api.throttleExempt {
			// Client quotas (client_quota_throttle.go): answer at once
			// with the throttle time, then read nothing for it.
			if d := s.throttleFor(info, r.kreq, resp, len(r.hdr.body), s.clock.Now().Sub(began)); d > 0 {
				if resp != nil {
					setThrottle(resp, d)
				}
				cn.throttle(d)
			}
		}
	}
	if r.err == nil && cn.auth != nil && cn.auth.failed() {
		// A failed authentication: answer, then close. Nothing after
		// it runs.
		cn.failed.Store(true)
		out.closeAfter = true
		s.logger.Info("closing connection after a failed SASL authentication",
			"conn", cn.info.ConnID, "client", cn.info.ClientHost, "listener", cn.info.Listener,
			"client_id", r.hdr.clientID, "request", NameForKey(r.hdr.key))
	}
	if out.closeAfter || (r.err != nil && cn.auth != nil && cn.auth.failed()) {
		cn.auth.delayFailure(cn.ctx)
	}
	if r.gated {
		cn.auth.gate.Store(false)
		cn.wakeIfWanted()
	}
	if r.err != nil {
		// Mark the failure before letting the next request start, so
		// it sees it and does not run.
		cn.failed.Store(true)
		r.handled()
		out.err = r.err
		s.logger.Info("closing connection after a failed request",
			"conn", cn.info.ConnID, "client", cn.info.ClientHost, "listener", cn.info.Listener,
			"client_id", r.hdr.clientID, "correlation_id", r.hdr.correlationID, "err", r.err)
		cn.complete(r, out)
		return
	}
	r.handled()
	if resp != nil {
		if !r.fallback {
			resp.SetVersion(r.hdr.version)
		}
		cn.encodeOut(out, r.hdr.correlationID, resp)
	}
	cn.complete(r, out)
}

// releaseFrame gives the frame back when the request ends: a pooled one to
// the buffer pool, and its request memory to the pool, at once when the
// buffer is reused, else once the collector may have taken it
// (reqmem.go). Nothing of the request refers to the frame afterwards: a
// worker keeps its last request until the next one arrives, and that must
// not keep a 100 MB frame alive. A non-pooled frame may still be referred
// to by what a handler kept (kmsg's byte fields are slices of it); its
// memory then goes when that goes.
func (r *request) releaseFrame() {
	r.cn.srv.freeFrame(r.pooledFrame, r.pooledFrame != nil, r.reserved)
	r.pooledFrame, r.hdr.body, r.kreq, r.reserved = nil, nil, nil, 0
}

// decodeBody parses body into kreq. kmsg reports malformed input as an
// error; a panic would be a kmsg bug, but one bad request must only cost
// its own connection (Kafka catches everything per request in
// Processor.processCompletedReceives), so it is turned into an error too.
func decodeBody(kreq kmsg.Request, body []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s v%d: decoder panic: %v", ErrInvalidRequest, NameForKey(kreq.Key()), kreq.GetVersion(), p)
		}
	}()
	if err := kreq.ReadFrom(body); err != nil {
		return fmt.Errorf("%w: %s v%d: %v", ErrInvalidRequest, NameForKey(kreq.Key()), kreq.GetVersion(), err)
	}
	return nil
}
