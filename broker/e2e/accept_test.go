package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"github.com/strait-io/strait/wire/rawconn"
)

// TestConnectionStormHeldAtOpenFileLimit: a broker started with a low
// open-file limit and no max.connections derives a connection limit that
// leaves descriptors for its logs. A storm of twice the open-file limit
// in connections is held at that limit (the rest wait in the listen
// backlog) without the process ever running out of descriptors; once the
// storm is gone new clients connect and produce. Before, gnet accepted
// until accept(2) failed with EMFILE and then stopped its engine: every
// later connection was refused while the process stayed up.
func TestConnectionStormHeldAtOpenFileLimit(t *testing.T) {
	const limit = 512
	n := newNode(t)
	n.via = []string{prlimitBin(t), fmt.Sprintf("--nofile=%d:%d", limit, limit), "--"}
	p := n.start()
	const topic = "after-storm"
	createTopic(t, newAdmin(t, n.kafkaAddr()), topic, 1)

	conns := dialStorm(t, n.kafkaAddr(), 2*limit)
	maxConns := derivedMaxConnections(t, p)
	if maxConns >= limit {
		t.Fatalf("derived max.connections %d, want 1..%d", maxConns, limit-1)
	}
	// The broker takes the storm up to its limit and no further.
	waitUntil(t, 30*time.Second, "the broker to hold max.connections connections", func() (bool, string) {
		open, _ := metricValue(n.ports.metrics, "strait_connections")
		return int(open) == maxConns, fmt.Sprintf("%v open, max.connections %d", open, maxConns)
	})
	if open, _ := metricValue(n.ports.metrics, "strait_connections"); int(open) > maxConns {
		t.Fatalf("%v connections open, max.connections %d", open, maxConns)
	}
	if fds := openFDs(t, p.cmd.Process.Pid); fds >= limit {
		t.Fatalf("the broker has %d descriptors open of its %d", fds, limit)
	}
	for _, c := range conns {
		c.Close()
	}

	produceOne(t, n.kafkaAddr(), topic)
	if n, ok := metricValue(n.ports.metrics, `strait_accept_errors_total{listener="PLAINTEXT",reason="EMFILE"}`); ok {
		t.Fatalf("%v accepts failed with EMFILE: the limit did not hold the storm back", n)
	}
	if p.exited() {
		t.Fatalf("the broker exited during the storm:\n%s", tail(p.stderr(), 3000))
	}
	t.Logf("open-file limit %d: max.connections derived %d; %s", limit, maxConns, strings.TrimSpace(p.linesWith("open-file limit")[0]))
}

// TestListenerSurvivesEMFILE: with max.connections set far above what
// the open-file limit allows, a storm of connections makes accept(2) fail
// with EMFILE. The listener counts and logs the failures and keeps
// accepting once descriptors are free again: new clients connect and
// produce. Before, the first EMFILE stopped gnet's engine for good.
func TestListenerSurvivesEMFILE(t *testing.T) {
	prlimit := prlimitBin(t)
	n := newNode(t, "max.connections=100000",
		// Nothing may open a file while the storm holds every
		// descriptor, or storage would halt the broker for a failed
		// log directory (a correct reaction, not this test's subject):
		// no checkpoint is due for an hour.
		"replica.high.watermark.checkpoint.interval.ms=3600000",
		"log.flush.offset.checkpoint.interval.ms=3600000",
		"log.flush.start.offset.checkpoint.interval.ms=3600000")
	p := n.start()
	const topic = "after-emfile"
	createTopic(t, newAdmin(t, n.kafkaAddr()), topic, 1)
	produceOne(t, n.kafkaAddr(), topic)

	pid := p.cmd.Process.Pid
	limit := openFDs(t, pid) + 100
	if out, err := exec.Command(prlimit, "--pid", strconv.Itoa(pid), fmt.Sprintf("--nofile=%d:%d", limit, limit)).CombinedOutput(); err != nil {
		t.Fatalf("prlimit: %v: %s", err, out)
	}
	conns := dialStorm(t, n.kafkaAddr(), 2*limit)
	waitUntil(t, 30*time.Second, "the broker to run out of descriptors", func() (bool, string) {
		fds := openFDs(t, pid)
		return fds >= limit-1, fmt.Sprintf("%d of %d descriptors open", fds, limit)
	})
	time.Sleep(200 * time.Millisecond) // the acceptor meets EMFILE at once and keeps retrying
	for _, c := range conns {
		c.Close()
	}

	produceOne(t, n.kafkaAddr(), topic)
	failed, _ := metricValue(n.ports.metrics, `strait_accept_errors_total{listener="PLAINTEXT",reason="EMFILE"}`)
	if failed == 0 {
		t.Fatalf("no accept failure counted\nstderr:\n%s", tail(p.stderr(), 3000))
	}
	if len(p.linesWith("too many open files")) == 0 {
		t.Fatal("the accept failures were not logged")
	}
	t.Logf("open-file limit lowered to %d: %v accepts failed with EMFILE, %d lines logged", limit, failed, len(p.linesWith("accepting a connection failed")))
	if code, _ := n.term(); code != 0 {
		t.Fatalf("exit status %d after SIGTERM", code)
	}
}

