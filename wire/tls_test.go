package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/wire/tlstest"
)

// newTLSServer serves one SSL listener requiring client certificates
// issued by ca.
func newTLSServer(t *testing.T, ca *tlstest.CA, m Metrics) *Server {
	t.Helper()
	return newTLSServerLimits(t, ca, m, nil)
}

func newTLSServerLimits(t *testing.T, ca *tlstest.CA, m Metrics, lim *ConnectionLimits) *Server {
	t.Helper()
	srvCfg := tlstest.ServerConfig(ca.Issue(t, "broker"), ca.Pool())
	return newTestServer(t, Config{
		Listeners:           []Listener{{Name: "SSL", Host: "127.0.0.1", SecurityProtocol: SecurityProtocolSSL, TLS: srvCfg}},
		SSLHandshakeTimeout: 500 * time.Millisecond,
		Limits:              lim,
	}, m)
}

// dialTLS connects a raw client over TLS; the handshake error, if any,
// shows on the first read under TLS 1.3 (the server checks the client's
// certificate after the client has finished).
func dialTLS(t *testing.T, addr string, cfg *tls.Config) *rawClient {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Fatalf("TLS dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, Conn: c}
}

func apiVersionsReq() *kmsg.ApiVersionsRequest {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1.0"
	return req
}

// TestTLSListenerServesInOrder: a client with a trusted certificate gets
// its pipelined requests answered in order over TLS.
func TestTLSListenerServesInOrder(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	s := newTLSServer(t, ca, nil)
	c := dialTLS(t, s.Addrs()["SSL"], tlstest.ClientConfig(ca, ca.Issue(t, "client")))
	const n = 50
	for i := range n {
		c.send(int32(i), apiVersionsReq())
	}
	for i := range n {
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = 3
		if corr := c.readResp(resp); corr != int32(i) || resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
			t.Fatalf("response %d: corr %d error %d keys %d", i, corr, resp.ErrorCode, len(resp.ApiKeys))
		}
	}
}

// TestTLSListenerRefusesBadClients: no client certificate, a certificate
// from another CA, a plaintext Kafka request, garbage and a client that
// never starts the handshake are each closed and counted; the listener
// keeps serving a trusted client.
func TestTLSListenerRefusesBadClients(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	m := newListenerCounts()
	s := newTLSServer(t, ca, m)
	addr := s.Addrs()["SSL"]

	refusedTLS := func(name string, cfg *tls.Config) {
		t.Helper()
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
		if err != nil {
			return // refused in the handshake (TLS 1.2)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(encodeRequest(1, "raw", apiVersionsReq())); err == nil {
			var b [1]byte
			if _, err = c.Read(b[:]); err == nil {
				t.Fatalf("%s: the server answered", name)
			}
		}
	}
	refusedTLS("no client certificate", tlstest.ClientConfig(ca, nil))
	other := tlstest.NewCA(t, "other")
	refusedTLS("untrusted client certificate", tlstest.ClientConfig(ca, other.Issue(t, "mallory")))

	plain := dialRaw(t, addr)
	plain.send(1, apiVersionsReq())
	expectAlertAndClose(t, plain)

	garbage := dialRaw(t, addr)
	garbage.write([]byte("\x16\x03\x01\xff\xffthis is not a ClientHello at all"))
	expectAlertAndClose(t, garbage)

	silent := dialRaw(t, addr)
	silent.expectClosed(5 * time.Second) // SSLHandshakeTimeout

	waitFor(t, 5*time.Second, "5 handshake rejections counted", func() bool {
		return m.rejections("SSL/"+RejectedSSLHandshake) == 5
	})
	c := dialTLS(t, addr, tlstest.ClientConfig(ca, ca.Issue(t, "client")))
	c.send(9, apiVersionsReq())
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	if corr := c.readResp(resp); corr != 9 || resp.ErrorCode != 0 {
		t.Fatalf("trusted client after the bad ones: corr %d error %d", corr, resp.ErrorCode)
	}
}

// expectAlertAndClose: the server answers with at most a TLS alert record
// (content type 21) and closes.
func expectAlertAndClose(t *testing.T, c *rawClient) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection is still open after 5s (read %x)", b)
	}
	if len(b) > 0 && b[0] != 0x15 {
		t.Fatalf("expected nothing or a TLS alert, read %x", b)
	}
}

// TestTLSListenerConfigRefused: an SSL listener without TLS material, and
// SASL listeners, do not start.
func TestTLSListenerConfigRefused(t *testing.T) {
	for _, l := range []Listener{
		{Name: "SSL", Host: "127.0.0.1", SecurityProtocol: SecurityProtocolSSL},
		{Name: "SASL", Host: "127.0.0.1", SecurityProtocol: "SASL_SSL", TLS: &tls.Config{}},
		{Name: "PLAIN", Host: "127.0.0.1", TLS: &tls.Config{}},
	} {
		if err := (Config{Listeners: []Listener{l}}).withDefaults().validate(); err == nil {
			t.Errorf("listener %+v: no error", l)
		}
	}
}

