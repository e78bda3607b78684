package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/wire/rawconn"
)

// Issue 31: a handful of clients sending huge requests must not take the
// broker's memory. Each test starts the binary with the default settings,
// measures its resident set idle, attacks it, checks the rise (the
// process's peak, VmHWM, less the idle figure) and that an ordinary
// client keeps being served meanwhile, then that the resident set falls
// back once the attackers leave.
const (
	// hugeFrameBytes is just under the default socket.request.max.bytes
	// (104857600), so the broker reads such a request instead of closing
	// the connection at its size prefix.
	hugeFrameBytes = 100<<20 - 1024
	// maxMemoryRise is what one attack may add to the resident set.
	maxMemoryRise = 400 << 20
	// settleWithin is how soon the resident set must come back within
	// twice its idle figure once the clients have left.
	settleWithin = 60 * time.Second
)

// TestConcurrentHugeProducesBoundMemory: three connections each send a
// 100 MB Produce request at once. They are refused MESSAGE_TOO_LARGE (the
// topic keeps the default max.message.bytes), the broker's resident set
// rises by at most maxMemoryRise while a kgo client keeps producing and
// fetching, and it falls back to within twice idle once they are gone.
func TestConcurrentHugeProducesBoundMemory(t *testing.T) {
	b := startMemoryBroker(t)
	frame := hugeProduceFrame(t, b.hugeTopic, hugeFrameBytes)

	served := b.serveMeanwhile(t)
	for served.count() == 0 && served.err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	before := served.count()
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = sendHugeProduce(b.addr, frame)
		}()
	}
	wg.Wait()
	rounds := served.count() - before
	frame = nil
	served.stop(t)
	for i, err := range errs {
		if err != nil {
			t.Errorf("huge produce %d: %v", i, err)
		}
	}
	b.checkRise(t, rounds)
	b.checkSettles(t)
}

// TestHalfSentFramesBoundMemory: ten connections each send the first half
// of a 100 MB Produce request and then stop, holding their connections
// open. The broker's resident set rises by at most maxMemoryRise while a
// kgo client keeps producing and fetching, and falls back to within twice
// idle once the connections close.
func TestHalfSentFramesBoundMemory(t *testing.T) {
	b := startMemoryBroker(t)
	frame := hugeProduceFrame(t, b.hugeTopic, hugeFrameBytes)
	half := frame[:len(frame)/2]

	served := b.serveMeanwhile(t)
	var (
		sent  atomic.Int64
		conns []net.Conn
		wg    sync.WaitGroup
	)
	for range 10 {
		c, err := net.Dial("tcp", b.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Written in pieces, so the test sees how far the broker
			// reads; a write the broker does not read blocks until
			// the connection closes.
			for rest := half; len(rest) > 0; {
				n, err := c.Write(rest[:min(len(rest), 1<<20)])
				sent.Add(int64(n))
				if err != nil {
					return
				}
				rest = rest[n:]
			}
		}()
	}
	// The broker has read all it will once the writes stop moving for a
	// second.
	last, still := int64(-1), 0
	for deadline := time.Now().Add(60 * time.Second); still < 10 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if n := sent.Load(); n != last {
			last, still = n, 0
		} else {
			still++
		}
	}
	t.Logf("the ten connections wrote %d MiB of their %d MiB", sent.Load()>>20, 10*len(half)>>20)
	// The connections the broker stopped reading are counted.
	if waits := b.metric(t, "strait_memory_pool_waits_total"); waits < 1 {
		t.Errorf("strait_memory_pool_waits_total = %v while connections wait for request memory", waits)
	}
	// The ordinary client keeps being served while they hang.
	before := served.count()
	time.Sleep(time.Second)
	rounds := served.count() - before
	served.stop(t)
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()
	frame, half = nil, nil
	b.checkRise(t, rounds)
	b.checkSettles(t)
}

// memoryBroker is one strait process under a memory attack.
type memoryBroker struct {
	n         *node
	pid       int
	addr      string
	hugeTopic string
	idleRSS   int64
}

func startMemoryBroker(t *testing.T) *memoryBroker {
	t.Helper()
	n := newNode(t)
	p := n.start()
	b := &memoryBroker{n: n, pid: p.cmd.Process.Pid, addr: n.kafkaAddr(), hugeTopic: "huge"}
	adm := newAdmin(t, b.addr)
	createTopic(t, adm, b.hugeTopic, 1)
	createTopic(t, adm, "ordinary", 1)
	// One round trip first, so what the ordinary client costs is in the
	// idle figure.
	warm := b.serveMeanwhile(t)
	for warm.count() == 0 && warm.err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	warm.stop(t)
	b.idleRSS = procStatusBytes(t, b.pid, "VmRSS")
	t.Logf("idle: VmRSS %d MiB", b.idleRSS>>20)
	return b
}

// metric is the value of a series on the broker's metrics listener, -1
// when it is missing.
func (b *memoryBroker) metric(t *testing.T, series string) float64 {
	t.Helper()
	v, ok, err := scrapeMetric(b.n.ports.metrics, series)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return -1
	}
	return v
}

