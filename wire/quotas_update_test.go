package wire

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

// SetConnectionLimits changes the quotas of a running server: a raised
// max.connections serves the connection its acceptor was holding back at
// once; a lowered per-address limit refuses the next connection from that
// address and keeps the ones it holds; a lowered max.connections closes
// the excess (Kafka's closeExcessConnections); a limit for a listener the
// server does not have is refused.
func TestSetConnectionLimits(t *testing.T) {
	lim := noLimits()
	lim.MaxConnections = 2
	s := newTestServer(t, Config{Limits: lim}, nil)
	addr := s.Addrs()["PLAINTEXT"]

	c1, c2 := dialFrom(t, "127.0.0.2", addr), dialFrom(t, "127.0.0.2", addr)
	apiVersionsOnConn(t, c1)
	apiVersionsOnConn(t, c2)
	c3 := dialFrom(t, "127.0.0.2", addr)
	if answered(c3, 1, 300*time.Millisecond) {
		t.Fatal("a connection past max.connections was served")
	}
	raised := noLimits()
	raised.MaxConnections = 10
	if err := s.SetConnectionLimits(*raised); err != nil {
		t.Fatal(err)
	}
	if _, err := c3.tryReadFrame(5 * time.Second); err != nil {
		t.Fatalf("the waiting connection was not served once max.connections was raised: %v", err)
	}

	perIP := *raised
	perIP.MaxConnectionsPerIP = 1
	perIP.MaxConnectionsPerIPOverrides = map[netip.Addr]int{netip.MustParseAddr("127.0.0.3"): 2}
	if err := s.SetConnectionLimits(perIP); err != nil {
		t.Fatal(err)
	}
	dialFrom(t, "127.0.0.2", addr).expectClosed(5 * time.Second)
	apiVersionsOnConn(t, c1) // kept, though its address is over the new limit
	apiVersionsOnConn(t, dialFrom(t, "127.0.0.3", addr))
	apiVersionsOnConn(t, dialFrom(t, "127.0.0.3", addr))
	dialFrom(t, "127.0.0.3", addr).expectClosed(5 * time.Second)

	lowered := perIP
	lowered.MaxConnections = 3
	if err := s.SetConnectionLimits(lowered); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the connections past the lowered max.connections to close", func() bool {
		return s.quotas.connections() == 3
	})

	bad := lowered
	bad.ListenerMaxConnections = map[string]int{"NOPE": 1}
	if err := s.SetConnectionLimits(bad); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a limit for an unknown listener: %v, want ErrInvalidConfig", err)
	}
}
