package wire

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/wire/tlstest"
)

// newTLSWriteServer serves one SSL listener (no client certificates) with
// the big stand-in, and dials a raw TLS client whose receive buffer is
// small, so a client that does not read stalls the server's writes soon.
func newTLSWriteServer(t *testing.T, cfg Config) (*Server, *probe, *rawClient) {
	t.Helper()
	ca := tlstest.NewCA(t, "ca")
	cfg.Listeners = []Listener{{Name: "SSL", Host: "127.0.0.1", SecurityProtocol: SecurityProtocolSSL,
		TLS: tlstest.ServerConfig(ca.Issue(t, "broker"), nil)}}
	p := newProbe()
	s := newTestServer(t, cfg, nil, bigStandIn(p))
	return s, p, dialTLSSmallReadBuffer(t, s.Addrs()["SSL"], ca)
}

// dialTLSSmallReadBuffer connects a raw TLS client trusting ca whose
// receive buffer is small, to keep the client's own buffering small.
func dialTLSSmallReadBuffer(t *testing.T, addr string, ca *tlstest.CA) *rawClient {
	t.Helper()
	raw, err := (&net.Dialer{Timeout: 5 * time.Second}).Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = raw.(*net.TCPConn).SetReadBuffer(64 << 10)
	cfg := tlstest.ClientConfig(ca, nil)
	cfg.ServerName = "127.0.0.1"
	c := tls.Client(raw, cfg)
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, Conn: c}
}

// TestTLSSlowReaderLargeResponses: fetch-sized responses pipelined with
// small ones to a TLS client that does not read. The responses go
// straight into the TLS connection, not into gnet's outbound buffer (which
// grew the broker's memory with the data read, issue 25): gnet holds
// nothing, the bytes the writer holds stay within the in-flight and
// buffered-bytes bounds, the connection stops reading requests, and once
// the client reads every response arrives whole and in order, after which
// every pooled buffer is back.
func TestTLSSlowReaderLargeResponses(t *testing.T) {
	const (
		inflight    = 4
		maxBuffered = 1 << 20
		large       = 3 << 20 // beyond loopback's socket buffers with a few in line
		n           = 24
	)
	s, p, c := newTLSWriteServer(t, Config{MaxInflightRequests: inflight, MaxBufferedResponseBytes: maxBuffered})
	sizeOf := func(i int) int {
		if i%2 == 0 {
			return large
		}
		return 100 + i
	}
	for i := range n {
		c.send(int32(i), bigRequest(sizeOf(i), 0))
	}

	// Wait until the server stops handling: the writer is blocked on the
	// client, and the loop paused reading.
	var handled int64 = -1
	for stable := 0; stable < 10; time.Sleep(50 * time.Millisecond) {
		if h := p.handled.Load(); h == handled {
			stable++
		} else {
			handled, stable = h, 0
		}
	}
	in, unsent, out := s.bufferedBytes()
	t.Logf("stalled: %d handled; server holds in=%d unsent=%d out=%d; pool outstanding %d", handled, in, unsent, out, s.bufs.outstanding())
	if handled >= n {
		t.Fatalf("all %d requests handled with no response read: no backpressure", n)
	}
	if out != 0 {
		t.Fatalf("gnet's outbound buffer holds %d bytes of TLS responses; the writer should write them into the TLS connection", out)
	}
	if unsent == 0 {
		t.Fatalf("nothing counted unsent while the writer is blocked: the loop would keep reading")
	}
	if bound := int64(maxBuffered + inflight*(large+64)); unsent > bound {
		t.Fatalf("server holds %d unsent response bytes, bound %d", unsent, bound)
	}
	// The buffers out of the pool: the responses handled and not yet
	// written, at most those in flight, and one being gathered.
	if o := s.bufs.outstanding(); o > inflight+2 {
		t.Fatalf("%d pooled buffers outstanding while stalled, want at most %d", o, inflight+2)
	}

	for i := range n {
		b := c.readFrame(20 * time.Second)
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		resp.Version = 2
		corr, err := decodeResp(b, resp)
		if err != nil || corr != int32(i) || len(resp.SASLAuthBytes) != sizeOf(i) {
			t.Fatalf("response %d: corr %d, %d bytes (want %d), err %v", i, corr, len(resp.SASLAuthBytes), sizeOf(i), err)
		}
	}
	waitFor(t, 5*time.Second, "every pooled buffer back", func() bool { return s.bufs.outstanding() == 0 })
}

