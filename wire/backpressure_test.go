package wire

import (
	"encoding/binary"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/wire/tlstest"
)

func bigRequest(respSize, padding int) *kmsg.SASLAuthenticateRequest {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version = 2
	req.SASLAuthBytes = binary.BigEndian.AppendUint32(make([]byte, 0, 4+padding), uint32(respSize))
	req.SASLAuthBytes = append(req.SASLAuthBytes, make([]byte, padding)...)
	return req
}

// A client that pipelines far more than the server buffers and reads
// nothing is stopped by TCP flow control: the server stops reading it,
// handles no more of its requests and holds bounded bytes; once the client
// reads, everything is answered in order.
func TestBackpressureSlowReader(t *testing.T) {
	backpressureSlowReader(t, nil, func(s *Server) *rawClient {
		c := dialRaw(t, s.plaintextAddr())
		if tc, ok := c.Conn.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(64 << 10) // keep the client's own buffering small
		}
		return c
	})
}

// TestBackpressureSlowReaderTLS is the same over an SSL listener: the
// relay of requests to the event loops (tls.go) must pass the pause on,
// and the writer writing into the TLS connection (tls_write.go) must
// count what it holds, not buffer without bound.
func TestBackpressureSlowReaderTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	l := Listener{Name: "PLAINTEXT", Host: "127.0.0.1", SecurityProtocol: SecurityProtocolSSL,
		TLS: tlstest.ServerConfig(ca.Issue(t, "broker"), nil)}
	backpressureSlowReader(t, []Listener{l}, func(s *Server) *rawClient {
		return dialTLSSmallReadBuffer(t, s.plaintextAddr(), ca)
	})
}

func backpressureSlowReader(t *testing.T, listeners []Listener, dial func(*Server) *rawClient) {
	const (
		inflight    = 4
		maxBuffered = 256 << 10
		reqPadding  = 16 << 10
		respSize    = 32 << 10
		n           = 2000 // 32 MiB of requests: more than loopback's socket buffers
	)
	p := newProbe()
	s := newTestServer(t, Config{Listeners: listeners, MaxInflightRequests: inflight, MaxBufferedResponseBytes: maxBuffered}, nil, bigStandIn(p))
	c := dial(s)

	var written atomic.Int64
	writeDone := make(chan error, 1)
	go func() {
		_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		for i := range n {
			b := encodeRequest(int32(i), "slow", bigRequest(respSize, reqPadding))
			if _, err := c.Write(b); err != nil {
				writeDone <- err
				return
			}
			written.Add(int64(len(b)))
		}
		writeDone <- nil
	}()

	// Wait until the client's writes stall and the server handles no
	// more: the server stopped reading. Both, because on a loaded machine
	// a server still working through what it had read (over TLS, the
	// relay's buffer too) leaves the client's writes stuck for a while
	// without being paused.
	var last, handled int64 = -1, -1
	stalled := 0
	for stalled < 10 {
		time.Sleep(50 * time.Millisecond)
		select {
		case err := <-writeDone:
			t.Fatalf("all %d requests were written (err %v) although nothing was read: no backpressure", n, err)
		default:
		}
		if w, h := written.Load(), p.handled.Load(); w == last && h == handled {
			stalled++
		} else {
			last, handled, stalled = w, h, 0
		}
	}
	in, unsent, out := s.bufferedBytes()
	t.Logf("stalled after %d request bytes; %d handled; server holds in=%d unsent=%d out=%d", last, handled, in, unsent, out)
	if handled >= n/2 {
		t.Fatalf("%d of %d requests handled with no response read", handled, n)
	}
	// Input: at most a few of gnet's 64 KiB reads beyond the partial
	// request, far below the megabytes the client pushed.
	if in > 2<<20 {
		t.Fatalf("server buffered %d request bytes while paused", in)
	}
	// Output: the bound plus the responses of the requests in flight.
	if unsent+out > maxBuffered+inflight*(respSize+64) {
		t.Fatalf("server buffered %d response bytes, bound %d", unsent+out, maxBuffered+inflight*(respSize+64))
	}
	time.Sleep(200 * time.Millisecond)
	if h := p.handled.Load(); h != handled {
		t.Fatalf("server kept handling while paused: %d then %d", handled, h)
	}

	// Read everything: reading resumes and every response arrives in order.
	for i := range n {
		b := c.readFrame(20 * time.Second)
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		resp.Version = 2
		corr, err := decodeResp(b, resp)
		if err != nil || corr != int32(i) || len(resp.SASLAuthBytes) != respSize {
			t.Fatalf("response %d: corr %d, %d bytes, err %v", i, corr, len(resp.SASLAuthBytes), err)
		}
	}
	if err := <-writeDone; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if got := p.handled.Load(); got != n {
		t.Fatalf("%d requests handled, want %d", got, n)
	}
}

// The read pause depends on reaching gnet's poller; pin that it works with
// the gnet in go.mod, so an upgrade that breaks it fails here.
func TestReadPauseStopsSocketReads(t *testing.T) {
	if _, ok := pollFD(nil); ok {
		t.Fatal("pollFD(nil) reported a descriptor")
	}
	s := newTestServer(t, Config{}, nil)
	c := dialRaw(t, s.plaintextAddr())
	apiVersionsOnConn(t, c)
	conns := s.listeners[0].snapshot()
	if len(conns) != 1 {
		t.Fatalf("%d connections", len(conns))
	}
	if !readPauseSupported {
		t.Skip("no epoll on this platform: paused connections rely on the buffered-input cap")
	}
	done := make(chan int, 1)
	_ = conns[0].gc.Wake(func(gnet.Conn, error) error {
		done <- conns[0].pollFD
		return nil
	})
	if fd := <-done; fd <= 0 {
		t.Fatalf("pollFD = %d: the read pause cannot reach gnet's poller", fd)
	}
}
