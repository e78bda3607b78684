package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// readyLine is what `strait serve` logs once the node serves requests: for
// a cluster node, after it registered and the controller unfenced it
// (broker.Node.Start, Kafka's BrokerLifecycleManager).
const readyLine = `msg="strait broker ready"`

// nodeStartWait bounds how long a node may take to log readyLine. A
// cluster node is ready only once a quorum formed, so it waits for its
// peers to start too.
const nodeStartWait = 60 * time.Second

// nodeSpec is one `strait serve` child: its node id, ports and directories.
type nodeSpec struct {
	id             int
	port, ctrlPort int    // PLAINTEXT and CONTROLLER listeners on 127.0.0.1
	dir            string // log.dirs
	logFile        string // the child's stderr
	voters         string // controller.quorum.voters
}

// sets are the --set arguments giving the node its identity, in Kafka
// KRaft combined mode (process.roles=broker,controller), as three
// properties files for `strait serve --config` would.
func (s nodeSpec) sets() []string {
	return []string{
		"node.id=" + strconv.Itoa(s.id),
		"process.roles=broker,controller",
		"log.dirs=" + s.dir,
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", s.port, s.ctrlPort),
		"controller.listener.names=CONTROLLER",
		"controller.quorum.voters=" + s.voters,
		// Several nodes on one machine cannot share the default
		// 127.0.0.1:9644; the bench reads nothing from it.
		"metrics.listener=",
	}
}

// nodeSpecs lays out n nodes under base on free loopback ports, all of them
// voters (controller.quorum.voters=1@host:port,2@...).
func nodeSpecs(base string, n int) ([]nodeSpec, error) {
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, err
	}
	specs := make([]nodeSpec, n)
	var voters []string
	for i := range specs {
		id := i + 1
		specs[i] = nodeSpec{
			id:       id,
			port:     ports[2*i],
			ctrlPort: ports[2*i+1],
			dir:      filepath.Join(base, fmt.Sprintf("node%d", id)),
			logFile:  filepath.Join(base, fmt.Sprintf("node%d.log", id)),
		}
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", id, specs[i].ctrlPort))
	}
	for i := range specs {
		specs[i].voters = strings.Join(voters, ",")
	}
	return specs, nil
}

// freeLoopbackAddr is 127.0.0.1:<a port free now> for a child to bind.
func freeLoopbackAddr() (string, error) {
	ports, err := freePorts(1)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", ports[0]), nil
}

