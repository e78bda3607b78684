package wire

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestIdleConnectionClosed(t *testing.T) {
	s := newTestServer(t, Config{ConnectionsMaxIdle: 200 * time.Millisecond}, nil, heartbeatStandIn(newProbe()))
	addr := s.plaintextAddr()

	idle := dialRaw(t, addr)
	apiVersionsOnConn(t, idle)
	busy := dialRaw(t, addr)
	start := time.Now()
	// busy sends a request every 50 ms for 600 ms and must stay open.
	for i := range 12 {
		busy.send(int32(i), heartbeat("", "busy"))
		readHeartbeat(t, busy)
		time.Sleep(50 * time.Millisecond)
	}
	idle.expectClosed(2 * time.Second)
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("idle connection closed after %v, before connections.max.idle.ms", d)
	}
	busy.send(99, heartbeat("", "busy"))
	if corr := readHeartbeat(t, busy); corr != 99 {
		t.Fatalf("busy connection: corr %d", corr)
	}
}

// A request in flight keeps its connection from counting as idle.
func TestLongRequestIsNotIdle(t *testing.T) {
	s := newTestServer(t, Config{ConnectionsMaxIdle: 100 * time.Millisecond}, nil, heartbeatStandIn(newProbe()))
	c := dialRaw(t, s.plaintextAddr())
	c.send(5, heartbeat("sleep:500ms", "long"))
	if corr := readHeartbeat(t, c); corr != 5 {
		t.Fatalf("corr %d", corr)
	}
}

func TestNegativeIdleDisablesTheCheck(t *testing.T) {
	s := newTestServer(t, Config{ConnectionsMaxIdle: -1}, nil)
	c := dialRaw(t, s.plaintextAddr())
	time.Sleep(300 * time.Millisecond)
	apiVersionsOnConn(t, c)
}

// Shutdown lets a request in flight finish and its response arrive,
// closes connections that arrive meanwhile, then stops listening.
func TestShutdownDrainsInflight(t *testing.T) {
	p := newProbe()
	cfg := Config{Listeners: []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1"}}, EventLoops: 2}
	s := newServer(cfg, Services{}, testLogger(), nil, newAPITable(Services{}, heartbeatStandIn(p)))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr := s.plaintextAddr()
	c := dialRaw(t, addr)
	c.send(42, heartbeat("sleep:400ms", "slow"))
	waitFor(t, 5*time.Second, "the slow handler to start", func() bool { _, ok := p.startedAt("slow"); return ok })

	var shutdownErr error
	var wg sync.WaitGroup
	wg.Add(1)
	began := time.Now()
	go func() {
		defer wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shutdownErr = s.Shutdown(ctx)
	}()
	waitFor(t, time.Second, "shutdown to begin", s.draining.Load)

	// A request sent now is not read.
	c.send(43, heartbeat("", "late"))
	// A new connection is closed without an answer.
	late := dialRaw(t, addr)
	late.send(1, heartbeat("", "newconn"))
	late.expectClosed(5 * time.Second)

	if corr := readHeartbeat(t, c); corr != 42 {
		t.Fatalf("in-flight response: corr %d", corr)
	}
	c.expectClosed(5 * time.Second)
	wg.Wait()
	if shutdownErr != nil {
		t.Fatalf("Shutdown: %v", shutdownErr)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
	for _, name := range []string{"late", "newconn"} {
		if _, ran := p.startedAt(name); ran {
			t.Errorf("request %q was handled during shutdown", name)
		}
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatal("still accepting connections after Shutdown")
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if err := s.Start(context.Background()); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Start after Shutdown: %v", err)
	}
}

// ShutdownRefusing answers the request in flight as Shutdown does, but a
// connection arriving meanwhile is refused, not accepted and closed: the
// listening socket is gone, as a halted broker's is.
func TestShutdownRefusingRefusesNewConnections(t *testing.T) {
	p := newProbe()
	s := newTestServer(t, Config{}, nil, heartbeatStandIn(p))
	addr := s.plaintextAddr()
	c := dialRaw(t, addr)
	c.send(42, heartbeat("sleep:3s", "slow"))
	waitFor(t, 5*time.Second, "the slow handler to start", func() bool { _, ok := p.startedAt("slow"); return ok })

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- s.ShutdownRefusing(ctx)
	}()
	waitFor(t, time.Second, "shutdown to begin", s.draining.Load)
	// Within the slow request's 3 s.
	waitFor(t, time.Second, "new connections to be refused", func() bool {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			nc.Close()
		}
		return errors.Is(err, syscall.ECONNREFUSED)
	})
	if corr := readHeartbeat(t, c); corr != 42 {
		t.Fatalf("in-flight response: corr %d", corr)
	}
	c.expectClosed(5 * time.Second)
	if err := <-done; err != nil {
		t.Fatalf("ShutdownRefusing: %v", err)
	}
}

