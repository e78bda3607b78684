package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// mirrorCLI returns a runner of `strait mirror` against addr: it checks the
// exit status and returns stdout on success, stderr otherwise.
func mirrorCLI(t *testing.T, addr string) func(want int, args ...string) string {
	return func(want int, args ...string) string {
		t.Helper()
		code, stdout, stderr := runMirror(t, addr, args...)
		if code != want {
			t.Fatalf("strait mirror %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, stdout, stderr)
		}
		if want != 0 {
			return stderr
		}
		return stdout
	}
}

// runMirror runs `strait mirror --bootstrap-server addr --timeout 20s
// args...` as a separate process and returns its exit code, stdout and
// stderr.
func runMirror(t *testing.T, addr string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	all := append([]string{"mirror", "--bootstrap-server", addr, "--timeout", "20s"}, args...)
	p := startProc(t, t.TempDir(), all...)
	code, err := p.wait(30 * time.Second)
	if err != nil {
		t.Fatalf("strait %s: %v", strings.Join(all, " "), err)
	}
	return code, p.stdoutString(), p.stderr()
}

// startMirrorPair starts two single-node clusters: a source and a
// destination.
func startMirrorPair(t *testing.T) (src, dst *node) {
	t.Helper()
	ps := freePorts(t, 2)
	src, dst = newNodeOn(t, ps[0]), newNodeOn(t, ps[1])
	src.start()
	dst.start()
	return src, dst
}

// produceValues writes values to partition 0 of topic with acks=all and
// fails the test unless every one is acknowledged.
func produceValues(t *testing.T, ctx context.Context, addr, topic string, values ...string) {
	t.Helper()
	cl := newClient(t, addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

// seqValues are prefix-0 ... prefix-(n-1).
func seqValues(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// checkValues reads topic from offset 0 and checks it holds exactly want,
// in order: nothing lost, nothing duplicated.
func checkValues(t *testing.T, addr, topic string, want []string) {
	t.Helper()
	recs, _ := readAll(t, addr, topic)
	var got []string
	for _, r := range recs {
		got = append(got, r.value)
	}
	lost, dups := 0, 0
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	for _, v := range want {
		if seen[v] == 0 {
			lost++
		}
		if seen[v] > 1 {
			dups += seen[v] - 1
		}
	}
	t.Logf("%s at %s: %d acknowledged records, %d read, %d lost, %d duplicated", topic, addr, len(want), len(got), lost, dups)
	if lost != 0 || dups != 0 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s: read %q, want %q", topic, got, want)
	}
}

// tcpProxy forwards connections on a loopback port to target: another
// address for the same cluster, as a DNS alias or a load balancer would be.
type tcpProxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, addr, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target}
	p.wg.Go(p.serve)
	t.Cleanup(p.close)
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() {
			defer c.Close()
			u, err := net.Dial("tcp", p.target)
			if err != nil {
				return
			}
			defer u.Close()
			done := make(chan struct{}, 2)
			pipe := func(dst, src net.Conn) {
				_, _ = io.Copy(dst, src)
				done <- struct{}{}
			}
			go pipe(u, c)
			go pipe(c, u)
			<-done
		})
	}
}

func (p *tcpProxy) close() {
	if err := p.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return
	}
	p.wg.Wait()
}