// TestTLSStuckReaderAborted: a TLS client that asks for a large response
// and never reads does not hold the writer for good. The write makes no
// progress for connections.max.idle.ms, as the lent socket's stall limit
// (sendfile.go), so the connection is aborted and counted, the response
// is cut short and the buffers go back; a client that closes ends a
// blocked write at once, whatever the limit.
func TestTLSStuckReaderAborted(t *testing.T) {
	const large = 16 << 20 // far beyond loopback's socket buffers

	t.Run("deadline", func(t *testing.T) {
		s, _, c := newTLSWriteServer(t, Config{ConnectionsMaxIdle: 300 * time.Millisecond})
		c.send(1, bigRequest(large, 0))
		waitFor(t, 20*time.Second, "the stuck write aborted and counted", func() bool { return s.stalledWrites.Load() == 1 })
		waitClosedAndReleased(t, s)
		// The client finds the response cut short.
		if b, err := c.tryReadFrame(10 * time.Second); err == nil {
			t.Fatalf("read a whole %d-byte response from an aborted connection", len(b))
		}
	})

	t.Run("client closes", func(t *testing.T) {
		s, _, c := newTLSWriteServer(t, Config{ConnectionsMaxIdle: time.Hour})
		c.send(1, bigRequest(large, 0))
		waitFor(t, 20*time.Second, "the response being written", func() bool { _, unsent, _ := s.bufferedBytes(); return unsent > 0 })
		time.Sleep(200 * time.Millisecond) // the write blocks on the full socket
		_ = c.Close()
		waitClosedAndReleased(t, s)
		if n := s.stalledWrites.Load(); n != 0 {
			t.Fatalf("a client's close counted as %d stalled writes", n)
		}
	})
}

// waitClosedAndReleased waits until s has no connection, no unsent bytes
// and every pooled buffer back.
func waitClosedAndReleased(t *testing.T, s *Server) {
	t.Helper()
	waitFor(t, 10*time.Second, "the connection closed and its buffers back", func() bool {
		_, unsent, _ := s.bufferedBytes()
		return connCount(s) == 0 && unsent == 0 && s.bufs.outstanding() == 0
	})
}

func connCount(s *Server) int {
	s.mu.Lock()
	lns := s.listeners
	s.mu.Unlock()
	n := 0
	for _, l := range lns {
		n += len(l.snapshot())
	}
	return n
}

// TestTLSShutdownWaitsForDirectWrite: a graceful shutdown waits for a
// response being written into the TLS connection (its bytes count as
// unsent until the client has taken them), so a slow client still gets
// all of it before the connection closes.
func TestTLSShutdownWaitsForDirectWrite(t *testing.T) {
	const large = 8 << 20
	s, p, c := newTLSWriteServer(t, Config{})
	c.send(1, bigRequest(large, 0))
	waitFor(t, 20*time.Second, "the request handled", func() bool { return p.handled.Load() == 1 })
	time.Sleep(300 * time.Millisecond) // the write blocks on the full socket

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) while a response was still being written", err)
	default:
	}
	b := c.readFrame(20 * time.Second)
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = 2
	if corr, err := decodeResp(b, resp); err != nil || corr != 1 || len(resp.SASLAuthBytes) != large {
		t.Fatalf("response: corr %d, %d bytes, err %v", corr, len(resp.SASLAuthBytes), err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	c.expectClosed(5 * time.Second)
}