// TestMaxConnectionsPerIP: max.connections.per.ip=50 serves 50
// connections from one address and closes the 51st as it arrives, with
// Kafka's log line; closing one lets a new one in; other addresses, and a
// producer among them, are served meanwhile, and an override gives one
// address its own limit.
func TestMaxConnectionsPerIP(t *testing.T) {
	n := newNode(t, "max.connections.per.ip=50", "max.connections.per.ip.overrides=127.0.0.3:2")
	p := n.start()
	addr := n.kafkaAddr()
	var held []net.Conn
	for i := range 50 {
		c := dialFrom(t, "127.0.0.2", addr)
		if err := apiVersions(c); err != nil {
			t.Fatalf("connection %d from 127.0.0.2: %v", i+1, err)
		}
		held = append(held, c)
	}
	if err := apiVersions(dialFrom(t, "127.0.0.2", addr)); err == nil {
		t.Fatal("the 51st connection from 127.0.0.2 was served")
	}
	// Logged once the connection is closed.
	waitUntil(t, 10*time.Second, "the rejection to be logged", func() (bool, string) {
		return len(p.linesWith("Rejected connection from 127.0.0.2, address already has the configured maximum of 50 connections.")) > 0, tail(p.stderr(), 2000)
	})

	const topic = "per-ip"
	createTopic(t, newAdmin(t, addr), topic, 1)
	produceOne(t, addr, topic)

	held[0].Close()
	waitUntil(t, 10*time.Second, "a connection from 127.0.0.2 to be served again", func() (bool, string) {
		err := apiVersions(dialFrom(t, "127.0.0.2", addr))
		return err == nil, fmt.Sprint(err)
	})

	for i := range 2 {
		if err := apiVersions(dialFrom(t, "127.0.0.3", addr)); err != nil {
			t.Fatalf("connection %d from 127.0.0.3: %v", i+1, err)
		}
	}
	if err := apiVersions(dialFrom(t, "127.0.0.3", addr)); err == nil {
		t.Fatal("the third connection from 127.0.0.3 was served past its override of 2")
	}
	// The client sees its connection closed before the acceptor's
	// counter moves, so the count is awaited, not read once.
	waitUntil(t, 10*time.Second, "both rejections to be counted", func() (bool, string) {
		got, ok := metricValue(n.ports.metrics, `strait_connections_rejected_total{listener="PLAINTEXT",reason="per_ip"}`)
		return ok && got >= 2, fmt.Sprintf("strait_connections_rejected_total %v (found %v), want at least 2", got, ok)
	})
}

// TestListenerFailureExitsNonZero: a listening socket that stops
// listening under the broker (here shutdown(2) on a duplicate of it taken
// with pidfd_getfd) makes the broker stop and exit 1 naming the listener,
// so its supervisor starts it again. Before, the broker ran on, refusing
// every connection.
func TestListenerFailureExitsNonZero(t *testing.T) {
	n := newNode(t)
	p := n.start()
	fd := listeningSocketOf(t, p.cmd.Process.Pid, n.ports.kafka)
	defer unix.Close(fd)
	if err := unix.Shutdown(fd, unix.SHUT_RD); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	waitHalted(t, p, 30*time.Second, "listener PLAINTEXT", "can no longer accept connections")
}

func prlimitBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("*** prlimit (util-linux) is not installed: SKIPPING ***")
	}
	return p
}

// dialStorm opens n connections to addr and keeps them open until the
// test ends or the caller closes them. Each must connect: past the
// broker's limit they wait in its listen backlog.
func dialStorm(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d of the storm: %v", i+1, err)
		}
		conns = append(conns, c)
	}
	return conns
}

