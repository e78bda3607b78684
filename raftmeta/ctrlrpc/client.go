package ctrlrpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/kframe"
)

// ErrClosed is returned by Send after Close.
var ErrClosed = errors.New("ctrlrpc: client closed")

// errNoController is the reason an attempt was not made: no address known.
var errNoController = fmt.Errorf("ctrlrpc: no controller address known: %w", kerr.NotController)

// ClientConfig configures a Client.
type ClientConfig struct {
	// ClientID is sent in every request header. NodeClientID(id) lets the
	// controller tell which broker a request came from.
	ClientID string
	// Resolve returns the active controller's address as this node knows
	// it (raft leader → node id → voter address), "" when unknown.
	Resolve func() string
	// Bootstrap are the controller addresses (controller.quorum.voters)
	// tried in turn while Resolve knows no leader, or names one that
	// answered NOT_CONTROLLER or failed.
	Bootstrap []string
	// Dialer opens connections (nil: DefaultDialer).
	Dialer Dialer
	// AttemptTimeout bounds one attempt: dial, write, wait for the answer
	// (default 15s). An attempt that times out closes its connection, as a
	// Kafka client disconnects on a request timeout.
	AttemptTimeout time.Duration
	// MinBackoff and MaxBackoff bound the exponential wait between
	// attempts (defaults 25ms and 1s).
	MinBackoff, MaxBackoff time.Duration
	Logger                 *slog.Logger
}

// NodeClientID is the client id a node's controller channel uses.
func NodeClientID(nodeID int32) string { return fmt.Sprintf("strait-node-%d", nodeID) }

// ParseNodeClientID returns the node id in a NodeClientID.
func ParseNodeClientID(clientID string) (int32, bool) {
	var id int32
	if n, err := fmt.Sscanf(clientID, "strait-node-%d", &id); err != nil || n != 1 || NodeClientID(id) != clientID {
		return 0, false
	}
	return id, true
}

// Client sends requests to the active controller (Kafka's
// NodeToControllerChannelManager): one multiplexed connection per address,
// re-resolving the controller and retrying with backoff on NOT_CONTROLLER
// or a failed connection until the request's context ends. Safe for
// concurrent use.
type Client struct {
	cfg  ClientConfig
	fmtr *kmsg.RequestFormatter

	mu      sync.Mutex
	conns   map[string]*clientConn
	dialing map[string]*sync.Mutex // one dial at a time per address
	warned  map[string]time.Time   // last unreachable warning per address
	next    int                    // bootstrap rotation
	closed  bool
}

// unreachableWarnEvery spaces the warnings about a controller address that
// refuses connections. Kafka's NetworkClient warns on every failed
// connection ("Connection to node N could not be established"); a node
// whose controller address nobody listens on (a voter entry that names the
// wrong port) otherwise retries in silence, and its broker never registers.
const unreachableWarnEvery = 10 * time.Second

// dialError is a failure to connect to a controller address.
type dialError struct {
	addr string
	err  error
}

func (e *dialError) Error() string { return fmt.Sprintf("ctrlrpc: dial %s: %v", e.addr, e.err) }
func (e *dialError) Unwrap() error { return e.err }

// NewClient returns a client; it connects on first use.
func NewClient(cfg ClientConfig) *Client {
	if cfg.Dialer == nil {
		cfg.Dialer = DefaultDialer
	}
	if cfg.AttemptTimeout <= 0 {
		cfg.AttemptTimeout = 15 * time.Second
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 25 * time.Millisecond
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(time.Second, cfg.MinBackoff)
	}
	if cfg.Resolve == nil {
		cfg.Resolve = func() string { return "" }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Client{cfg: cfg, fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID(cfg.ClientID)), conns: map[string]*clientConn{}, dialing: map[string]*sync.Mutex{}, warned: map[string]time.Time{}}
}