// checkRise fails when the process's peak resident set rose by more than
// maxMemoryRise over idle, or when the ordinary client completed no round
// trip (rounds) during the attack.
func (b *memoryBroker) checkRise(t *testing.T, rounds int) {
	t.Helper()
	peak := procStatusBytes(t, b.pid, "VmHWM")
	t.Logf("peak: VmHWM %d MiB, %d MiB over idle; %d ordinary round trips meanwhile", peak>>20, (peak-b.idleRSS)>>20, rounds)
	if rise := peak - b.idleRSS; rise > maxMemoryRise {
		t.Errorf("resident set rose by %d MiB, want at most %d MiB", rise>>20, maxMemoryRise>>20)
	}
	if rounds == 0 {
		t.Error("the ordinary client completed no produce and fetch round trip meanwhile")
	}
}

// checkSettles waits until the resident set is back within twice idle.
func (b *memoryBroker) checkSettles(t *testing.T) {
	t.Helper()
	start := time.Now()
	var rss int64
	for time.Since(start) < settleWithin {
		if rss = procStatusBytes(t, b.pid, "VmRSS"); rss <= 2*b.idleRSS {
			t.Logf("VmRSS back to %d MiB after %v", rss>>20, time.Since(start).Round(100*time.Millisecond))
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Errorf("VmRSS still %d MiB %v after the clients left, want at most %d MiB (twice idle)", rss>>20, settleWithin, 2*b.idleRSS>>20)
}

// ordinaryClient produces a record and fetches it back, over and over,
// until stopped: the client every broker must keep serving.
type ordinaryClient struct {
	cancel context.CancelFunc
	done   chan struct{}
	rounds atomic.Int64
	mu     sync.Mutex
	first  error
}

func (b *memoryBroker) serveMeanwhile(t *testing.T) *ordinaryClient {
	t.Helper()
	cl := newClient(t, b.addr,
		kgo.DefaultProduceTopic("ordinary"),
		kgo.ConsumeTopics("ordinary"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	oc := &ordinaryClient{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(oc.done)
		defer cl.Close()
		for i := 0; ctx.Err() == nil; i++ {
			if err := roundTrip(ctx, cl, i); err != nil {
				if ctx.Err() == nil {
					oc.mu.Lock()
					oc.first = err
					oc.mu.Unlock()
				}
				return
			}
			oc.rounds.Add(1)
		}
	}()
	return oc
}

// roundTrip produces one record and polls until it comes back; each half
// must finish within 20 s.
func roundTrip(ctx context.Context, cl *kgo.Client, i int) error {
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	value := fmt.Sprintf("round %d", i)
	r, err := cl.ProduceSync(pctx, &kgo.Record{Value: []byte(value)}).First()
	if err != nil {
		return fmt.Errorf("produce %q: %w", value, err)
	}
	fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(fctx)
		if err := fctx.Err(); err != nil {
			return fmt.Errorf("fetch %q at offset %d: %w", value, r.Offset, err)
		}
		for _, e := range fs.Errors() {
			return fmt.Errorf("fetch %q: %w", value, e.Err)
		}
		for _, got := range fs.Records() {
			if got.Offset == r.Offset {
				return nil
			}
		}
	}
}

func (oc *ordinaryClient) count() int { return int(oc.rounds.Load()) }

func (oc *ordinaryClient) err() error {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	return oc.first
}

// stop ends the round trips and fails the test if one failed; it returns
// how many completed.
func (oc *ordinaryClient) stop(t *testing.T) int {
	t.Helper()
	oc.cancel()
	<-oc.done
	if err := oc.err(); err != nil {
		t.Errorf("ordinary client not served: %v", err)
	}
	return oc.count()
}

// hugeProduceFrame is a whole Produce v7 request, size prefix included,
// of frameBytes after the prefix: one batch holding one record whose
// value fills it, to partition 0 of topic.
func hugeProduceFrame(t *testing.T, topic string, frameBytes int) []byte {
	t.Helper()
	build := func(valueLen int) []byte {
		value := make([]byte, valueLen)
		batch, err := record.Build(record.BatchSpec{
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
			BaseTimestamp: time.Now().UnixMilli(),
		}, []record.Record{{KeyLen: -1, Value: value, ValueLen: int32(valueLen)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		req := rawconn.Produce(topic, 7, batch)
		req.Acks, req.TimeoutMillis = 1, 30000
		return kmsg.NewRequestFormatter(kmsg.FormatterClientID("huge")).AppendRequest(nil, req, 1)
	}
	// The framing around the value does not depend on its length as
	// long as the record's varints keep their width.
	overhead := len(build(frameBytes/2)) - 4 - frameBytes/2
	frame := build(frameBytes - overhead)
	if got := len(frame) - 4; got != frameBytes {
		t.Fatalf("built a %d-byte frame, want %d", got, frameBytes)
	}
	return frame
}

// sendHugeProduce writes frame on a new connection and expects the
// answer MESSAGE_TOO_LARGE.
func sendHugeProduce(addr string, frame []byte) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Minute))
	if _, err := c.Write(frame); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	kresp, err := rawconn.ReadResponse(bufio.NewReader(c), req, 1)
	if err != nil {
		return err
	}
	resp := kresp.(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return fmt.Errorf("answer %+v", resp)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.MessageTooLarge.Code {
		return fmt.Errorf("answered %v, want MESSAGE_TOO_LARGE", kerr.ErrorForCode(code))
	}
	return nil
}

// procStatusBytes reads a kB field of /proc/PID/status (VmRSS, VmHWM) in
// bytes.
func procStatusBytes(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", field, line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
