package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// testLogger discards unless WIRE_TEST_LOG is set: gnet and request
// goroutines may log after a test returns, when t.Log would panic.
func testLogger() *slog.Logger {
	if os.Getenv("WIRE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// newTestServer starts a server on 127.0.0.1:0 with the registry plus the
// given stand-in handlers (the test-only registration hook: stand-ins live
// in this server's table only, never in the package registry).
func newTestServer(t *testing.T, cfg Config, metrics Metrics, extra ...api) *Server {
	t.Helper()
	return newTestServerSvc(t, cfg, Services{}, metrics, extra...)
}

// newTestServerSvc is newTestServer with services for the real handlers.
// Released response buffers are scribbled on, so a buffer still in use
// after its release shows up as corrupt data (or a race under -race).
func newTestServerSvc(t *testing.T, cfg Config, svc Services, metrics Metrics, extra ...api) *Server {
	t.Helper()
	if cfg.Listeners == nil {
		cfg.Listeners = []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1"}}
	}
	if cfg.EventLoops == 0 {
		cfg.EventLoops = 2
	}
	s := newServer(cfg, svc, testLogger(), metrics, newAPITable(svc, extra...))
	s.bufs.scribble = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return s
}

func (s *Server) plaintextAddr() string { return s.Addrs()["PLAINTEXT"] }

// bufferedBytes sums, over every connection, the request bytes gnet holds,
// the response bytes not yet taken by gnet and gnet's outbound bytes, as
// the loops last saw them.
func (s *Server) bufferedBytes() (in, unsent, out int64) {
	s.mu.Lock()
	lns := s.listeners
	s.mu.Unlock()
	for _, l := range lns {
		for _, cn := range l.snapshot() {
			in += cn.inbound.Load()
			unsent += cn.unsent.Load()
			out += cn.outbound.Load()
		}
	}
	return in, unsent, out
}

// ---- stand-in handlers -------------------------------------------------

// probe records what the stand-in handlers saw.
type probe struct {
	mu       sync.Mutex
	started  map[string]time.Time
	finished []string
	handled  atomic.Int64
}

func newProbe() *probe { return &probe{started: map[string]time.Time{}} }

func (p *probe) start(name string) {
	p.mu.Lock()
	p.started[name] = time.Now()
	p.mu.Unlock()
}

func (p *probe) finish(name string) {
	p.mu.Lock()
	p.finished = append(p.finished, name)
	p.mu.Unlock()
}

func (p *probe) startedAt(name string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.started[name]
	return at, ok
}

func (p *probe) finishOrder() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.finished...)
}

// heartbeatStandIn answers Heartbeat (key 12) by what the group id says:
// "sleep:<duration>[:unmute]:<name>", "fail", "noresp", or anything else
// for an immediate answer. Each request is recorded under its member id.
func heartbeatStandIn(p *probe) api {
	return api{key: 12, min: 0, max: 4, handle: func(_ *Server, ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		req := kreq.(*kmsg.HeartbeatRequest)
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		p.handled.Add(1)
		p.start(req.MemberID)
		defer p.finish(req.MemberID)
		parts := strings.Split(req.Group, ":")
		switch parts[0] {
		case "fail":
			return nil, errors.New("stand-in failure")
		case "noresp":
			return nil, nil
		case "sleep":
			if err := standInSleep(ctx, parts); err != nil {
				return nil, err
			}
		}
		return resp, nil
	}}
}