// When ctx runs out, Shutdown closes what is left and says so.
func TestShutdownBoundedByContext(t *testing.T) {
	p := newProbe()
	s := newServer(Config{Listeners: []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1"}}, EventLoops: 1},
		Services{}, testLogger(), nil, newAPITable(Services{}, heartbeatStandIn(p)))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, s.plaintextAddr())
	c.send(1, heartbeat("sleep:10s", "stuck"))
	waitFor(t, 5*time.Second, "the handler to start", func() bool { _, ok := p.startedAt("stuck"); return ok })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Shutdown took %v with a 200ms context", d)
	}
	c.expectClosed(5 * time.Second)
	// The stuck handler's context was canceled.
	waitFor(t, 5*time.Second, "the stuck handler to return", func() bool { return len(p.finishOrder()) == 1 })
}

func TestStartErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"no listeners", Config{}},
		{"unnamed listener", Config{Listeners: []Listener{{Host: "127.0.0.1"}}}},
		{"duplicate name", Config{Listeners: []Listener{{Name: "A", Host: "127.0.0.1"}, {Name: "A", Host: "127.0.0.1"}}}},
		{"SSL", Config{Listeners: []Listener{{Name: "SSL", Host: "127.0.0.1", SecurityProtocol: "SSL"}}}},
		{"bad port", Config{Listeners: []Listener{{Name: "A", Host: "127.0.0.1", Port: 70000}}}},
		{"negative max bytes", Config{Listeners: []Listener{{Name: "A", Host: "127.0.0.1"}}, SocketRequestMaxBytes: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(tc.cfg, Services{}, nil, nil)
			if err := s.Start(context.Background()); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Start: %v, want ErrInvalidConfig", err)
			}
		})
	}

	t.Run("port in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		port := ln.Addr().(*net.TCPAddr).Port
		s := NewServer(Config{Listeners: []Listener{
			{Name: "FIRST", Host: "127.0.0.1"},
			{Name: "SECOND", Host: "127.0.0.1", Port: port},
		}}, Services{}, nil, nil)
		if err := s.Start(context.Background()); err == nil {
			t.Fatal("Start succeeded on a port in use")
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown after failed Start: %v", err)
		}
	})
}

// Two listeners each report their own bound port and name their
// connections.
func TestTwoListeners(t *testing.T) {
	names := make(chan string, 2)
	who := api{key: 12, min: 0, max: 4, handle: func(_ *Server, ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		names <- reqctxListener(ctx)
		return kreq.ResponseKind(), nil
	}}
	s := newTestServer(t, Config{Listeners: []Listener{
		{Name: "PLAINTEXT", Host: "127.0.0.1"},
		{Name: "INTERNAL", Host: "127.0.0.1"},
	}}, nil, who)
	addrs := s.Addrs()
	if len(addrs) != 2 || addrs["PLAINTEXT"] == addrs["INTERNAL"] {
		t.Fatalf("Addrs %v", addrs)
	}
	for _, name := range []string{"PLAINTEXT", "INTERNAL"} {
		c := dialRaw(t, addrs[name])
		c.send(1, heartbeat("", ""))
		readHeartbeat(t, c)
		if got := <-names; got != name {
			t.Fatalf("request on %s saw listener %q", name, got)
		}
	}
}
