package ctrlrpc

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Handler answers controller requests. A nil response with an error closes
// the connection (Kafka closes a connection on a request it cannot
// handle); every answer the protocol knows, NOT_CONTROLLER included, is a
// response.
type Handler interface {
	ServeControllerRequest(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req kmsg.Request) (kmsg.Response, error)

// ServeControllerRequest implements Handler.
func (f HandlerFunc) ServeControllerRequest(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return f(ctx, req)
}

// RequestInfo describes where a request came from.
type RequestInfo struct {
	// ClientID is the request header's, without a ForwardID (which the
	// handler finds with ForwardIDFrom).
	ClientID   string
	RemoteAddr net.Addr
}

type infoKey struct{}

// InfoFrom returns the RequestInfo of a request the Server is handling.
func InfoFrom(ctx context.Context) (RequestInfo, bool) {
	ri, ok := ctx.Value(infoKey{}).(RequestInfo)
	return ri, ok
}

// maxInFlightPerConn bounds the requests one connection has in progress;
// past it the server stops reading that connection.
const maxInFlightPerConn = 64

// writeTimeout bounds writing one response.
const writeTimeout = 30 * time.Second

// Server answers controller connections handed to it by a StreamLayer.
type Server struct {
	handler Handler
	logger  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// NewServer returns a server answering through h.
func NewServer(h Handler, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{handler: h, logger: logger, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
}

// ServeConn serves a connection whose Magic byte was read, until it fails
// or the server closes. It closes c.
func (s *Server) ServeConn(c net.Conn) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	ctx, cancel := context.WithCancel(s.ctx)
	var (
		inflight sync.WaitGroup
		wmu      sync.Mutex
		once     sync.Once
	)
	shut := func() {
		once.Do(func() {
			cancel()
			c.Close()
		})
	}
	defer func() {
		shut()
		inflight.Wait()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	sem := make(chan struct{}, maxInFlightPerConn)
	r := bufio.NewReader(c)
	for {
		frame, err := readFrame(r)
		if err != nil {
			return
		}
		h, req, err := parseRequest(frame)
		if err != nil {
			s.logger.Warn("closing controller connection", "remote", c.RemoteAddr(), "err", err)
			return
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			defer func() { <-sem }()
			clientID, fwd := splitForwardID(h.clientID)
			rctx := context.WithValue(ctx, infoKey{}, RequestInfo{ClientID: clientID, RemoteAddr: c.RemoteAddr()})
			if !fwd.IsZero() {
				rctx = WithForwardID(rctx, fwd)
			}
			resp, err := s.handler.ServeControllerRequest(rctx, req)
			if err != nil || resp == nil {
				if ctx.Err() == nil {
					s.logger.Warn("closing controller connection", "remote", c.RemoteAddr(), "request", apiName(h.key), "err", err)
				}
				shut()
				return
			}
			out := appendResponse(nil, h.correlationID, resp)
			wmu.Lock()
			defer wmu.Unlock()
			_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := c.Write(out); err != nil {
				shut()
			}
		}()
	}
}

// Close closes every connection and waits for their handlers to return.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}
