package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// librdkafka, through kcat (its command-line client, Debian's package
// kcat; `make test` installs it), against three strait binaries: the
// client most non-Java applications use (confluent-kafka-python, -go,
// -dotnet, node-rdkafka) must work unchanged on a cluster, as franz-go's
// and sarama's tests show for theirs.

// kcatBin returns kcat's path, or skips the test loudly: it runs only
// where kcat is installed.
func kcatBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("*** kcat (librdkafka) is not installed: SKIPPING the librdkafka tests; `make test` installs Debian's kcat, or run `apt-get install kcat` ***")
	}
	return p
}

// kcat runs kcat with args, feeding it stdin, and returns its standard
// output; a non-zero exit fails the test with its standard error.
func kcat(t *testing.T, ctx context.Context, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, kcatBin(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// kcatMessage is one message of kcat -C -J.
type kcatMessage struct {
	Partition int32    `json:"partition"`
	Offset    int64    `json:"offset"`
	Key       string   `json:"key"`
	Payload   string   `json:"payload"`
	Headers   []string `json:"headers"`
}

func decodeKcatMessages(t *testing.T, out string) []kcatMessage {
	t.Helper()
	var msgs []kcatMessage
	for line := range strings.Lines(out) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m kcatMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("kcat printed %q: %v", line, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// keyedLines are n "key:value" lines for kcat -P -K:.
func keyedLines(prefix string, from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "%s-k%d:%s-v%d\n", prefix, i%17, prefix, i)
	}
	return b.String()
}

func TestKcatAgainstACluster(t *testing.T) {
	kcatBin(t)
	c := startClientCluster(t)
	nodes, bootstrap, adm := c.nodes, c.bootstrap, c.adm
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	create := func(t *testing.T, topic string) { t.Helper(); c.create(t, ctx, topic, 6) }

	t.Run("metadata from any node lists every broker", func(t *testing.T) {
		want := c.brokers()
		for _, cn := range nodes {
			var md struct {
				Brokers []struct {
					ID   int32  `json:"id"`
					Name string `json:"name"`
				} `json:"brokers"`
			}
			out := kcat(t, ctx, "", "-L", "-J", "-b", cn.kafkaAddr())
			if err := json.Unmarshal([]byte(out), &md); err != nil {
				t.Fatalf("kcat -L -J: %v: %s", err, out)
			}
			var got []string
			for _, b := range md.Brokers {
				got = append(got, fmt.Sprintf("%d@%s", b.ID, b.Name))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("bootstrapped from node %d, librdkafka sees brokers %v, want %v", cn.id, got, want)
			}
		}
	})

	t.Run("idempotent acks=all produce and consume with every codec", func(t *testing.T) {
		const n = 2000
		for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
			topic := "kcat-" + codec
			create(t, topic)
			kcat(t, ctx, keyedLines(codec, 0, n), "-P", "-b", bootstrap, "-t", topic, "-K:",
				"-X", "acks=all", "-X", "enable.idempotence=true", "-X", "compression.codec="+codec, "-H", "codec="+codec)
			msgs := decodeKcatMessages(t, kcat(t, ctx, "", "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q", "-J"))
			if len(msgs) != n {
				t.Fatalf("%s: consumed %d messages, want %d", codec, len(msgs), n)
			}
			seen := map[string]bool{}
			for _, m := range msgs {
				var i int
				if _, err := fmt.Sscanf(m.Payload, codec+"-v%d", &i); err != nil || seen[m.Payload] {
					t.Fatalf("%s: unexpected or repeated payload %q", codec, m.Payload)
				}
				seen[m.Payload] = true
				if want := fmt.Sprintf("%s-k%d", codec, i%17); m.Key != want {
					t.Fatalf("%s: %q has key %q, want %q", codec, m.Payload, m.Key, want)
				}
				if !slices.Equal(m.Headers, []string{"codec", codec}) {
					t.Fatalf("%s: %q has headers %q", codec, m.Payload, m.Headers)
				}
			}
		}
	})

	t.Run("a balanced consumer group splits the partitions and commits", func(t *testing.T) {
		const (
			topic = "kcat-group"
			group = "kcat-group"
			n     = 3000
		)
		create(t, topic)
		var members []*kcatMember
		for i := range 2 {
			members = append(members, startKcatMember(t, ctx, nodes[i].kafkaAddr(), group, topic))
		}
		// The messages go in once both members hold partitions: a
		// member that joins late would find them all consumed.
		waitUntil(t, 60*time.Second, "both kcat members to be assigned partitions", func() (bool, string) {
			described, err := adm.DescribeGroups(ctx, group)
			if err != nil {
				return false, err.Error()
			}
			g := described[group]
			holding := 0
			for _, m := range g.Members {
				if a, ok := m.Assigned.AsConsumer(); ok && len(a.Topics) > 0 && len(a.Topics[0].Partitions) > 0 {
					holding++
				}
			}
			return g.State == "Stable" && len(g.Members) == 2 && holding == 2,
				fmt.Sprintf("state %q, %d members, %d holding partitions", g.State, len(g.Members), holding)
		})
		kcat(t, ctx, keyedLines("g", 0, n), "-P", "-b", bootstrap, "-t", topic, "-K:", "-X", "acks=all")
		waitUntil(t, 60*time.Second, fmt.Sprintf("the group to consume all %d messages", n), func() (bool, string) {
			got := 0
			for _, m := range members {
				got += m.count()
			}
			return got >= n, fmt.Sprintf("%d consumed", got)
		})
		// What each member had consumed before they stop: stopping one
		// rebalances the other.
		var consumed [][]kcatMessage
		for _, m := range members {
			consumed = append(consumed, m.consumed())
		}
		// librdkafka commits what it consumed when it closes.
		for _, m := range members {
			m.terminate()
		}
		for _, m := range members {
			m.stop(t)
		}
		all := map[string]int{}
		var split [][]int32
		for i, msgs := range consumed {
			var parts []int32
			for _, msg := range msgs {
				all[msg.Payload]++
				if !slices.Contains(parts, msg.Partition) {
					parts = append(parts, msg.Partition)
				}
			}
			slices.Sort(parts)
			if len(parts) == 0 {
				t.Fatalf("member %d consumed nothing; the group did not split the partitions", i)
			}
			split = append(split, parts)
		}
		if len(all) != n {
			t.Fatalf("the group consumed %d distinct messages, want %d", len(all), n)
		}
		for _, p := range split[0] {
			if slices.Contains(split[1], p) {
				t.Fatalf("both members consumed partition %d (%v and %v)", p, split[0], split[1])
			}
		}
		c.checkCommittedAtEnd(t, ctx, group, topic)
		t.Logf("members consumed partitions %v and %v; committed offsets at the end of every partition", split[0], split[1])
	})

	// The way an operator upgrades a cluster: each node in turn stopped
	// with SIGTERM (controlled shutdown), started again and let catch up
	// to full ISRs before the next, the active controller among them,
	// while librdkafka produces and a group consumes.
	t.Run("a rolling restart under a producer and a consumer group", func(t *testing.T) {
		const (
			topic = "kcat-roll"
			group = "kcat-roll"
			chunk = 1_000
		)
		create(t, topic)
		member := startKcatMember(t, ctx, bootstrap, group, topic)
		p := startKcatProducer(t, ctx, bootstrap, topic)
		// A paced feed, about 20,000 messages a second, for the whole
		// roll.
		stopFeed, fed := make(chan struct{}), make(chan int)
		go func() {
			n := 0
			defer func() { p.stdin.Close(); fed <- n }()
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stopFeed:
					return
				case <-tick.C:
				}
				if _, err := io.WriteString(p.stdin, keyedLines("roll", n, chunk)); err != nil {
					return
				}
				n += chunk
			}
		}()
		start := time.Now()
		for _, cn := range nodes {
			code, took := cn.term()
			if code != 0 || took >= 5*time.Second {
				t.Fatalf("SIGTERM node %d: exit code %d after %v; want 0 within 5s", cn.id, code, took)
			}
			cn.launch()
			cn.awaitReady(30 * time.Second)
			caughtUp := waitUntil(t, 60*time.Second, fmt.Sprintf("every partition to have 3 in-sync replicas after node %d's restart", cn.id), func() (bool, string) {
				m, err := cn.metadata(ctx)
				if err != nil {
					return false, err.Error()
				}
				_, problems := notFullyReplicated(m, 3)
				return problems == "", problems
			})
			// Then, as an operator does before the next node, the node
			// leads its preferred partitions again (a preferred leader
			// election), and the producer is back on it. librdkafka
			// connects only to the brokers it needs
			// (enable.sparse.connections), so a node that leads nothing
			// stays disconnected, and when the last node stopped, kcat
			// could find every connection down and exit ("all broker
			// connections are down"), as it would against Kafka.
			if _, err := newAdmin(t, cn.kafkaAddr()).ElectLeaders(ctx, kadm.ElectPreferredReplica, nil); err != nil {
				t.Fatalf("preferred leader election after node %d's restart: %v", cn.id, err)
			}
			back := waitUntil(t, 30*time.Second, fmt.Sprintf("kcat to produce to node %d again", cn.id), func() (bool, string) {
				n, err := cn.requestsHandled("Produce")
				if err != nil {
					return false, err.Error()
				}
				return n > 0, fmt.Sprintf("%v produce requests", n)
			})
			t.Logf("%v: node %d stopped in %v, back and caught up %v later, producing to again %v after that", time.Since(start).Round(time.Millisecond), cn.id, took.Round(time.Millisecond), caughtUp.Round(time.Millisecond), back.Round(time.Millisecond))
		}
		close(stopFeed)
		n := <-fed
		p.wait(t, n)
		recs, _ := readAll(t, nodes[0].kafkaAddr(), topic)
		lost, dups := countValues(recs, "roll-v%d", n)
		t.Logf("rolling restart under librdkafka: delivered=%d lost=%d duplicates=%d", n, lost, dups)
		if lost != 0 || dups != 0 || len(recs) != n {
			t.Fatalf("read %d records for %d delivered: %d lost, %d duplicates", len(recs), n, lost, dups)
		}
		// The group reads everything; a rebalance may hand it some
		// records twice (at-least-once), never skip one.
		waitUntil(t, 60*time.Second, fmt.Sprintf("the group to read all %d messages", n), func() (bool, string) {
			distinct := map[string]bool{}
			for _, m := range member.consumed() {
				distinct[m.Payload] = true
			}
			state := "running"
			select {
			case <-member.done:
				state = "kcat exited (its stderr is logged at the end)"
			default:
			}
			return len(distinct) == n, fmt.Sprintf("%d distinct read, %s", len(distinct), state)
		})
		member.terminate()
		read := member.stop(t)
		t.Logf("the group read %d messages, %d of them again after a rebalance", len(read), len(read)-n)
	})

	t.Run("an idempotent producer rides through a leader kill", func(t *testing.T) {
		const (
			topic = "kcat-kill"
			n     = 200_000
			chunk = 5_000
			// The kill lands while librdkafka has produce requests in
			// flight to every broker.
			killAfter = 60_000
		)
		create(t, topic)
		victim, survivors := c.leaderOf(t, ctx, topic)
		p := startKcatProducer(t, ctx, strings.Join(survivors, ","), topic)
		start := time.Now()
		for sent := 0; sent < n; sent += chunk {
			if sent == killAfter {
				victim.kill()
				t.Logf("%v: SIGKILLed node %d, leader of %s/0, after %d messages", time.Since(start).Round(time.Millisecond), victim.id, topic, sent)
			}
			if _, err := io.WriteString(p.stdin, keyedLines("kill", sent, chunk)); err != nil {
				t.Fatal(err)
			}
		}
		p.stdin.Close()
		p.wait(t, n)
		t.Logf("kcat delivered %d messages in %v", n, time.Since(start).Round(time.Millisecond))
		recs, _ := readAll(t, survivors[0], topic)
		lost, dups := countValues(recs, "kill-v%d", n)
		t.Logf("leader kill under librdkafka: delivered=%d lost=%d duplicates=%d", n, lost, dups)
		if lost != 0 || dups != 0 || len(recs) != n {
			t.Fatalf("read %d records for %d delivered: %d lost, %d duplicates", len(recs), n, lost, dups)
		}
	})
}

