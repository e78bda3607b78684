// Package kclient is a blocking Kafka client connection: one request at
// a time, written and answered on the caller's goroutine (Kafka's
// BlockingSend, NetworkClientUtils.sendAndReceive, which its replica
// fetcher threads use). A follower sends a fetch and waits for its answer
// before the next one anyway, so a multiplexing client's goroutines
// (kgo's writer and reader per connection, and the hand-offs between
// them and the caller) are pure cost on the replication path: each round
// trip paid three goroutine wake-ups for nothing.
package kclient

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/strait-io/strait/raftmeta/kframe"
)

// DefaultMaxResponseBytes bounds a response frame before it is allocated
// (kgo's BrokerMaxReadBytes default).
const DefaultMaxResponseBytes = 100 << 20

// ErrClosed is returned by Request after Close.
var ErrClosed = errors.New("kclient: connection closed")

// errFrame marks an answer that cannot be parsed: the connection is
// dropped. It is kframe's, which reads the frames.
var errFrame = kframe.ErrFrame

// Dialer opens a connection (net.Dialer.DialContext's shape).
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// Config configures a Conn.
type Config struct {
	// Addr is the broker's host:port.
	Addr string
	// ClientID goes in every request header.
	ClientID string
	// Dialer opens the connection (nil: a net.Dialer).
	Dialer Dialer
	// Timeout bounds a dial and a request, beyond a Fetch's own
	// MaxWaitMillis (the replica's replica.socket.timeout.ms; kgo's
	// RequestTimeoutOverhead). Default 30s.
	Timeout time.Duration
	// MaxResponseBytes bounds an answer (default DefaultMaxResponseBytes).
	MaxResponseBytes int32
	// ReuseResponseBuffer reads each answer into the buffer the previous
	// one was read into, when it fits, instead of a new one. The byte
	// slices of an answer (a Fetch's records) then alias a buffer the
	// next Request overwrites, so set it only when the caller is done
	// with each answer before sending the next request, as a follower's
	// fetcher is: it appends the records to its log (a copy into the
	// page cache) and then fetches again. On that path a new buffer per
	// answer was allocated and zeroed for every round trip and drove
	// most of the follower's garbage collections.
	ReuseResponseBuffer bool
	// SASL, when set, logs in with this franz-go mechanism on every new
	// connection (sasl.go), and re-authenticates when the broker gives
	// the session a lifetime (KIP-368).
	SASL sasl.Mechanism
}

// maxReusedResponseBuffer is the largest buffer a Conn keeps between
// answers. Steady-state replication answers are tens of KiB; a catch-up's
// are up to replica.fetch.response.max.bytes, and those are few and big
// enough that allocating each costs little next to its copy, while
// keeping one would pin megabytes on every idle connection.
const maxReusedResponseBuffer = 1 << 20

// Conn is a connection to one broker, dialed on first use and again after
// any failure; requests are negotiated down to the versions the broker
// advertises in ApiVersions, as every Kafka client does. Request and
// Close may be called from different goroutines; Requests run one at a
// time.
type Conn struct {
	cfg  Config
	fmtr *kmsg.RequestFormatter

	reqMu    sync.Mutex // one request at a time
	r        *bufio.Reader
	versions map[int16][2]int16 // key → min, max the broker serves
	corr     int32
	wbuf     []byte    // the request being written, reused: Write returns only when done with it
	rbuf     []byte    // the last answer's buffer; only set with Config.ReuseResponseBuffer
	reauthAt time.Time // when the SASL session must be renewed; zero: never (sasl.go)

	mu     sync.Mutex // nc and closed, for Close
	nc     net.Conn
	closed bool
}

// New returns a connection to cfg.Addr; it dials on first use.
func New(cfg Config) *Conn {
	if cfg.Dialer == nil {
		var d net.Dialer
		cfg.Dialer = d.DialContext
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return &Conn{cfg: cfg, fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID(cfg.ClientID))}
}

// Close closes the connection; a request under way fails and later ones
// return ErrClosed.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.nc != nil {
		_ = c.nc.Close()
	}
	return nil
}