func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, from, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// apiVersions makes one ApiVersions round trip on c.
func apiVersions(c net.Conn) error {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "e2e", "1"
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)); err != nil {
		return err
	}
	resp, err := rawconn.ReadResponse(c, req, 1)
	if err != nil {
		return err
	}
	if code := resp.(*kmsg.ApiVersionsResponse).ErrorCode; code != 0 {
		return fmt.Errorf("ApiVersions error code %d", code)
	}
	return nil
}

// produceOne produces a record to topic with a new client and waits for
// the acknowledgement.
func produceOne(t *testing.T, addr, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newClient(t, addr, kgo.DefaultProduceTopic(topic))
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
	cl.Close()
}

// metricValue reads one series, e.g. `strait_connections` or
// `strait_accept_errors_total{listener="PLAINTEXT",reason="EMFILE"}`
// (labels in name order), from the metrics listener on port; false when
// the series does not exist (yet).
func metricValue(port int, series string) (float64, bool) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// openFDs counts the descriptors process pid has open.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("counting descriptors: %v", err)
	}
	return len(ents)
}

// derivedMaxConnections is the max.connections the broker logged having
// derived from its open-file limit; it fails the test unless it is a
// positive number.
func derivedMaxConnections(t *testing.T, p *proc) int {
	t.Helper()
	raw := logAttrs(firstLine(t, p, "client connections limited by the open-file limit"))["max.connections"]
	n, err := strconv.Atoi(raw)
	if err != nil || n <= 0 {
		t.Fatalf("derived max.connections %q, want a positive number: %v", raw, err)
	}
	return n
}

func firstLine(t *testing.T, p *proc, s string) string {
	t.Helper()
	lines := p.linesWith(s)
	if len(lines) == 0 {
		t.Fatalf("no line with %q logged:\n%s", s, tail(p.stderr(), 3000))
	}
	return lines[0]
}

// listeningSocketOf takes a duplicate of the socket process pid listens
// on port with (pidfd_getfd(2), Linux 5.6), or skips the test where the
// system does not allow it.
func listeningSocketOf(t *testing.T, pid, port int) int {
	t.Helper()
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Skipf("*** pidfd_open: %v: SKIPPING ***", err)
	}
	defer unix.Close(pidfd)
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		if err != nil || !strings.HasPrefix(target, "socket:") {
			continue
		}
		n, _ := strconv.Atoi(e.Name())
		fd, err := unix.PidfdGetfd(pidfd, n, 0)
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
			t.Skipf("*** pidfd_getfd: %v: SKIPPING ***", err)
		}
		if err != nil {
			continue
		}
		listening, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
		sa, _ := unix.Getsockname(fd)
		if in4, ok := sa.(*unix.SockaddrInet4); ok && listening == 1 && in4.Port == port {
			return fd
		}
		unix.Close(fd)
	}
	t.Fatalf("process %d has no socket listening on port %d", pid, port)
	return -1
}

// TestProducingConnectionsWithinOpenFileLimit: a connection that
// produces holds two descriptors, its socket and the duplicate its
// answers are written on (wire/sendfile.go), so the connection limit
// derived from the open-file limit counts two a connection. As many
// producing connections as that limit lets in leave the broker short of
// no descriptor; before, the limit counted one a connection and its
// producers could take every descriptor the logs need.
func TestProducingConnectionsWithinOpenFileLimit(t *testing.T) {
	const limit = 512
	n := newNode(t)
	n.via = []string{prlimitBin(t), fmt.Sprintf("--nofile=%d:%d", limit, limit), "--"}
	p := n.start()
	const topic = "lent"
	createTopic(t, newAdmin(t, n.kafkaAddr()), topic, 1)
	maxConns := derivedMaxConnections(t, p)
	// The admin client's connections count too; leave room for them.
	conns := make([]*rawconn.Conn, 0, maxConns)
	for range maxConns - 4 {
		rc := rawconn.Dial(t, n.kafkaAddr())
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, 1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "no-such-topic" // any Produce answer lends the socket
		rp := kmsg.NewProduceRequestTopicPartition()
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		rc.RoundTrip(req)
		conns = append(conns, rc)
	}
	if fds := openFDs(t, p.cmd.Process.Pid); fds >= limit-16 {
		t.Fatalf("%d producing connections hold the broker at %d descriptors of its %d", len(conns), fds, limit)
	}
	for _, rc := range conns {
		rc.C.Close()
	}
	produceOne(t, n.kafkaAddr(), topic)
	if p.exited() {
		t.Fatalf("the broker exited:\n%s", tail(p.stderr(), 3000))
	}
	t.Logf("open-file limit %d: max.connections derived %d, %d producing connections", limit, maxConns, len(conns))
}
