package faultnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// echoServer is a node's listener: a real TCP socket on loopback that
// echoes every byte back and reports how each accepted connection ended,
// so tests can check that the undialed end notices a fault.
type echoServer struct {
	ln    net.Listener
	ended chan error // the error that ended each accepted connection's read loop
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln, ended: make(chan error, 1024)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				_, err := io.Copy(c, c)
				if err == nil {
					err = io.EOF
				}
				_ = c.Close()
				select {
				case s.ended <- err:
				default:
				}
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

// startNodes gives each node an echo listener registered on n.
func startNodes(t *testing.T, n *Network, nodes ...int32) map[int32]string {
	t.Helper()
	addrs := make(map[int32]string)
	for _, id := range nodes {
		s := startEcho(t)
		n.Register(id, s.addr())
		addrs[id] = s.addr()
	}
	return addrs
}

func dial(t *testing.T, n *Network, from int32, addr string) (net.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := n.Dialer(from)(ctx, "tcp", addr)
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

func mustDial(t *testing.T, n *Network, from int32, addr string) net.Conn {
	t.Helper()
	c, err := dial(t, n, from, addr)
	if err != nil {
		t.Fatalf("dial %d -> %s: %v", from, addr, err)
	}
	return c
}

func roundTrip(c net.Conn, msg string) error {
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return err
	}
	if _, err := c.Write([]byte(msg)); err != nil {
		return err
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if string(got) != msg {
		return fmt.Errorf("echoed %q, want %q", got, msg)
	}
	return nil
}

func mustRoundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if err := roundTrip(c, msg); err != nil {
		t.Fatal(err)
	}
}

func statsOf(n *Network, from, to int32) LinkStats {
	for _, s := range n.Stats() {
		if s.Link == (Link{from, to}) {
			return s
		}
	}
	return LinkStats{Link: Link{from, to}}
}

func wantStats(t *testing.T, n *Network, want LinkStats) {
	t.Helper()
	if got := statsOf(n, want.Link.From, want.Link.To); got != want {
		t.Errorf("stats %v, want %v", got, want)
	}
}

// assertCutDialErr checks a refused dial looks like a connect timeout.
func assertCutDialErr(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrLinkCut) || !errors.Is(err, syscall.ETIMEDOUT) {
		t.Fatalf("dial error %v, want ErrLinkCut and ETIMEDOUT", err)
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" || !op.Timeout() || !op.Temporary() {
		t.Fatalf("dial error %#v, want a *net.OpError dial timeout", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("dial error %v must not look like the caller's context ending", err)
	}
}

func TestDialThroughRegistered(t *testing.T) {
	n := New()
	addrs := startNodes(t, n, 1, 2)
	c := mustDial(t, n, 1, addrs[2])
	mustRoundTrip(t, c, "hello")
	if got := c.RemoteAddr().String(); got != addrs[2] {
		t.Errorf("RemoteAddr %s, want %s", got, addrs[2])
	}
	wantStats(t, n, LinkStats{Link: Link{1, 2}, Dials: 1})
	if len(n.Stats()) != 1 {
		t.Errorf("stats %v, want one link", n.Stats())
	}
	// "localhost" names the same loopback listener.
	_, port, _ := net.SplitHostPort(addrs[2])
	mustRoundTrip(t, mustDial(t, n, 1, "localhost:"+port), "again")
	wantStats(t, n, LinkStats{Link: Link{1, 2}, Dials: 2})
}

func TestUnregisteredPassesThrough(t *testing.T) {
	n := New()
	startNodes(t, n, 1, 2)
	outside := startEcho(t)
	n.Isolate(1)
	n.SetLinkDrop(1, 2, 1)
	c := mustDial(t, n, 1, outside.addr())
	if _, wrapped := c.(*conn); wrapped {
		t.Fatal("dial to an unregistered address was wrapped")
	}
	mustRoundTrip(t, c, "outside")
	if s := n.Stats(); len(s) != 0 {
		t.Errorf("stats %v, want none", s)
	}
}

func TestPartitionRefusesNewDialsBothWays(t *testing.T) {
	n := New()
	n.SetCutDialDelay(100 * time.Millisecond)
	addrs := startNodes(t, n, 1, 2, 3)
	n.Partition([]int32{1}, []int32{2})

	for _, l := range []Link{{1, 2}, {2, 1}} {
		start := time.Now()
		_, err := dial(t, n, l.From, addrs[l.To])
		assertCutDialErr(t, err)
		if el := time.Since(start); el < 100*time.Millisecond {
			t.Errorf("%v refused after %v, want >= 100ms", l, el)
		}
		wantStats(t, n, LinkStats{Link: l, Dials: 1, DialsRefused: 1})
		if !n.Cut(l.From, l.To) {
			t.Errorf("Cut(%v) = false", l)
		}
	}
	for _, l := range []Link{{1, 3}, {3, 1}, {2, 3}, {3, 2}, {1, 1}} {
		if n.Cut(l.From, l.To) {
			t.Errorf("Cut(%v) = true", l)
		}
		mustRoundTrip(t, mustDial(t, n, l.From, addrs[l.To]), "up")
	}

	n.SetCutDialDelay(0)
	start := time.Now()
	_, err := dial(t, n, 2, addrs[1])
	assertCutDialErr(t, err)
	if el := time.Since(start); el > time.Second {
		t.Errorf("refused after %v with no cut-dial delay", el)
	}
}

func TestPartitionBreaksExistingConns(t *testing.T) {
	n := New()
	nodes := map[int32]*echoServer{1: startEcho(t), 2: startEcho(t), 3: startEcho(t)}
	for id, s := range nodes {
		n.Register(id, s.addr())
	}
	c12 := mustDial(t, n, 1, nodes[2].addr())
	c21 := mustDial(t, n, 2, nodes[1].addr())
	c13 := mustDial(t, n, 1, nodes[3].addr())
	for _, c := range []net.Conn{c12, c21, c13} {
		mustRoundTrip(t, c, "before")
	}

	readErr := make(chan error, 2)
	for _, c := range []net.Conn{c12, c21} {
		go func() {
			_, err := c.Read(make([]byte, 1))
			readErr <- err
		}()
	}
	time.Sleep(50 * time.Millisecond) // let both reads block
	n.Partition([]int32{1}, []int32{2})

	timeout := time.After(time.Second)
	for range 2 {
		select {
		case err := <-readErr:
			if !errors.Is(err, ErrLinkCut) || !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("blocked read returned %v, want ErrLinkCut and ECONNRESET", err)
			}
			var op *net.OpError
			if !errors.As(err, &op) || op.Op != "read" {
				t.Errorf("read error %#v, want a *net.OpError read", err)
			}
		case <-timeout:
			t.Fatal("a blocked read did not return within 1s of Partition")
		}
	}
	// The accepted (unwrapped) ends notice too.
	for _, id := range []int32{1, 2} {
		select {
		case <-nodes[id].ended:
		case <-time.After(time.Second):
			t.Errorf("node %d's accepted end did not notice the partition within 1s", id)
		}
	}
	if _, err := c12.Write([]byte("x")); !errors.Is(err, ErrLinkCut) {
		t.Errorf("write on broken conn: %v, want ErrLinkCut", err)
	}
	mustRoundTrip(t, c13, "unaffected")
	wantStats(t, n, LinkStats{Link: Link{1, 2}, Dials: 1, Broken: 1})
	wantStats(t, n, LinkStats{Link: Link{2, 1}, Dials: 1, Broken: 1})
	wantStats(t, n, LinkStats{Link: Link{1, 3}, Dials: 1})

	// Close after a fault, and twice, is quiet.
	for range 2 {
		if err := c12.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func TestCutDialRespectsContext(t *testing.T) {
	n := New()
	n.SetCutDialDelay(time.Minute)
	addrs := startNodes(t, n, 1, 2)
	n.Isolate(2)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := n.Dialer(1)(ctx, "tcp", addrs[2])
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("dial: %v, want context.DeadlineExceeded", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("dial returned after %v, want ~50ms", el)
	}
}

func TestHealDuringCutDialDelay(t *testing.T) {
	n := New()
	n.SetCutDialDelay(300 * time.Millisecond)
	addrs := startNodes(t, n, 1, 2)
	n.Partition([]int32{1}, []int32{2})
	go func() {
		time.Sleep(50 * time.Millisecond)
		n.Heal()
	}()
	// Like a retransmitted SYN, the dial gets through once healed.
	mustRoundTrip(t, mustDial(t, n, 1, addrs[2]), "healed")
	wantStats(t, n, LinkStats{Link: Link{1, 2}, Dials: 1})
}

func TestIsolate(t *testing.T) {
	n := New()
	n.SetCutDialDelay(0)
	addrs := startNodes(t, n, 1, 2, 3)
	n.Isolate(2)
	addrs[4] = startEcho(t).addr()
	n.Register(4, addrs[4]) // registered after Isolate: cut as well

	for _, l := range []Link{{2, 1}, {2, 3}, {2, 4}, {1, 2}, {3, 2}, {4, 2}} {
		_, err := dial(t, n, l.From, addrs[l.To])
		assertCutDialErr(t, err)
		if !n.Cut(l.From, l.To) {
			t.Errorf("Cut(%v) = false", l)
		}
	}
	for _, l := range []Link{{1, 3}, {3, 4}, {2, 2}} {
		if n.Cut(l.From, l.To) {
			t.Errorf("Cut(%v) = true", l)
		}
		mustRoundTrip(t, mustDial(t, n, l.From, addrs[l.To]), "up")
	}
}

func TestHeal(t *testing.T) {
	n := New()
	n.SetCutDialDelay(0)
	addrs := startNodes(t, n, 1, 2)
	old := mustDial(t, n, 1, addrs[2])
	n.Partition([]int32{1}, []int32{2})
	_, err := dial(t, n, 1, addrs[2])
	assertCutDialErr(t, err)

	n.Heal()
	if n.Cut(1, 2) || n.Cut(2, 1) {
		t.Fatal("link still cut after Heal")
	}
	mustRoundTrip(t, mustDial(t, n, 1, addrs[2]), "new")
	mustRoundTrip(t, mustDial(t, n, 2, addrs[1]), "new")
	if err := roundTrip(old, "old"); !errors.Is(err, ErrLinkCut) {
		t.Errorf("connection broken before Heal: %v, want it to stay broken with ErrLinkCut", err)
	}
	wantStats(t, n, LinkStats{Link: Link{1, 2}, Dials: 3, DialsRefused: 1, Broken: 1})
}

func TestLinkDelayOnWrite(t *testing.T) {
	const d = 150 * time.Millisecond
	n := New()
	addrs := startNodes(t, n, 1, 2)
	c := mustDial(t, n, 1, addrs[2])
	n.SetLinkDelay(1, 2, d)

	// Pipelined writes each see latency d, not d per write, and keep
	// their order.
	start := time.Now()
	var want bytes.Buffer
	for i := range 5 {
		msg := fmt.Sprintf("msg-%d;", i)
		want.WriteString(msg)
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el >= d {
		t.Errorf("delayed writes blocked the caller for %v", el)
	}
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	if string(got) != want.String() {
		t.Errorf("echoed %q, want %q", got, want.String())
	}
	if el < d {
		t.Errorf("round trip %v, want >= %v", el, d)
	}
	if el >= 3*d {
		t.Errorf("5 pipelined writes took %v: delay applied per write, want ~%v", el, d)
	}

	// Lowering the delay never lets later bytes overtake earlier ones.
	n.SetLinkDelay(1, 2, 2*d)
	start = time.Now()
	if _, err := c.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	n.SetLinkDelay(1, 2, 0)
	if _, err := c.Write([]byte("b")); err != nil {
		t.Fatal(err)
	}
	got = make([]byte, 2)
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != "ab" {
		t.Errorf("echoed %q, want \"ab\"", got)
	}
	if el := time.Since(start); el < 2*d {
		t.Errorf("round trip %v, want >= %v", el, 2*d)
	}

	// Removed: fast again.
	start = time.Now()
	mustRoundTrip(t, c, "fast")
	if el := time.Since(start); el >= d {
		t.Errorf("round trip %v after removing the delay, want < %v", el, d)
	}
}

func TestLinkDelayOnRead(t *testing.T) {
	const d = 150 * time.Millisecond
	n := New()
	addrs := startNodes(t, n, 1, 2)
	c12 := mustDial(t, n, 1, addrs[2])
	c21 := mustDial(t, n, 2, addrs[1])
	// Bytes 2->1 travel on c12's reads and c21's writes.
	n.SetLinkDelay(2, 1, d)
	for _, c := range []net.Conn{c12, c21} {
		start := time.Now()
		mustRoundTrip(t, c, "slow")
		if el := time.Since(start); el < d {
			t.Errorf("round trip %v on %v, want >= %v", el, c.(*conn).link, d)
		}
	}
	// The other direction is not delayed.
	c13 := mustDial(t, n, 1, addrs[1])
	start := time.Now()
	mustRoundTrip(t, c13, "self")
	if el := time.Since(start); el >= d {
		t.Errorf("round trip %v on an undelayed link", el)
	}
}

func TestLinkDrop(t *testing.T) {
	n := New()
	addrs := startNodes(t, n, 1, 2)

	// p = 1 on the write direction: the first write resets the connection.
	n.SetLinkDrop(1, 2, 1)
	c := mustDial(t, n, 1, addrs[2])
	_, err := c.Write([]byte("lost"))
	if !errors.Is(err, ErrLinkDropped) || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("write: %v, want ErrLinkDropped and ECONNRESET", err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, ErrLinkDropped) {
		t.Errorf("read after drop: %v, want ErrLinkDropped", err)
	}
	wantStats(t, n, LinkStats{Link: Link{1, 2}, Dials: 1, Dropped: 1})
	n.SetLinkDrop(1, 2, 0)

	// p = 1 on the read direction: the reply resets it.
	n.SetLinkDrop(2, 1, 1)
	c = mustDial(t, n, 1, addrs[2])
	if err := roundTrip(c, "reply lost"); !errors.Is(err, ErrLinkDropped) {
		t.Errorf("round trip: %v, want ErrLinkDropped", err)
	}
	wantStats(t, n, LinkStats{Link: Link{2, 1}, Dropped: 1})
	n.SetLinkDrop(2, 1, 0)

	// p = 0 (removed) never drops.
	c = mustDial(t, n, 1, addrs[2])
	for i := range 100 {
		mustRoundTrip(t, c, fmt.Sprint(i))
	}

	defer func() {
		if recover() == nil {
			t.Error("SetLinkDrop(1.5) did not panic")
		}
	}()
	n.SetLinkDrop(1, 2, 1.5)
}

// TestLinkDropSeeded checks drops are drawn from the Network's seed: the
// same seed resets the connection after the same number of writes.
func TestLinkDropSeeded(t *testing.T) {
	writesUntilDrop := func(seed uint64) int {
		n := NewWithSeed(seed)
		addrs := startNodes(t, n, 1, 2)
		n.SetLinkDrop(1, 2, 0.1)
		c := mustDial(t, n, 1, addrs[2])
		for i := 1; ; i++ {
			if _, err := c.Write([]byte("x")); err != nil {
				if !errors.Is(err, ErrLinkDropped) {
					t.Fatalf("write %d: %v", i, err)
				}
				return i
			}
		}
	}
	var counts []int
	for _, seed := range []uint64{7, 7, 8, 9, 10} {
		counts = append(counts, writesUntilDrop(seed))
	}
	if counts[0] != counts[1] {
		t.Errorf("seed 7 dropped after %d then %d writes", counts[0], counts[1])
	}
	if counts[1] == counts[2] && counts[2] == counts[3] && counts[3] == counts[4] {
		t.Errorf("seeds 7-10 all dropped after %d writes: the seed is ignored", counts[1])
	}
}

func TestDeadlinesDelegate(t *testing.T) {
	n := New()
	addrs := startNodes(t, n, 1, 2)
	c := mustDial(t, n, 1, addrs[2])
	if err := c.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	mustRoundTrip(t, c, "still usable")
	for range 2 {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("write after Close: %v, want net.ErrClosed", err)
	}
}

// TestWriterGoroutineEnds checks the one goroutine a delayed connection
// owns ends on Close and on a fault, without waiting for queued writes.
func TestWriterGoroutineEnds(t *testing.T) {
	n := New()
	addrs := startNodes(t, n, 1, 2)
	n.SetLinkDelay(1, 2, time.Minute)
	for _, end := range []string{"close", "partition"} {
		c := mustDial(t, n, 1, addrs[2])
		if _, err := c.Write([]byte("held")); err != nil {
			t.Fatal(err)
		}
		switch end {
		case "close":
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		case "partition":
			n.Partition([]int32{1}, []int32{2})
		}
		select {
		case <-c.(*conn).writerDone:
		case <-time.After(time.Second):
			t.Fatalf("%s: writer goroutine still running after 1s", end)
		}
		n.Heal()
	}
	n.mu.Lock()
	live := len(n.conns)
	n.mu.Unlock()
	if live != 0 {
		t.Errorf("%d connections still tracked after Close and Partition", live)
	}
}

// TestConcurrentFaults dials and talks over every link while another
// goroutine flips every fault; run it with -race. Afterwards every link
// works and no goroutine is left behind.
func TestConcurrentFaults(t *testing.T) {
	n := NewWithSeed(42)
	n.SetCutDialDelay(5 * time.Millisecond)
	nodes := []int32{1, 2, 3}
	addrs := startNodes(t, n, nodes...)
	base := runtime.NumGoroutine()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				from, to := nodes[rng.IntN(3)], nodes[rng.IntN(3)]
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				c, err := n.Dialer(from)(ctx, "tcp", addrs[to])
				cancel()
				if err != nil {
					continue
				}
				if rng.IntN(4) == 0 {
					// Close while a read is blocked.
					done := make(chan struct{})
					go func() {
						defer close(done)
						_, _ = c.Read(make([]byte, 1))
					}()
					time.Sleep(time.Millisecond)
					_ = c.Close()
					<-done
					continue
				}
				for j := range 5 {
					if roundTrip(c, fmt.Sprintf("%d-%d-%d", w, i, j)) != nil {
						break
					}
				}
				_ = c.Close()
				_ = c.Close()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(99, 1))
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			a, b := nodes[rng.IntN(3)], nodes[rng.IntN(3)]
			switch rng.IntN(6) {
			case 0:
				n.Partition([]int32{a}, []int32{b})
			case 1:
				n.Isolate(a)
			case 2:
				n.Heal()
			case 3:
				n.SetLinkDelay(a, b, time.Duration(rng.IntN(3))*time.Millisecond)
			case 4:
				n.SetLinkDrop(a, b, float64(rng.IntN(2))*0.05)
			case 5:
				_ = n.Cut(a, b)
				_ = n.Stats()
			}
		}
	}()
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()

	n.Heal()
	for _, a := range nodes {
		for _, b := range nodes {
			n.SetLinkDelay(a, b, 0)
			n.SetLinkDrop(a, b, 0)
		}
	}
	for _, a := range nodes {
		for _, b := range nodes {
			c := mustDial(t, n, a, addrs[b])
			mustRoundTrip(t, c, "after")
			_ = c.Close()
		}
	}
	var total LinkStats
	for _, s := range n.Stats() {
		total.Dials += s.Dials
		total.DialsRefused += s.DialsRefused
		total.Broken += s.Broken
		total.Dropped += s.Dropped
	}
	t.Logf("totals: dials=%d refused=%d broken=%d dropped=%d", total.Dials, total.DialsRefused, total.Broken, total.Dropped)
	if total.DialsRefused == 0 || total.Broken+total.Dropped == 0 {
		t.Errorf("chaos injected no faults: %+v", total)
	}

	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, want <= %d:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
	n.mu.Lock()
	live := len(n.conns)
	n.mu.Unlock()
	if live != 0 {
		t.Errorf("%d connections still tracked after all were closed", live)
	}
}