// TestTLSListenerConnectionLimits: max.connections.per.ip counts TLS
// connections as it counts plaintext ones: a second connection from the
// address is closed before any handshake, and the slot comes back when
// a handshake fails and when a served connection closes.
func TestTLSListenerConnectionLimits(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	m := newListenerCounts()
	s := newTLSServerLimits(t, ca, m, &ConnectionLimits{MaxConnections: unlimited, MaxConnectionsPerIP: 1})
	addr := s.Addrs()["SSL"]
	good := tlstest.ClientConfig(ca, ca.Issue(t, "client"))
	roundTrip := func(c *rawClient, corr int32) {
		t.Helper()
		c.send(corr, apiVersionsReq())
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = 3
		if got := c.readResp(resp); got != corr || resp.ErrorCode != 0 {
			t.Fatalf("corr %d error %d", got, resp.ErrorCode)
		}
	}

	// A failed handshake gives its slot back.
	garbage := dialRaw(t, addr)
	garbage.write([]byte("GET / HTTP/1.1\r\n\r\n"))
	expectAlertAndClose(t, garbage)
	var first *rawClient
	waitFor(t, 5*time.Second, "a TLS connection after the failed handshake", func() bool {
		c, err := tls.Dial("tcp", addr, good)
		if err != nil {
			return false
		}
		first = &rawClient{t: t, Conn: c}
		t.Cleanup(func() { c.Close() })
		return true
	})
	roundTrip(first, 1)

	// The address holds its one connection: the next is closed as it
	// arrives, before a handshake. (The wait above may itself have been
	// refused while the failed handshake's slot was still held: count
	// from here.)
	before := m.rejections("SSL/" + RejectedPerIP)
	second := dialRaw(t, addr)
	second.expectClosed(5 * time.Second)
	if n := m.rejections("SSL/"+RejectedPerIP) - before; n != 1 {
		t.Fatalf("%d per-IP rejections, want 1", n)
	}

	// Closing the served connection frees the slot.
	first.Close()
	waitFor(t, 5*time.Second, "a TLS connection once the first closed", func() bool {
		c, err := tls.Dial("tcp", addr, good)
		if err != nil {
			return false
		}
		defer c.Close()
		roundTrip(&rawClient{t: t, Conn: c}, 2)
		return true
	})
}

// TestTLSListenerPrincipal: a request on an SSL listener carries the
// client certificate's subject as its principal (Kafka's
// DefaultKafkaPrincipalBuilder: User:<RFC 2253 DN>) and the client's TCP
// address, not the relay's socket.
func TestTLSListenerPrincipal(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	got := make(chan reqctx.Info, 1)
	probeAPI := api{key: 12, min: 0, max: 4, handle: func(_ *Server, ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		got <- reqctx.From(ctx)
		return kreq.(*kmsg.HeartbeatRequest).ResponseKind(), nil
	}}
	srvCfg := tlstest.ServerConfig(ca.Issue(t, "broker"), ca.Pool())
	s := newTestServer(t, Config{Listeners: []Listener{{Name: "SSL", Host: "127.0.0.1", SecurityProtocol: SecurityProtocolSSL, TLS: srvCfg}}}, nil, probeAPI)
	c := dialTLS(t, s.Addrs()["SSL"], tlstest.ClientConfig(ca, ca.Issue(t, "alice")))
	c.send(1, heartbeat("g", "m"))
	select {
	case info := <-got:
		if want := "User:CN=alice,O=Strait tests"; info.Principal != want || info.ClientHost != "127.0.0.1" || info.Listener != "SSL" {
			t.Fatalf("principal %q client %q listener %q, want %q from 127.0.0.1 on SSL", info.Principal, info.ClientHost, info.Listener, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request never reached the handler")
	}
}

// TestTLSListenerIdleClose: connections.max.idle.ms closes an idle TLS
// connection: the event loop closes its end of the relay and the client
// sees the TLS connection end.
func TestTLSListenerIdleClose(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	srvCfg := tlstest.ServerConfig(ca.Issue(t, "broker"), nil)
	s := newTestServer(t, Config{
		Listeners:          []Listener{{Name: "SSL", Host: "127.0.0.1", SecurityProtocol: SecurityProtocolSSL, TLS: srvCfg}},
		ConnectionsMaxIdle: 200 * time.Millisecond,
	}, nil)
	c := dialTLS(t, s.Addrs()["SSL"], tlstest.ClientConfig(ca, nil))
	c.send(1, apiVersionsReq())
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	c.readResp(resp)
	c.expectClosed(5 * time.Second)
}