// Send sends req (at the version it is set to) to the active controller
// and returns its response. It retries on a failed connection and on a
// response carrying NOT_CONTROLLER anywhere, until ctx ends; the error then
// wraps ctx's error and the last failure. Other error codes are the
// caller's to read. A ForwardID in ctx (WithForwardID) goes with every
// attempt.
func (c *Client) Send(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	fmtr := c.fmtr
	if id, ok := ForwardIDFrom(ctx); ok {
		fmtr = kmsg.NewRequestFormatter(kmsg.FormatterClientID(id.clientID(c.cfg.ClientID)))
	}
	backoff := c.cfg.MinBackoff
	var lastErr error
	avoid := ""
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, c.giveUp(ctx, req, lastErr)
			case <-t.C:
			}
			backoff = min(2*backoff, c.cfg.MaxBackoff)
		}
		if err := ctx.Err(); err != nil {
			return nil, c.giveUp(ctx, req, lastErr)
		}
		addr, err := c.pick(avoid)
		if err != nil {
			return nil, err
		}
		if addr == "" {
			lastErr = errNoController
			continue
		}
		resp, err := c.attempt(ctx, addr, fmtr, req)
		switch {
		case errors.Is(err, ErrClosed):
			return nil, err
		case err != nil:
			if ctx.Err() != nil {
				return nil, c.giveUp(ctx, req, err)
			}
			c.cfg.Logger.Debug("controller request failed", "request", apiName(req.Key()), "controller", addr, "err", err)
			c.warnUnreachable(addr, req, err)
			lastErr, avoid = err, addr
		case HasErrorCode(resp, kerr.NotController.Code):
			lastErr, avoid = fmt.Errorf("%s: %w", addr, kerr.NotController), addr
		default:
			return resp, nil
		}
	}
}

// warnUnreachable logs a failed dial to addr at most once per
// unreachableWarnEvery.
func (c *Client) warnUnreachable(addr string, req kmsg.Request, err error) {
	var de *dialError
	if !errors.As(err, &de) {
		return
	}
	now := time.Now()
	c.mu.Lock()
	last, ok := c.warned[addr]
	quiet := ok && now.Sub(last) < unreachableWarnEvery
	if !quiet {
		c.warned[addr] = now
	}
	c.mu.Unlock()
	if !quiet {
		c.cfg.Logger.Warn("cannot connect to the controller; retrying", "controller", addr, "request", apiName(req.Key()), "err", de.err)
	}
}

func (c *Client) giveUp(ctx context.Context, req kmsg.Request, last error) error {
	if last == nil {
		return fmt.Errorf("ctrlrpc: %s: %w", apiName(req.Key()), ctx.Err())
	}
	return fmt.Errorf("ctrlrpc: %s: %w (last failure: %w)", apiName(req.Key()), ctx.Err(), last)
}

// pick chooses the address of the next attempt: the resolved controller
// unless it is the one that just failed, else the next bootstrap address.
func (c *Client) pick(avoid string) (string, error) {
	resolved := c.cfg.Resolve()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return "", ErrClosed
	}
	if resolved != "" && resolved != avoid {
		return resolved, nil
	}
	n := len(c.cfg.Bootstrap)
	for i := 0; i < n; i++ {
		a := c.cfg.Bootstrap[c.next%n]
		c.next++
		if a != avoid || n == 1 {
			return a, nil
		}
	}
	return resolved, nil
}

// attempt sends req once to addr.
func (c *Client) attempt(ctx context.Context, addr string, fmtr *kmsg.RequestFormatter, req kmsg.Request) (kmsg.Response, error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.AttemptTimeout)
	defer cancel()
	cn, err := c.conn(actx, addr)
	if err != nil {
		return nil, err
	}
	resp, err := cn.roundTrip(actx, fmtr, req)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		// The attempt timed out: the connection is suspect (a cut link
		// looks like silence).
		cn.fail(fmt.Errorf("ctrlrpc: %s: no answer within %s", addr, c.cfg.AttemptTimeout))
	}
	return resp, err
}

