package wire

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// noLimits is ConnectionLimits at Kafka's defaults, to change one field.
func noLimits() *ConnectionLimits {
	return &ConnectionLimits{MaxConnections: unlimited, MaxConnectionsPerIP: unlimited}
}

// dialFrom connects from a given loopback address (127.0.0.0/8 is all
// local on Linux), so tests can play several client addresses.
func dialFrom(t *testing.T, from, addr string) *rawClient {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, from, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, Conn: c}
}

// answered sends ApiVersions and reports whether the answer comes within
// wait.
func answered(c *rawClient, corr int32, wait time.Duration) bool {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1"
	c.send(corr, req)
	_, err := c.tryReadFrame(wait)
	return err == nil
}

// max.connections.per.ip and its overrides close a connection from an
// address at its maximum as it arrives, count it, and leave the other
// addresses alone; a connection closing makes room again.
func TestMaxConnectionsPerIP(t *testing.T) {
	m := newListenerCounts()
	lim := noLimits()
	lim.MaxConnectionsPerIP = 2
	lim.MaxConnectionsPerIPOverrides = map[netip.Addr]int{netip.MustParseAddr("127.0.0.3"): 3}
	s := newTestServer(t, Config{Limits: lim}, m)
	addr := s.Addrs()["PLAINTEXT"]

	a1, a2 := dialFrom(t, "127.0.0.2", addr), dialFrom(t, "127.0.0.2", addr)
	apiVersionsOnConn(t, a1)
	apiVersionsOnConn(t, a2)
	dialFrom(t, "127.0.0.2", addr).expectClosed(5 * time.Second)

	for range 3 {
		apiVersionsOnConn(t, dialFrom(t, "127.0.0.3", addr))
	}
	dialFrom(t, "127.0.0.3", addr).expectClosed(5 * time.Second)
	apiVersionsOnConn(t, dialFrom(t, "127.0.0.4", addr))

	if got := m.rejections("PLAINTEXT/" + RejectedPerIP); got != 2 {
		t.Fatalf("rejections counted %d, want 2", got)
	}
	a1.Close()
	waitFor(t, 5*time.Second, "the closed connection to be forgotten", func() bool {
		return s.quotas.connections() == 5
	})
	apiVersionsOnConn(t, dialFrom(t, "127.0.0.2", addr))
}

// max.connections makes the acceptor wait: the connection past it is
// not served until another closes, and the wait is measured.
func TestMaxConnectionsBlocksAcceptor(t *testing.T) {
	m := newListenerCounts()
	lim := noLimits()
	lim.MaxConnections = 2
	s := newTestServer(t, Config{Limits: lim}, m)
	addr := s.Addrs()["PLAINTEXT"]

	c1, c2 := dialRaw(t, addr), dialRaw(t, addr)
	apiVersionsOnConn(t, c1)
	apiVersionsOnConn(t, c2)
	c3 := dialRaw(t, addr) // completed by the kernel; not accepted
	if answered(c3, 1, 300*time.Millisecond) {
		t.Fatal("a connection past max.connections was served")
	}
	c1.Close()
	if _, err := c3.tryReadFrame(5 * time.Second); err != nil {
		t.Fatalf("the waiting connection was not served once one closed: %v", err)
	}
	if m.blockedFor("PLAINTEXT") <= 0 {
		t.Fatal("the acceptor's wait was not recorded")
	}
}

// listener.name.<l>.max.connections limits one listener's connections
// and leaves the other listener serving.
func TestListenerMaxConnections(t *testing.T) {
	lim := noLimits()
	lim.ListenerMaxConnections = map[string]int{"A": 1}
	s := newTestServer(t, Config{Limits: lim, Listeners: []Listener{
		{Name: "A", Host: "127.0.0.1"}, {Name: "B", Host: "127.0.0.1"},
	}}, nil)
	addrs := s.Addrs()
	apiVersionsOnConn(t, dialRaw(t, addrs["A"]))
	if answered(dialRaw(t, addrs["A"]), 1, 300*time.Millisecond) {
		t.Fatal("listener A served a connection past its max.connections")
	}
	for range 3 {
		apiVersionsOnConn(t, dialRaw(t, addrs["B"]))
	}
}

// With max.connections reached by clients, the inter-broker listener
// still accepts, and a client listener closes its least recently active
// connection to make room (Kafka's protected listener).
func TestInterBrokerListenerIsProtected(t *testing.T) {
	lim := noLimits()
	lim.MaxConnections = 2
	lim.InterBrokerListener = "INTERNAL"
	s := newTestServer(t, Config{Limits: lim, Listeners: []Listener{
		{Name: "CLIENT", Host: "127.0.0.1"}, {Name: "INTERNAL", Host: "127.0.0.1"},
	}}, nil)
	addrs := s.Addrs()
	older, newer := dialRaw(t, addrs["CLIENT"]), dialRaw(t, addrs["CLIENT"])
	apiVersionsOnConn(t, older)
	time.Sleep(20 * time.Millisecond) // lastActive has nanoseconds, but be plain about which is older
	apiVersionsOnConn(t, newer)

	apiVersionsOnConn(t, dialRaw(t, addrs["INTERNAL"]))
	older.expectClosed(5 * time.Second)
	apiVersionsOnConn(t, newer)
	if n := s.quotas.connections(); n != 2 {
		t.Fatalf("%d connections counted, want 2", n)
	}
}

// Shutdown is not held up by an acceptor waiting for a connection slot.
func TestShutdownWhileAcceptorWaits(t *testing.T) {
	lim := noLimits()
	lim.MaxConnections = 1
	s := newServer(Config{Limits: lim, Listeners: []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1"}}, EventLoops: 1},
		Services{}, testLogger(), nil, newAPITable(Services{}))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr := s.Addrs()["PLAINTEXT"]
	apiVersionsOnConn(t, dialRaw(t, addr))
	waiting := dialRaw(t, addr)
	waitFor(t, 5*time.Second, "the acceptor to wait", func() bool {
		s.quotas.mu.Lock()
		defer s.quotas.mu.Unlock()
		return s.quotas.waiting == 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	waiting.expectClosed(5 * time.Second)
}