// Request sends req at the highest version both sides serve (never above
// the one req is set to) and returns the answer. Any failure other than an
// unsupported version drops the connection; the next request dials again.
func (c *Conn) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	c.reqMu.Lock()
	defer c.reqMu.Unlock()
	nc, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	if c.cfg.SASL != nil && c.reauthDue() {
		if err := c.authenticate(ctx, nc); err != nil {
			c.drop(nc)
			return nil, fmt.Errorf("kclient: re-authenticating to %s: %w", c.cfg.Addr, err)
		}
	}
	if err := c.negotiate(req); err != nil {
		return nil, err
	}
	timeout := c.cfg.Timeout
	if f, ok := req.(*kmsg.FetchRequest); ok && f.MaxWaitMillis > 0 {
		timeout += time.Duration(f.MaxWaitMillis) * time.Millisecond
	}
	resp, err := c.roundTrip(ctx, nc, req, timeout)
	if err != nil {
		c.drop(nc)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("kclient: %s to %s: %w", kmsg.NameForKey(req.Key()), c.cfg.Addr, ctx.Err())
		}
		return nil, fmt.Errorf("kclient: %s to %s: %w", kmsg.NameForKey(req.Key()), c.cfg.Addr, err)
	}
	return resp, nil
}

// connect returns the live connection, dialing and negotiating versions
// when there is none. reqMu is held.
func (c *Conn) connect(ctx context.Context) (net.Conn, error) {
	c.mu.Lock()
	nc, closed := c.nc, c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if nc != nil {
		return nc, nil
	}
	dctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	nc, err := c.cfg.Dialer(dctx, "tcp", c.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("kclient: dial %s: %w", c.cfg.Addr, err)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = nc.Close()
		return nil, ErrClosed
	}
	c.nc = nc
	c.mu.Unlock()
	c.r = bufio.NewReaderSize(nc, 64<<10)
	if err := c.fetchVersions(ctx, nc); err != nil {
		c.drop(nc)
		return nil, fmt.Errorf("kclient: ApiVersions to %s: %w", c.cfg.Addr, err)
	}
	if c.cfg.SASL != nil {
		if err := c.authenticate(ctx, nc); err != nil {
			c.drop(nc)
			return nil, fmt.Errorf("kclient: authenticating to %s: %w", c.cfg.Addr, err)
		}
	}
	return nc, nil
}

// fetchVersions asks the broker which versions it serves: ApiVersions v3,
// or v0 when the broker answers UNSUPPORTED_VERSION (KIP-511).
func (c *Conn) fetchVersions(ctx context.Context, nc net.Conn) error {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "strait", "1"
	for {
		kresp, err := c.roundTrip(ctx, nc, req, c.cfg.Timeout)
		if err != nil {
			return err
		}
		resp := kresp.(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode == kerr.UnsupportedVersion.Code && req.Version > 0 {
			req.Version = 0
			continue
		}
		if resp.ErrorCode != 0 {
			return kerr.ErrorForCode(resp.ErrorCode)
		}
		c.versions = make(map[int16][2]int16, len(resp.ApiKeys))
		for _, k := range resp.ApiKeys {
			c.versions[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
		}
		return nil
	}
}

// negotiate lowers req's version to the broker's highest.
func (c *Conn) negotiate(req kmsg.Request) error {
	v, ok := c.versions[req.Key()]
	if !ok || req.GetVersion() < v[0] {
		return fmt.Errorf("kclient: %s v%d to %s: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), c.cfg.Addr, kerr.UnsupportedVersion)
	}
	req.SetVersion(min(req.GetVersion(), v[1]))
	return nil
}

// roundTrip writes req and reads its answer within timeout; ctx ending
// cuts the wait short.
func (c *Conn) roundTrip(ctx context.Context, nc net.Conn, req kmsg.Request, timeout time.Duration) (kmsg.Response, error) {
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := nc.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if ctx.Err() != nil { // AfterFunc may have run before the deadline was set
		return nil, ctx.Err()
	}
	c.corr++
	corr := c.corr
	c.wbuf = c.fmtr.AppendRequest(c.wbuf[:0], req, corr)
	if _, err := nc.Write(c.wbuf); err != nil {
		return nil, err
	}
	frame, err := kframe.ReadFrameInto(c.r, c.cfg.MaxResponseBytes, c.rbuf) // rbuf is nil unless reused
	if err != nil {
		return nil, err
	}
	if c.cfg.ReuseResponseBuffer && cap(frame) <= maxReusedResponseBuffer {
		c.rbuf = frame
	}
	if len(frame) < 4 {
		return nil, fmt.Errorf("%w: %d byte answer", errFrame, len(frame))
	}
	if got := int32(binary.BigEndian.Uint32(frame)); got != corr {
		return nil, fmt.Errorf("%w: correlation id %d, want %d", errFrame, got, corr)
	}
	return kframe.DecodeResponse(req, frame[4:])
}

// drop closes nc, if it is still the connection, so the next request
// dials again.
func (c *Conn) drop(nc net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nc == nc {
		c.nc = nil
	}
	_ = nc.Close()
}
