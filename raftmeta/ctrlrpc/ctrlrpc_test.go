package ctrlrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// countingListener counts accepted connections (a listener wrapper, as
// fault-injecting tests use).
type countingListener struct {
	net.Listener
	n atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// node is a StreamLayer with a Server on a loopback port.
type node struct {
	ln     *countingListener
	stream *StreamLayer
	addr   string
}

func newNode(t *testing.T, h Handler) *node {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: l}
	n := &node{ln: cl, addr: l.Addr().String()}
	n.stream = NewStreamLayer(cl, nil, nil, NewServer(h, nil), nil)
	t.Cleanup(func() { n.stream.Close() })
	return n
}

// heartbeatHandler answers BrokerHeartbeat with NOT_CONTROLLER unless
// leader() is true, echoing the broker id in ThrottleMillis.
func heartbeatHandler(leader func() bool, served *atomic.Int32) HandlerFunc {
	return func(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
		hb, ok := req.(*kmsg.BrokerHeartbeatRequest)
		if !ok {
			return nil, errors.New("unexpected request")
		}
		served.Add(1)
		resp := hb.ResponseKind().(*kmsg.BrokerHeartbeatResponse)
		if !leader() {
			resp.ErrorCode = kerr.NotController.Code
			return resp, nil
		}
		resp.ThrottleMillis = hb.BrokerID
		resp.IsCaughtUp = true
		return resp, nil
	}
}

func heartbeat(id int32) *kmsg.BrokerHeartbeatRequest {
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.Version = 1
	req.BrokerID = id
	return req
}

// TestStreamLayerMultiplexes runs raft's transport and the controller RPC
// on one port: a raft RequestVote between two transports and controller
// requests to the same listener.
func TestStreamLayerMultiplexes(t *testing.T) {
	var served atomic.Int32
	a := newNode(t, heartbeatHandler(func() bool { return true }, &served))
	b := newNode(t, heartbeatHandler(func() bool { return true }, &served))
	ta := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: a.stream, MaxPool: 2, Timeout: 5 * time.Second})
	tb := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: b.stream, MaxPool: 2, Timeout: 5 * time.Second})
	defer ta.Close()
	defer tb.Close()
	if ta.LocalAddr() != raft.ServerAddress(a.addr) {
		t.Fatalf("local addr %s, want %s", ta.LocalAddr(), a.addr)
	}
	// b answers raft RPCs.
	go func() {
		for rpc := range tb.Consumer() {
			req := rpc.Command.(*raft.RequestVoteRequest)
			rpc.Respond(&raft.RequestVoteResponse{RPCHeader: req.RPCHeader, Term: req.Term + 1, Granted: true}, nil)
		}
	}()
	var dials atomic.Int32
	c := NewClient(ClientConfig{ClientID: NodeClientID(7), Bootstrap: []string{b.addr},
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return DefaultDialer(ctx, network, addr)
		}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 20; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			var resp raft.RequestVoteResponse
			err := ta.RequestVote("b", raft.ServerAddress(b.addr), &raft.RequestVoteRequest{Term: uint64(i)}, &resp)
			if err == nil && (resp.Term != uint64(i)+1 || !resp.Granted) {
				err = fmt.Errorf("vote answer %+v", resp)
			}
			errs <- err
		}()
		go func() {
			defer wg.Done()
			resp, err := c.Send(ctx, heartbeat(int32(i)))
			if err == nil && resp.(*kmsg.BrokerHeartbeatResponse).ThrottleMillis != int32(i) {
				err = fmt.Errorf("heartbeat %d answered %+v", i, resp)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if served.Load() != 20 {
		t.Fatalf("served %d heartbeats", served.Load())
	}
	// One controller connection (multiplexed) beside raft's.
	if n, d := b.ln.n.Load(), dials.Load(); d != 1 || n < 2 || n > 1+20 {
		t.Fatalf("%d controller dials, %d connections accepted", d, n)
	}

	// A raw connection that starts with a raft-like byte is accepted with
	// that byte given back (on a layer without a raft transport reading
	// it).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bare := NewStreamLayer(l, nil, nil, nil, nil)
	defer bare.Close()
	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Write([]byte{3, 'h', 'i'}); err != nil {
		t.Fatal(err)
	}
	got, err := bare.Accept()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := io.ReadFull(got, buf); err != nil || string(buf) != "\x03hi" {
		t.Fatalf("read %q %v", buf, err)
	}
	got.Close()
	// A controller connection to a layer without a server is closed.
	ctl, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	ctl.Write([]byte{Magic})
	ctl.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := ctl.Read(buf); err != io.EOF {
		t.Fatalf("controller connection without a server: %v", err)
	}
	// Close unblocks Accept.
	bare.Close()
	if _, err := bare.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
}

// cutDialer refuses addresses marked cut and closes their connections
// when they are cut.
type cutDialer struct {
	mu    sync.Mutex
	cut   map[string]bool
	conns map[string][]net.Conn
	dials atomic.Int32
}

func (d *cutDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.dials.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut[addr] {
		return nil, fmt.Errorf("cut: %s", addr)
	}
	c, err := DefaultDialer(ctx, network, addr)
	if err == nil {
		d.conns[addr] = append(d.conns[addr], c)
	}
	return c, err
}

func (d *cutDialer) setCut(addr string, cut bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut[addr] = cut
	if cut {
		for _, c := range d.conns[addr] {
			c.Close()
		}
		delete(d.conns, addr)
	}
}

// TestClientFollowsController: a stale resolution answers NOT_CONTROLLER
// and the client moves on to the bootstrap addresses; a cut link fails
// attempts until the request's context ends, and healing it lets the
// next request through on a new connection.
func TestClientFollowsController(t *testing.T) {
	var leader atomic.Int32 // 1 = a, 2 = b
	leader.Store(2)
	var servedA, servedB atomic.Int32
	a := newNode(t, heartbeatHandler(func() bool { return leader.Load() == 1 }, &servedA))
	b := newNode(t, heartbeatHandler(func() bool { return leader.Load() == 2 }, &servedB))
	d := &cutDialer{cut: map[string]bool{}, conns: map[string][]net.Conn{}}
	c := NewClient(ClientConfig{
		Resolve:    func() string { return a.addr }, // stale: a is not the leader
		Bootstrap:  []string{a.addr, b.addr},
		Dialer:     d.dial,
		MinBackoff: time.Millisecond,
		MaxBackoff: 20 * time.Millisecond,
	})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Send(ctx, heartbeat(5))
	if err != nil || resp.(*kmsg.BrokerHeartbeatResponse).ThrottleMillis != 5 {
		t.Fatalf("send: %v %+v", err, resp)
	}
	if servedA.Load() < 1 || servedB.Load() != 1 {
		t.Fatalf("a served %d, b %d", servedA.Load(), servedB.Load())
	}

	// Leadership moves to a: the resolution is right again.
	leader.Store(1)
	servedA.Store(0)
	if _, err := c.Send(ctx, heartbeat(6)); err != nil || servedA.Load() != 1 {
		t.Fatalf("send after the move: %v, a served %d", err, servedA.Load())
	}

	// Cut the client from a: every attempt fails (b says NOT_CONTROLLER)
	// until the context ends.
	d.setCut(a.addr, true)
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = c.Send(short, heartbeat(7))
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send over a cut link: %v", err)
	}
	// Healed: a new connection carries the next request.
	d.setCut(a.addr, false)
	dials := d.dials.Load()
	if resp, err := c.Send(ctx, heartbeat(8)); err != nil || resp.(*kmsg.BrokerHeartbeatResponse).ThrottleMillis != 8 {
		t.Fatalf("send after healing: %v", err)
	}
	if d.dials.Load() == dials {
		t.Fatal("no new connection after healing")
	}

	c.Close()
	if _, err := c.Send(ctx, heartbeat(9)); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after Close: %v", err)
	}
}