// kcatProducer is `kcat -P` with an idempotent acks=all producer, fed
// "key:value" lines on stdin.
type kcatProducer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	errOut bytes.Buffer
	start  time.Time
}

func startKcatProducer(t *testing.T, ctx context.Context, bootstrap, topic string) *kcatProducer {
	t.Helper()
	p := &kcatProducer{cmd: exec.CommandContext(ctx, kcatBin(t), "-P", "-b", bootstrap, "-t", topic, "-K:",
		"-X", "acks=all", "-X", "enable.idempotence=true", "-X", "linger.ms=5",
		// Far beyond a failover: a producer stuck on a dead broker
		// fails its messages instead of waiting five minutes.
		"-X", "message.timeout.ms=45000")}
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &p.errOut
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.start = time.Now()
	return p
}

// wait fails the test unless kcat, its stdin closed, exits cleanly having
// delivered every one of the n messages.
func (p *kcatProducer) wait(t *testing.T, n int) {
	t.Helper()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("kcat: %v after %v\n%s", err, time.Since(p.start).Round(time.Millisecond), tail(p.errOut.String(), 2000))
	}
	if failed := strings.Count(p.errOut.String(), "Delivery failed"); failed > 0 {
		t.Fatalf("librdkafka failed to deliver %d of %d messages\n%s", failed, n, tail(p.errOut.String(), 2000))
	}
}

