package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strait-io/strait/broker/brokertest"
)

// readyMsg is the line `strait serve` logs once it serves requests; its
// attributes name the bound listeners (listener.PLAINTEXT=host:port ...).
const readyMsg = `msg="strait broker ready"`

// proc is one run of the strait binary: its output, whether it logged the
// ready line, and how it exited.
type proc struct {
	cmd     *exec.Cmd
	started time.Time

	mu      sync.Mutex
	stdout  bytes.Buffer
	lines   []string // stderr, line by line
	ready   map[string]string
	readyAt time.Time

	readyCh chan struct{} // closed when the ready line arrives
	done    chan struct{} // closed once the process exited and its output is read
	state   *os.ProcessState
	waitErr error
	exitAt  time.Time
}

// startProc runs the binary with args in the working directory wd. The
// process is killed at the end of the test if it still runs, and its
// stderr is printed if the test failed.
func startProc(t testing.TB, wd string, args ...string) *proc {
	t.Helper()
	return startProcVia(t, wd, nil, args...)
}

// startProcVia is startProc with the binary run through a command that
// execs it, e.g. prlimit with its arguments; nil runs it directly.
func startProcVia(t testing.TB, wd string, via []string, args ...string) *proc {
	t.Helper()
	argv := append(append(append([]string(nil), via...), straitBin), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = wd
	p := &proc{cmd: cmd, readyCh: make(chan struct{}), done: make(chan struct{})}
	cmd.Stdout = lockedWriter{&p.mu, &p.stdout}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", straitBin, err)
	}
	go p.read(stderr)
	t.Cleanup(func() {
		if !p.exited() {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
		if t.Failed() {
			t.Logf("stderr of `strait %s` (pid %d):\n%s", strings.Join(args, " "), cmd.Process.Pid, p.stderr())
		}
	})
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// read collects stderr until the process closes it, then reaps the process.
func (p *proc) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		now := time.Now()
		p.mu.Lock()
		p.lines = append(p.lines, line)
		if p.ready == nil && strings.Contains(line, readyMsg) {
			p.ready, p.readyAt = logAttrs(line), now
			close(p.readyCh)
		}
		p.mu.Unlock()
	}
	err := p.cmd.Wait()
	p.mu.Lock()
	p.state, p.waitErr, p.exitAt = p.cmd.ProcessState, err, time.Now()
	p.mu.Unlock()
	close(p.done)
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitReady waits for the ready line and returns its attributes, or fails
// when the process exits first or timeout passes.
func (p *proc) waitReady(timeout time.Duration) (map[string]string, error) {
	select {
	case <-p.readyCh:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.ready, nil
	case <-p.done:
		return nil, fmt.Errorf("strait exited before it was ready: %v", p.waitErr)
	case <-time.After(timeout):
		return nil, fmt.Errorf("strait not ready after %v", timeout)
	}
}

// readyAfter is the time from exec to the ready line.
func (p *proc) readyAfter() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readyAt.Sub(p.started)
}

// wait waits for the process to exit and returns its exit code, -1 when a
// signal ended it.
func (p *proc) wait(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
	case <-time.After(timeout):
		return 0, fmt.Errorf("strait still running after %v", timeout)
	}
	return p.state.ExitCode(), nil
}

// signal sends sig and returns the time it was sent.
func (p *proc) signal(sig os.Signal) time.Time {
	now := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		panic(fmt.Sprintf("signal %v: %v", sig, err))
	}
	return now
}

// killedBy reports whether the process ended from sig.
func (p *proc) killedBy(sig syscall.Signal) bool {
	ws, ok := p.state.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

func (p *proc) stdoutString() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String()
}