// TestClientAttemptTimeout: a controller that never answers makes the
// attempt time out; the connection is dropped and the request retried
// elsewhere. Requests on one connection are answered out of order.
func TestClientAttemptTimeout(t *testing.T) {
	release := make(chan struct{})
	var stuck atomic.Int32
	silent := newNode(t, HandlerFunc(func(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
		stuck.Add(1)
		select {
		case <-ctx.Done():
		case <-release:
		}
		return nil, errors.New("gone")
	}))
	defer close(release)
	order := make(chan int32, 2)
	ok := newNode(t, HandlerFunc(func(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
		hb := req.(*kmsg.BrokerHeartbeatRequest)
		if hb.BrokerID == 1 {
			time.Sleep(200 * time.Millisecond) // answered after broker 2's
		}
		order <- hb.BrokerID
		resp := hb.ResponseKind().(*kmsg.BrokerHeartbeatResponse)
		resp.ThrottleMillis = hb.BrokerID
		return resp, nil
	}))
	c := NewClient(ClientConfig{
		Bootstrap:      []string{silent.addr, ok.addr},
		AttemptTimeout: 200 * time.Millisecond,
		MinBackoff:     time.Millisecond,
	})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Send(ctx, heartbeat(3))
	if err != nil || resp.(*kmsg.BrokerHeartbeatResponse).ThrottleMillis != 3 || stuck.Load() != 1 {
		t.Fatalf("send: %v %+v, silent saw %d", err, resp, stuck.Load())
	}
	<-order

	c2 := NewClient(ClientConfig{Bootstrap: []string{ok.addr}})
	defer c2.Close()
	var wg sync.WaitGroup
	for _, id := range []int32{1, 2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if id == 2 {
				time.Sleep(50 * time.Millisecond)
			}
			resp, err := c2.Send(ctx, heartbeat(id))
			if err != nil || resp.(*kmsg.BrokerHeartbeatResponse).ThrottleMillis != id {
				t.Errorf("heartbeat %d: %v %+v", id, err, resp)
			}
		}()
	}
	wg.Wait()
	if first, second := <-order, <-order; first != 2 || second != 1 {
		t.Fatalf("answered %d then %d", first, second)
	}
	if n := ok.ln.n.Load(); n != 2 {
		t.Fatalf("%d connections to the live controller, want one per client", n)
	}
}

