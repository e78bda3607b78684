package bench

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Broker is a broker a workload runs against, possibly one this process
// started and must stop.
type Broker struct {
	Label string
	Addrs []string // bootstrap host:ports
	// PID is the broker's process when it runs apart from this one, 0 when
	// it is unknown or this process (then its cost cannot be separated
	// from the client's).
	PID int
	// TLS is the clients' configuration when the broker listens with TLS,
	// nil for plaintext.
	TLS *tls.Config
	// Profile fetches its profiles during each workload when --profile
	// asked for them; nil otherwise.
	Profile *Profiler
	stop    func() error
}

// Close stops the broker if this process started it.
func (b *Broker) Close() error {
	if b == nil || b.stop == nil {
		return nil
	}
	stop := b.stop
	b.stop = nil
	return stop()
}

// kfakeListenPrefix starts the line kfake-serve prints once it listens:
// kfakepeer.ListenPrefix, spelled again here because importing kfakepeer
// would pull kfake into the strait binary (TestKfakeListenPrefix keeps the
// two equal).
const kfakeListenPrefix = "kfake-serve listening on "

// childStopWait is how long a child gets to exit after SIGTERM before it is
// killed.
const childStopWait = 5 * time.Second

// StartKfakeProcess starts kfake in a child process, the kfake-serve
// program run through argv (["/path/to/kfake-serve"]; see package
// kfakepeer), so that its CPU and memory are measured from /proc exactly
// as a strait broker's are.
// The child exits when its stdin closes, so it dies with this process.
// serveArgs are more flags of kfake-serve (--tls-keystore F).
func StartKfakeProcess(ctx context.Context, argv []string, brokers int, stderr io.Writer, serveArgs ...string) (*Broker, error) {
	if len(argv) == 0 {
		return nil, errors.New("bench: no command to start kfake-serve with")
	}
	args := append(append([]string(nil), argv[1:]...), "--brokers", fmt.Sprint(brokers), "--exit-on-stdin-eof")
	args = append(args, serveArgs...)
	cmd := exec.Command(argv[0], args...)
	cmd.Stderr = stderr
	// Linux only: should this process die without closing stdin, the
	// kernel kills the child.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: kfake-serve stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: kfake-serve stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start kfake-serve: %w", err)
	}
	stop := stopChild(cmd, stdin)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), kfakeListenPrefix); ok {
				lines <- a
				break
			}
		}
		// Keep draining so a chatty child never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, stdout)
		close(lines)
	}()
	select {
	case a, ok := <-lines:
		if !ok {
			_ = stop()
			return nil, errors.New("bench: kfake-serve exited before listening")
		}
		return &Broker{Label: "kfake", Addrs: strings.Split(a, ","), PID: cmd.Process.Pid, stop: stop}, nil
	case <-time.After(30 * time.Second):
		_ = stop()
		return nil, errors.New("bench: kfake-serve did not listen within 30s")
	case <-ctx.Done():
		_ = stop()
		return nil, fmt.Errorf("bench: start kfake-serve: %w", ctx.Err())
	}
}

// StartCommand starts argv as the broker under test (`strait serve ...`)
// and waits until addr accepts TCP connections; its PID is measured.
func StartCommand(ctx context.Context, label string, argv []string, addr string, stdout, stderr io.Writer) (*Broker, error) {
	if len(argv) == 0 {
		return nil, errors.New("bench: empty target command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start %s: %w", argv[0], err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(childStopWait):
			_ = cmd.Process.Kill()
			<-exited
		}
		return nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return &Broker{Label: label, Addrs: []string{addr}, PID: cmd.Process.Pid, stop: stop}, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("bench: %s exited before listening on %s: %v", argv[0], addr, err)
		case <-ctx.Done():
			_ = stop()
			return nil, fmt.Errorf("bench: start %s: %w", argv[0], ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = stop()
			return nil, fmt.Errorf("bench: %s did not listen on %s within 30s", argv[0], addr)
		}
	}
}

// stopChild closes the child's stdin (its signal to exit), then SIGTERM,
// then SIGKILL, and reaps it.
func stopChild(cmd *exec.Cmd, stdin io.Closer) func() error {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return func() error {
		_ = stdin.Close()
		select {
		case <-exited:
			return nil
		case <-time.After(time.Second):
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(childStopWait):
			_ = cmd.Process.Kill()
			<-exited
		}
		return nil
	}
}