// linesWith returns the stderr lines containing s.
func (p *proc) linesWith(s string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, l := range p.lines {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// logAttrs parses the key=value attributes of a log/slog text line; values
// may be quoted.
func logAttrs(line string) map[string]string {
	out := map[string]string{}
	for len(line) > 0 {
		line = strings.TrimLeft(line, " ")
		eq := strings.IndexByte(line, '=')
		if eq < 0 {
			break
		}
		key, rest := line[:eq], line[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			end := 1
			for end < len(rest) && rest[end] != '"' {
				if rest[end] == '\\' {
					end++
				}
				end++
			}
			val, line = strings.Trim(rest[:min(end+1, len(rest))], `"`), rest[min(end+1, len(rest)):]
		} else {
			sp := strings.IndexByte(rest, ' ')
			if sp < 0 {
				sp = len(rest)
			}
			val, line = rest[:sp], rest[sp:]
		}
		out[key] = val
	}
	return out
}

// ports are the three listeners of a node, fixed for its whole test so a
// restarted process serves where the clients already point.
type ports struct{ kafka, controller, metrics int }

// freePorts picks the three loopback ports of each of n nodes, all free
// now, all distinct, outside the kernel's ephemeral range
// (brokertest.FreePorts).
func freePorts(t testing.TB, n int) []ports {
	t.Helper()
	ps := brokertest.FreePorts(t, 3*n)
	out := make([]ports, n)
	for i := range out {
		out[i] = ports{ps[3*i], ps[3*i+1], ps[3*i+2]}
	}
	return out
}

// node is a data directory and a set of ports that successive strait
// processes serve: start, kill or stop, start again.
type node struct {
	t      testing.TB
	logDir string
	ports  ports
	extra  []string // more --set key=value
	flags  []string // more serve flags (--add-scram ...)
	via    []string // a command that execs the binary (prlimit ...); nil: none
	runs   int
	cur    *proc
}

func newNode(t testing.TB, extra ...string) *node {
	return newNodeOn(t, freePorts(t, 1)[0], extra...)
}

// newNodeOn is newNode on ports picked by the caller, with other nodes'.
func newNodeOn(t testing.TB, p ports, extra ...string) *node {
	return &node{t: t, logDir: t.TempDir(), ports: p, extra: extra}
}

func (n *node) kafkaAddr() string { return fmt.Sprintf("127.0.0.1:%d", n.ports.kafka) }

// args are the serve flags of this node. The group coordinator's initial
// rebalance delay is off so group tests do not wait 3 s.
func (n *node) args() []string {
	sets := []string{
		"log.dirs=" + n.logDir,
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", n.ports.kafka, n.ports.controller),
		fmt.Sprintf("controller.quorum.voters=1@127.0.0.1:%d", n.ports.controller),
		fmt.Sprintf("metrics.listener=127.0.0.1:%d", n.ports.metrics),
		"group.initial.rebalance.delay.ms=0",
	}
	sets = append(sets, n.extra...)
	args := []string{"serve"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return append(args, n.flags...)
}

// start runs a new process on the node's directory and waits until it is
// ready.
func (n *node) start() *proc {
	n.t.Helper()
	if n.cur != nil && !n.cur.exited() {
		n.t.Fatal("node already running")
	}
	n.runs++
	p := startProcVia(n.t, n.t.TempDir(), n.via, n.args()...)
	ready, err := p.waitReady(20 * time.Second)
	if err != nil {
		n.t.Fatalf("start %d: %v\nstderr:\n%s", n.runs, err, p.stderr())
	}
	if got := ready["listener.PLAINTEXT"]; got != n.kafkaAddr() {
		n.t.Fatalf("ready line names listener.PLAINTEXT=%q, want %q", got, n.kafkaAddr())
	}
	n.cur = p
	return p
}

// kill SIGKILLs the running process and waits until it is gone.
func (n *node) kill() {
	n.t.Helper()
	n.cur.signal(syscall.SIGKILL)
	if _, err := n.cur.wait(10 * time.Second); err != nil {
		n.t.Fatal(err)
	}
	if !n.cur.killedBy(syscall.SIGKILL) {
		n.t.Fatalf("process ended with %v, not by SIGKILL", n.cur.state)
	}
}

// term SIGTERMs the running process and returns its exit code and how long
// it took to exit.
func (n *node) term() (int, time.Duration) {
	n.t.Helper()
	sent := n.cur.signal(syscall.SIGTERM)
	code, err := n.cur.wait(30 * time.Second)
	if err != nil {
		n.t.Fatal(err)
	}
	n.cur.mu.Lock()
	took := n.cur.exitAt.Sub(sent)
	n.cur.mu.Unlock()
	return code, took
}