func TestHasErrorCode(t *testing.T) {
	ct := kmsg.NewPtrCreateTopicsResponse()
	ct.Topics = []kmsg.CreateTopicsResponseTopic{{Topic: "a"}, {Topic: "b", ErrorCode: kerr.NotController.Code}}
	ap := kmsg.NewPtrAlterPartitionResponse()
	ap.Topics = []kmsg.AlterPartitionResponseTopic{{Partitions: []kmsg.AlterPartitionResponseTopicPartition{{ErrorCode: kerr.NotController.Code}}}}
	for _, tc := range []struct {
		resp kmsg.Response
		want bool
	}{
		{ct, true},
		{kmsg.NewPtrCreateTopicsResponse(), false},
		{&kmsg.BrokerHeartbeatResponse{ErrorCode: kerr.NotController.Code}, true},
		{&kmsg.BrokerHeartbeatResponse{ErrorCode: kerr.StaleBrokerEpoch.Code}, false},
		{ap, true},
		{nil, false},
	} {
		if got := HasErrorCode(tc.resp, kerr.NotController.Code); got != tc.want {
			t.Errorf("%T: %v, want %v", tc.resp, got, tc.want)
		}
	}
}

func TestNodeClientID(t *testing.T) {
	if id, ok := ParseNodeClientID(NodeClientID(42)); !ok || id != 42 {
		t.Fatalf("%d %v", id, ok)
	}
	for _, s := range []string{"", "strait-node-", "strait-node-4x", "kgo", "strait-node-07"} {
		if _, ok := ParseNodeClientID(s); ok {
			t.Errorf("%q parsed", s)
		}
	}
}

// FuzzParseRequest: any frame decodes or fails, never panics.
func FuzzParseRequest(f *testing.F) {
	fmtr := kmsg.NewRequestFormatter(kmsg.FormatterClientID("c"))
	for _, r := range []kmsg.Request{heartbeat(1), kmsg.NewPtrCreateTopicsRequest(), kmsg.NewPtrAlterPartitionRequest()} {
		f.Add(fmtr.AppendRequest(nil, r, 7)[4:])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, req, err := parseRequest(b)
		if err == nil && (req == nil || req.Key() != h.key) {
			t.Fatalf("decoded %v as %v", h, req)
		}
	})
}

// TestClientWarnsWhenTheControllerIsUnreachable: a controller address that
// refuses connections (a voter entry naming a port nobody listens on) is
// logged at WARN, naming the address, once per unreachableWarnEvery however
// often the client retries; a reachable controller logs no warning.
func TestClientWarnsWhenTheControllerIsUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	warned := &warnRecords{}
	var dials atomic.Int32
	c := NewClient(ClientConfig{
		Bootstrap: []string{dead},
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return DefaultDialer(ctx, network, addr)
		},
		MinBackoff: time.Millisecond,
		MaxBackoff: 5 * time.Millisecond,
		Logger:     slog.New(warned),
	})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err = c.Send(ctx, heartbeat(1))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send to a dead address: %v", err)
	}
	if dials.Load() < 5 {
		t.Fatalf("only %d dials in 300ms", dials.Load())
	}
	got := warned.take()
	if len(got) != 1 || !strings.Contains(got[0], "controller="+dead) || !strings.Contains(got[0], "connection refused") {
		t.Fatalf("%d dials logged %q: want one warning naming %s", dials.Load(), got, dead)
	}

	var served atomic.Int32
	live := newNode(t, heartbeatHandler(func() bool { return true }, &served))
	c2 := NewClient(ClientConfig{Bootstrap: []string{live.addr}, Logger: slog.New(warned)})
	defer c2.Close()
	if _, err := c2.Send(context.Background(), heartbeat(2)); err != nil {
		t.Fatal(err)
	}
	if got := warned.take(); len(got) != 0 {
		t.Fatalf("a reachable controller logged %q", got)
	}
}

// warnRecords is a slog handler that keeps each WARN-or-worse record as
// "message key=value ...".
type warnRecords struct {
	mu   sync.Mutex
	recs []string
}

func (w *warnRecords) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnRecords) WithAttrs([]slog.Attr) slog.Handler           { return w }
func (w *warnRecords) WithGroup(string) slog.Handler                { return w }

func (w *warnRecords) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	w.mu.Lock()
	w.recs = append(w.recs, line)
	w.mu.Unlock()
	return nil
}

// take returns the records kept so far and forgets them.
func (w *warnRecords) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.recs
	w.recs = nil
	return out
}