// conn returns the live connection to addr, dialing one if needed.
func (c *Client) conn(ctx context.Context, addr string) (*clientConn, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if cn, ok := c.conns[addr]; ok && !cn.isDead() {
		c.mu.Unlock()
		return cn, nil
	}
	dm, ok := c.dialing[addr]
	if !ok {
		dm = &sync.Mutex{}
		c.dialing[addr] = dm
	}
	c.mu.Unlock()
	// Concurrent first requests share one dial.
	dm.Lock()
	defer dm.Unlock()
	c.mu.Lock()
	if cn, ok := c.conns[addr]; ok && !cn.isDead() {
		c.mu.Unlock()
		return cn, nil
	}
	c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	nc, err := c.cfg.Dialer(ctx, "tcp", addr)
	if err != nil {
		return nil, &dialError{addr: addr, err: err}
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetWriteDeadline(dl)
	}
	if _, err := nc.Write([]byte{Magic}); err != nil {
		nc.Close()
		return nil, fmt.Errorf("ctrlrpc: %s: %w", addr, err)
	}
	cn := newClientConn(nc)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		cn.fail(ErrClosed)
		return nil, ErrClosed
	}
	c.conns[addr] = cn
	return cn, nil
}

// Close closes every connection; Sends in progress fail.
func (c *Client) Close() {
	c.mu.Lock()
	c.closed = true
	conns := c.conns
	c.conns = map[string]*clientConn{}
	c.mu.Unlock()
	for _, cn := range conns {
		cn.fail(ErrClosed)
	}
}

// clientConn is one controller connection with requests in flight matched
// to answers by correlation id.
type clientConn struct {
	nc  net.Conn
	wmu sync.Mutex

	mu      sync.Mutex
	corr    int32
	pending map[int32]chan []byte
	err     error // set once the connection failed
}

func newClientConn(nc net.Conn) *clientConn {
	cn := &clientConn{nc: nc, pending: map[int32]chan []byte{}}
	go cn.readLoop()
	return cn
}

func (cn *clientConn) isDead() bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.err != nil
}

// fail closes the connection and fails what is in flight.
func (cn *clientConn) fail(err error) {
	cn.mu.Lock()
	if cn.err == nil {
		cn.err = err
	}
	for id, ch := range cn.pending {
		close(ch)
		delete(cn.pending, id)
	}
	cn.mu.Unlock()
	cn.nc.Close()
}

func (cn *clientConn) readLoop() {
	r := bufio.NewReader(cn.nc)
	for {
		frame, err := readFrame(r)
		if err != nil {
			cn.fail(fmt.Errorf("ctrlrpc: connection to %s: %w", cn.nc.RemoteAddr(), err))
			return
		}
		id, body, err := parseResponseID(frame)
		if err != nil {
			cn.fail(err)
			return
		}
		cn.mu.Lock()
		ch, ok := cn.pending[id]
		delete(cn.pending, id)
		cn.mu.Unlock()
		if ok {
			ch <- body // buffered
		}
	}
}

func (cn *clientConn) roundTrip(ctx context.Context, fmtr *kmsg.RequestFormatter, req kmsg.Request) (kmsg.Response, error) {
	ch := make(chan []byte, 1)
	cn.mu.Lock()
	if cn.err != nil {
		err := cn.err
		cn.mu.Unlock()
		return nil, err
	}
	cn.corr++
	id := cn.corr
	cn.pending[id] = ch
	cn.mu.Unlock()
	forget := func() {
		cn.mu.Lock()
		delete(cn.pending, id)
		cn.mu.Unlock()
	}

	frame := fmtr.AppendRequest(nil, req, id)
	cn.wmu.Lock()
	if dl, ok := ctx.Deadline(); ok {
		_ = cn.nc.SetWriteDeadline(dl)
	} else {
		_ = cn.nc.SetWriteDeadline(time.Time{})
	}
	_, err := cn.nc.Write(frame)
	cn.wmu.Unlock()
	if err != nil {
		forget()
		cn.fail(fmt.Errorf("ctrlrpc: write to %s: %w", cn.nc.RemoteAddr(), err))
		return nil, err
	}
	select {
	case body, ok := <-ch:
		if !ok {
			cn.mu.Lock()
			err := cn.err
			cn.mu.Unlock()
			return nil, err
		}
		return kframe.DecodeResponse(req, body)
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}