// TestMirrorOfItselfIsRefused (issue 31): a mirror whose source is the
// destination cluster would truncate every topic it starts and copy it
// from its own empty log. CreateMirror refuses a bootstrap server that is
// one of this cluster's listeners, and one that reaches this cluster under
// another address (its cluster id); StartMirrorTopics refuses a mirror
// created while that address did not answer. The topic's acknowledged
// records are all still there, counted.
func TestMirrorOfItselfIsRefused(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nd := newNodeOn(t, freePorts(t, 1)[0])
	nd.start()
	const topic = "self"
	createTopic(t, newAdmin(t, nd.kafkaAddr()), topic, 1)
	acked := seqValues("acked", 20)
	produceValues(t, ctx, nd.kafkaAddr(), topic, acked...)
	cli := mirrorCLI(t, nd.kafkaAddr())

	msg := cli(1, "create", "self", "--source-bootstrap", nd.kafkaAddr())
	if !strings.Contains(msg, "INVALID_CONFIG") || !strings.Contains(msg, "is the PLAINTEXT listener of broker 1 of this cluster") {
		t.Fatalf("create with the node's own address printed %q", msg)
	}
	// Another name for the same listener.
	port := nd.kafkaAddr()[strings.LastIndex(nd.kafkaAddr(), ":"):]
	msg = cli(1, "create", "self", "--source-bootstrap", "localhost"+port)
	if !strings.Contains(msg, "INVALID_CONFIG") || !strings.Contains(msg, "cannot mirror itself") {
		t.Fatalf("create with localhost printed %q", msg)
	}
	// Another address that reaches this cluster: its cluster id says so.
	alias := freePorts(t, 1)[0].kafka
	aliasAddr := fmt.Sprintf("127.0.0.1:%d", alias)
	proxy := startProxy(t, aliasAddr, nd.kafkaAddr())
	msg = cli(1, "create", "self", "--source-bootstrap", aliasAddr)
	if !strings.Contains(msg, "INVALID_CONFIG") || !strings.Contains(msg, "which is this cluster's") {
		t.Fatalf("create through an alias printed %q", msg)
	}
	// Created while the alias did not answer, refused when a topic starts.
	proxy.close()
	cli(0, "create", "later", "--source-bootstrap", aliasAddr)
	startProxy(t, aliasAddr, nd.kafkaAddr())
	msg = cli(1, "start", "later", "--topic", topic)
	if !strings.Contains(msg, "INVALID_CONFIG") || !strings.Contains(msg, "which is this cluster's") {
		t.Fatalf("start through an alias printed %q", msg)
	}
	if out := cli(0, "describe", "later"); !strings.Contains(out, "0 topics") {
		t.Fatalf("the refused start left topics in the mirror: %s", out)
	}
	checkValues(t, nd.kafkaAddr(), topic, acked)
}

// TestMirrorStartKeepsRecordsTheSourceDoesNotShare (issue 31): a topic
// mirrored from a source, failed over (stopped) and written to here, then
// started again from the same source, would be truncated entirely (the
// source has no last mirrored epoch for it) and lose the writes made here.
// The start is refused, naming the partition and its records, and they are
// all still there; with --truncate-existing it goes ahead, says how many
// records it deleted, and the topic becomes the source's copy.
func TestMirrorStartKeepsRecordsTheSourceDoesNotShare(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src, dst := startMirrorPair(t)
	const topic = "orders"
	createTopic(t, newAdmin(t, src.kafkaAddr()), topic, 1)
	mirrored := seqValues("source", 20)
	produceValues(t, ctx, src.kafkaAddr(), topic, mirrored...)
	cli := mirrorCLI(t, dst.kafkaAddr())
	cli(0, "create", "m", "--source-bootstrap", src.kafkaAddr())
	cli(0, "start", "m", "--topic", topic, "--wait")
	cli(0, "stop", "m", "--topic", topic)
	waitUntil(t, 30*time.Second, "describe: STOPPED", func() (bool, string) {
		out := cli(0, "describe", "m")
		return strings.Contains(out, "STOPPED"), out
	})
	local := seqValues("written-here", 5)
	produceValues(t, ctx, dst.kafkaAddr(), topic, local...)
	kept := append(append([]string(nil), mirrored...), local...)
	checkValues(t, dst.kafkaAddr(), topic, kept)

	// 20 mirrored records, the MIRROR_PID_RESET marker, 5 written here.
	msg := cli(1, "start", "m", "--topic", topic)
	if !strings.Contains(msg, "INVALID_REQUEST") || !strings.Contains(msg, "partition 0: 26 records (offsets 0 to 25)") {
		t.Fatalf("start over records the source does not share printed %q", msg)
	}
	time.Sleep(time.Second) // nothing may be truncated behind the refusal
	checkValues(t, dst.kafkaAddr(), topic, kept)

	out := cli(0, "start", "m", "--topic", topic, "--truncate-existing", "--wait")
	if !strings.Contains(out, "deleted 26 records the source does not share (partition 0: 26)") {
		t.Fatalf("start --truncate-existing printed %q", out)
	}
	r := mirrorCompare(t, ctx, src.kafkaAddr(), dst.kafkaAddr(), topic)
	if !r.OK() || r.Records != int64(len(mirrored)) {
		t.Fatalf("after --truncate-existing the topic is not the source's copy: %v", r)
	}
}