// freePorts reserves n distinct loopback ports and releases them for the
// children to bind; all are held at once so none is handed out twice.
func freePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("bench: reserve a port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// serveNode is one running `strait serve` child.
type serveNode struct {
	spec  nodeSpec
	cmd   *exec.Cmd
	ready chan struct{} // closed when readyLine was logged
	// readyText is the ready line, set before ready closes.
	readyText string
	done      chan struct{} // closed when the process exited
	err       error         // cmd.Wait's, once done
}

func (n *serveNode) addr() string { return fmt.Sprintf("127.0.0.1:%d", n.spec.port) }

// startServe starts argv plus the node's --set arguments (and extra after
// them, so they win); the child's stderr goes to spec.logFile and is
// scanned for readyLine.
func startServe(argv []string, spec nodeSpec, extra []string) (*serveNode, error) {
	if err := os.MkdirAll(spec.dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: node %d data dir: %w", spec.id, err)
	}
	logf, err := os.Create(spec.logFile)
	if err != nil {
		return nil, fmt.Errorf("bench: node %d log: %w", spec.id, err)
	}
	args := append([]string(nil), argv[1:]...)
	for _, s := range append(spec.sets(), extra...) {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(argv[0], args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("bench: node %d stderr: %w", spec.id, err)
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("bench: start node %d (%s): %w", spec.id, argv[0], err)
	}
	n := &serveNode{spec: spec, cmd: cmd, ready: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(n.done)
		defer logf.Close()
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		seen := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if !seen && strings.Contains(line, readyLine) {
				seen = true
				n.readyText = line
				close(n.ready)
			}
		}
		// Whatever is left (a line over 1 MiB) still reaches the file,
		// so the child never blocks on a full pipe.
		_, _ = io.Copy(logf, pipe)
		n.err = cmd.Wait()
	}()
	return n, nil
}

// waitReady waits for the ready line, the process's exit, ctx or the
// deadline, whichever comes first.
func (n *serveNode) waitReady(ctx context.Context, deadline <-chan time.Time) error {
	select {
	case <-n.ready:
		return nil
	case <-n.done:
		return fmt.Errorf("bench: node %d exited before it was ready (%v); its log ends:\n%s", n.spec.id, n.err, logTail(n.spec.logFile, 20))
	case <-deadline:
		return fmt.Errorf("bench: node %d not ready within %v; its log ends:\n%s", n.spec.id, nodeStartWait, logTail(n.spec.logFile, 20))
	case <-ctx.Done():
		return fmt.Errorf("bench: start node %d: %w", n.spec.id, ctx.Err())
	}
}

// serveCluster is the children of one phase, stopped together.
type serveCluster struct {
	nodes []*serveNode
}

// startCluster starts one child per spec, all at once (a node is ready only
// once a quorum of voters runs), and waits until every one is ready.
func startCluster(ctx context.Context, argv []string, specs []nodeSpec, extra []string) (*serveCluster, error) {
	if len(argv) == 0 {
		return nil, errors.New("bench: empty serve command")
	}
	c := &serveCluster{}
	for _, s := range specs {
		n, err := startServe(argv, s, extra)
		if err != nil {
			c.stop()
			return nil, err
		}
		c.nodes = append(c.nodes, n)
	}
	deadline := time.After(nodeStartWait)
	for _, n := range c.nodes {
		if err := n.waitReady(ctx, deadline); err != nil {
			c.stop()
			return nil, err
		}
	}
	return c, nil
}

func (c *serveCluster) addrs() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.addr()
	}
	return out
}

func (c *serveCluster) pids() []int {
	out := make([]int, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.cmd.Process.Pid
	}
	return out
}

// stop sends SIGTERM to every node at once, the way an operator stops a
// cluster, and kills those still running after childStopWait.
func (c *serveCluster) stop() { c.stopWithin(childStopWait) }

// stopWithin is stop with its own wait; it reports whether a node had to
// be killed.
func (c *serveCluster) stopWithin(wait time.Duration) (killed bool) {
	for _, n := range c.nodes {
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.Now().Add(wait)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		wg.Go(func() {
			select {
			case <-n.done:
			case <-time.After(time.Until(deadline)):
				_ = n.cmd.Process.Kill()
				<-n.done
				mu.Lock()
				killed = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return killed
}

// logTail is the last lines of a node's log file, indented.
func logTail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	all = all[max(0, len(all)-lines):]
	return "  " + strings.Join(all, "\n  ")
}

// whileRunning is ctx for a phase run on c: it ends, with an error naming
// the node and the end of its log as its cause, as soon as a node exits.
// A producer whose brokers are gone retries until its context ends, so
// without it a phase whose nodes died (a full disk halts them all) went
// on for ever. done releases the watch.
func (c *serveCluster) whileRunning(ctx context.Context) (phase context.Context, done func()) {
	phase, cancel := context.WithCancelCause(ctx)
	for _, n := range c.nodes {
		go func() {
			select {
			case <-n.done:
				cancel(fmt.Errorf("bench: node %d exited during the phase (%v); its log ends:\n%s",
					n.spec.id, n.err, logTail(n.spec.logFile, 20)))
			case <-phase.Done():
			}
		}()
	}
	return phase, func() { cancel(nil) }
}

// phaseError is err of a phase run with whileRunning's ctx: the exited
// node's error when one ended it.
func phaseError(phase context.Context, err error) error {
	if cause := context.Cause(phase); err != nil && cause != nil && !errors.Is(cause, phase.Err()) {
		return cause
	}
	return err
}

// runPhase runs a produce phase on c, ended early by a node's exit.
func (c *serveCluster) runPhase(ctx context.Context, pc ProduceConfig) (Result, error) {
	phase, done := c.whileRunning(ctx)
	defer done()
	res, err := RunProduce(phase, pc)
	return res, phaseError(phase, err)
}