// standInSleep carries out a stand-in's "sleep:<duration>[:unmute]"
// instruction, split on ':': Unmute first if asked, then sleep unless the
// connection closes.
func standInSleep(ctx context.Context, parts []string) error {
	d, err := time.ParseDuration(parts[1])
	if err != nil {
		return err
	}
	if len(parts) > 2 && parts[2] == "unmute" {
		Unmute(ctx)
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// bigStandIn answers SaslAuthenticate (key 36) with SASLAuthBytes as long
// as the big-endian uint32 at the start of the request's SASLAuthBytes.
func bigStandIn(p *probe) api {
	return api{key: 36, min: 0, max: 2, handle: func(_ *Server, _ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		req := kreq.(*kmsg.SASLAuthenticateRequest)
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		p.handled.Add(1)
		if len(req.SASLAuthBytes) < 4 {
			return nil, errors.New("short request")
		}
		resp.SASLAuthBytes = make([]byte, binary.BigEndian.Uint32(req.SASLAuthBytes))
		return resp, nil
	}}
}

// metadataStandIn answers Metadata (key 3) with this broker as node 1, so
// kadm can find the broker.
func metadataStandIn() api {
	return api{key: 3, min: 0, max: 12, handle: func(s *Server, _ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		req := kreq.(*kmsg.MetadataRequest)
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		host, portStr, err := net.SplitHostPort(s.plaintextAddr())
		if err != nil {
			return nil, err
		}
		port, _ := strconv.Atoi(portStr)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = 1, host, int32(port)
		resp.Brokers = append(resp.Brokers, b)
		resp.ControllerID = 1
		return resp, nil
	}}
}

// ---- raw client -------------------------------------------------------

type rawClient struct {
	t *testing.T
	net.Conn
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, Conn: c}
}

// encodeRequest frames req as a client does: size, header v1 (v2 with
// tagged fields when flexible), body.
func encodeRequest(corr int32, clientID string, req kmsg.Request) []byte {
	buf := make([]byte, 4, 64)
	buf = binary.BigEndian.AppendUint16(buf, uint16(req.Key()))
	buf = binary.BigEndian.AppendUint16(buf, uint16(req.GetVersion()))
	buf = binary.BigEndian.AppendUint32(buf, uint32(corr))
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(clientID)))
	buf = append(buf, clientID...)
	if req.IsFlexible() {
		buf = append(buf, 0)
	}
	buf = req.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	return buf
}

func (c *rawClient) write(b []byte) {
	c.t.Helper()
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *rawClient) send(corr int32, req kmsg.Request) { c.write(encodeRequest(corr, "raw", req)) }

// readFrame reads one response frame, failing the test on timeout.
func (c *rawClient) readFrame(timeout time.Duration) []byte {
	c.t.Helper()
	b, err := c.tryReadFrame(timeout)
	if err != nil {
		c.t.Fatalf("read response: %v", err)
	}
	return b
}

func (c *rawClient) tryReadFrame(timeout time.Duration) ([]byte, error) {
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, b); err != nil {
		return nil, err
	}
	return b, nil
}

// readResp reads one response into resp (whose version must be set) and
// returns its correlation id. The header is v1 for flexible responses
// except ApiVersions.
func (c *rawClient) readResp(resp kmsg.Response) int32 {
	c.t.Helper()
	b := c.readFrame(5 * time.Second)
	corr, err := decodeResp(b, resp)
	if err != nil {
		c.t.Fatalf("decode %s v%d: %v", kmsg.NameForKey(resp.Key()), resp.GetVersion(), err)
	}
	return corr
}

func decodeResp(b []byte, resp kmsg.Response) (int32, error) {
	if len(b) < 4 {
		return 0, fmt.Errorf("short response: %d bytes", len(b))
	}
	corr := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	if resp.IsFlexible() && resp.Key() != 18 {
		if len(b) < 1 || b[0] != 0 {
			return corr, fmt.Errorf("missing empty header tags")
		}
		b = b[1:]
	}
	return corr, resp.ReadFrom(b)
}

// expectClosed fails unless the server closes the connection (EOF or
// reset) within timeout, ignoring nothing: any bytes are a failure.
func (c *rawClient) expectClosed(timeout time.Duration) {
	c.t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	var b [1]byte
	n, err := c.Read(b[:])
	if n > 0 {
		c.t.Fatalf("expected the connection closed, read a byte %#x", b[0])
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("expected the connection closed within %v, it is still open", timeout)
	}
	if err == nil {
		c.t.Fatal("expected the connection closed")
	}
}

// apiVersionsOK checks the server still answers a fresh client.
func apiVersionsOK(t *testing.T, addr string) {
	t.Helper()
	c := dialRaw(t, addr)
	defer c.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1.0"
	c.send(7, req)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if corr := c.readResp(resp); corr != 7 || resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("ApiVersions on a fresh connection: corr %d, error %d, %d keys", corr, resp.ErrorCode, len(resp.ApiKeys))
	}
}

func heartbeat(group, name string) *kmsg.HeartbeatRequest {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.MemberID = group, name
	return req
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