// kcatMember is one `kcat -G` consumer group member printing what it
// consumes as JSON.
type kcatMember struct {
	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex
	stderr bytes.Buffer // librdkafka's errors, shown when the test fails
	msgs   []kcatMessage
	bad    error
}

func startKcatMember(t *testing.T, ctx context.Context, addr, group, topic string) *kcatMember {
	t.Helper()
	m := &kcatMember{done: make(chan struct{})}
	// -u: unbuffered, or the last messages sit in stdio's buffer.
	m.cmd = exec.CommandContext(ctx, kcatBin(t), "-b", addr, "-G", group, "-q", "-J", "-u",
		"-X", "auto.offset.reset=earliest", topic)
	m.cmd.Stderr = lockedWriter{&m.mu, &m.stderr}
	out, err := m.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(m.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var msg kcatMessage
			err := json.Unmarshal(sc.Bytes(), &msg)
			m.mu.Lock()
			if err != nil && m.bad == nil {
				m.bad = fmt.Errorf("kcat printed %q: %w", sc.Text(), err)
			}
			m.msgs = append(m.msgs, msg)
			m.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = m.cmd.Process.Kill()
		<-m.done
		_ = m.cmd.Wait()
		if t.Failed() {
			m.mu.Lock()
			defer m.mu.Unlock()
			t.Logf("kcat group member (%s): exit %v; stderr:\n%s", group, m.cmd.ProcessState, m.stderr.String())
		}
	})
	return m
}

func (m *kcatMember) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.msgs)
}

func (m *kcatMember) consumed() []kcatMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.msgs)
}

// terminate asks the member to stop as a user does, with SIGTERM: kcat
// then closes the consumer, which commits and leaves the group.
func (m *kcatMember) terminate() { _ = m.cmd.Process.Signal(syscall.SIGTERM) }

// stop waits for the member to exit after terminate and returns what it
// consumed.
func (m *kcatMember) stop(t *testing.T) []kcatMessage {
	t.Helper()
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		t.Fatal("kcat did not exit within 30 s of SIGTERM")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bad != nil {
		t.Fatal(m.bad)
	}
	return m.msgs
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
