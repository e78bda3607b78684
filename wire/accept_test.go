package wire

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listenerCounts records what the acceptors report.
type listenerCounts struct {
	NopMetrics

	mu       sync.Mutex
	failed   map[string]int // listener/reason
	rejected map[string]int // listener/reason
	blocked  map[string]time.Duration
}

func newListenerCounts() *listenerCounts {
	return &listenerCounts{failed: map[string]int{}, rejected: map[string]int{}, blocked: map[string]time.Duration{}}
}

func (m *listenerCounts) AcceptFailed(l, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failed[l+"/"+reason]++
}

func (m *listenerCounts) ConnectionRejected(l, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rejected[l+"/"+reason]++
}

func (m *listenerCounts) AcceptorBlocked(l string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blocked[l] += d
}

func (m *listenerCounts) failures(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failed[key]
}

func (m *listenerCounts) rejections(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rejected[key]
}

func (m *listenerCounts) blockedFor(l string) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.blocked[l]
}

// An accept(2) that fails because the process has no descriptor left is
// counted and retried; once descriptors are free the listener serves new
// connections. gnet's own acceptor stopped its engine for good here.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs Linux")
	}
	m := newListenerCounts()
	s := newTestServer(t, Config{}, m)
	addr := s.Addrs()["PLAINTEXT"]
	sa := sockaddrOf(t, addr)

	// Client sockets made while descriptors are plenty, connected once
	// none is left: connect(2) takes no new descriptor, so the
	// connections reach the listen backlog, and accept(2) is what fails.
	var socks []int
	defer func() {
		for _, fd := range socks {
			_ = unix.Close(fd)
		}
	}()
	for range 3 {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		socks = append(socks, fd)
	}
	restore := exhaustDescriptors(t)
	for _, fd := range socks {
		if err := unix.Connect(fd, sa); err != nil {
			restore()
			t.Fatalf("connect: %v", err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for m.failures("PLAINTEXT/EMFILE") == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	restore()
	if m.failures("PLAINTEXT/EMFILE") == 0 {
		t.Fatalf("no accept failure counted with the descriptor table full; counted %v", m.failed)
	}
	for _, fd := range socks {
		_ = unix.Close(fd)
	}
	socks = nil
	select {
	case <-s.Failed():
		t.Fatalf("the server reported itself failed: %v", s.Err())
	default:
	}
	apiVersionsOK(t, addr)
}

// exhaustDescriptors lowers the soft open-file limit to the lowest free
// descriptor number, so the process can open nothing more; the returned
// func restores it.
func exhaustDescriptors(t *testing.T) func() {
	t.Helper()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lowest, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = unix.Close(lowest)
	low := lim
	low.Cur = uint64(lowest)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	restore := func() {
		once.Do(func() {
			if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
				panic(err)
			}
		})
	}
	t.Cleanup(restore)
	return restore
}

func sockaddrOf(t *testing.T, addr string) *unix.SockaddrInet4 {
	t.Helper()
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	sa := &unix.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	return sa
}

// A listening socket that stops listening under the acceptor ends it and
// fails the server, which says which listener; the connections already
// open are still served.
func TestListenerGoneFailsServer(t *testing.T) {
	s := newTestServer(t, Config{}, nil)
	addr := s.Addrs()["PLAINTEXT"]
	c := dialRaw(t, addr)
	apiVersionsOnConn(t, c)

	rc, err := s.listeners[0].ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// shutdown(2) on a listening socket takes it out of the LISTEN
	// state: accept(2) fails with EINVAL from then on.
	if err := rc.Control(func(fd uintptr) { _ = unix.Shutdown(int(fd), unix.SHUT_RD) }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Failed():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not report the listener failed")
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "PLAINTEXT") || !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Err() = %v, want the PLAINTEXT listener's EINVAL", err)
	}
	apiVersionsOnConn(t, c)
}

// An event loop that dies (here its epoll descriptor is replaced under
// it, so epoll_wait fails) stops gnet's ticker; the watchdog reports the
// server failed.
func TestEventLoopDeathFailsServer(t *testing.T) {
	if !readPauseSupported {
		t.Skip("needs the loop's epoll descriptor")
	}
	s := newTestServer(t, Config{EventLoops: 1, stallChecks: 3, watchEvery: 20 * time.Millisecond}, nil)
	c := dialRaw(t, s.Addrs()["PLAINTEXT"])
	apiVersionsOnConn(t, c)
	cns := s.listeners[0].snapshot()
	if len(cns) != 1 || cns[0].pollFD < 0 {
		t.Fatalf("connections %d, epoll descriptor unknown", len(cns))
	}
	devNull, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(devNull)
	// The loop's next epoll_wait gets EINVAL; gnet closes the
	// descriptor number when the server stops, which is then ours to
	// lose.
	if err := unix.Dup3(devNull, cns[0].pollFD, unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	_ = cns[0].gc.Wake(nil) // wakes the epoll_wait under way
	select {
	case <-s.Failed():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not report its event loops stopped")
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "event loops stopped") {
		t.Fatalf("Err() = %v", err)
	}
}

func TestAcceptErrorClassification(t *testing.T) {
	wrap := func(errno syscall.Errno) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
	}
	for _, tc := range []struct {
		err    error
		gone   bool
		reason string
	}{
		{wrap(syscall.EMFILE), false, "EMFILE"},
		{wrap(syscall.ENFILE), false, "ENFILE"},
		{wrap(syscall.ENOBUFS), false, "ENOBUFS"},
		{wrap(syscall.ENOMEM), false, "ENOMEM"},
		{wrap(syscall.EPROTO), false, "other"},
		{wrap(syscall.EPERM), false, "other"},
		{fmt.Errorf("dup: %w", syscall.EMFILE), false, "EMFILE"},
		{errNotRegistered, false, "other"},
		{wrap(syscall.EINVAL), true, "other"},
		{wrap(syscall.EBADF), true, "other"},
		{wrap(syscall.ENOTSOCK), true, "other"},
		{&net.OpError{Op: "accept", Net: "tcp", Err: net.ErrClosed}, true, "other"},
	} {
		if got := listenerGone(tc.err); got != tc.gone {
			t.Errorf("listenerGone(%v) = %v", tc.err, got)
		}
		if got := acceptErrorReason(tc.err); got != tc.reason {
			t.Errorf("acceptErrorReason(%v) = %q, want %q", tc.err, got, tc.reason)
		}
	}
}

func TestLogEvery(t *testing.T) {
	r := logEvery{every: time.Second}
	t0 := time.Unix(100, 0)
	if ok, skipped := r.allow(t0); !ok || skipped != 0 {
		t.Fatalf("first: %v %d", ok, skipped)
	}
	for i := range 3 {
		if ok, _ := r.allow(t0.Add(time.Duration(i) * 100 * time.Millisecond)); ok {
			t.Fatal("let through within the interval")
		}
	}
	if ok, skipped := r.allow(t0.Add(time.Second)); !ok || skipped != 3 {
		t.Fatalf("after the interval: %v %d, want true 3", ok, skipped)
	}
}
