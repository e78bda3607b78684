package brokertest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker"
	"github.com/strait-io/strait/broker/brokertest/faultnet"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// clusterRaftTimeout is raft's heartbeat and election timeout in cluster
// tests: three voters on a loaded 2-core machine under -race need more
// slack than one voter electing itself.
const clusterRaftTimeout = 200 * time.Millisecond

// clusterDefaults make failures show within a test's time: brokers
// heartbeat every 100 ms and are fenced after 1.5 s of silence, followers
// leave the ISR after 2 s of lag, and a partition's replicas all live on
// different nodes. Tests override any of them with WithConfig.
var clusterDefaults = []string{
	"broker.heartbeat.interval.ms=100",
	"broker.session.timeout.ms=1500",
	"replica.lag.time.max.ms=2000",
	"replica.fetch.backoff.ms=50",
	"replica.socket.timeout.ms=3000",
	"offsets.topic.replication.factor=3",
	"offsets.topic.num.partitions=3",
}

// Cluster is an in-process Strait cluster: n nodes on loopback, the first
// min(n, 3) of them voters in combined mode (process.roles=broker,
// controller), the others broker-only raft non-voters. Every connection
// between nodes goes through Net, so tests cut links, isolate nodes and
// heal the network; test clients connect directly.
type Cluster struct {
	Net *faultnet.Network

	nodes []*Broker // node id i+1 at index i
}

// StartCluster starts an n-node cluster and stops it when the test ends.
// opts apply to every node (WithConfig values win over the cluster
// defaults). It fails the test unless every node comes up.
func StartCluster(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("brokertest: a cluster needs at least one node, not %d", n)
	}
	c := &Cluster{Net: faultnet.New()}
	voterCount := min(n, 3)
	ports := FreePorts(t, n+voterCount)
	plain, ctrl := ports[:n], make([]int, n)
	copy(ctrl, ports[n:])
	var voters []string
	for i := range voterCount {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, ctrl[i]))
	}
	votersText := strings.Join(voters, ",")
	for i := range n {
		id := int32(i + 1)
		o := options{logLevel: slog.LevelInfo}
		for _, opt := range opts {
			opt(&o)
		}
		if o.dir == "" {
			o.dir = t.TempDir()
		}
		o.nodeID = id
		o.voters = func(int) string { return votersText }
		o.dialer = c.Net.Dialer(id)
		o.raftTimeout = clusterRaftTimeout
		o.clusterSets = clusterDefaults
		o.logPrefix = fmt.Sprint(id)
		o.onStarted = func(b *Broker) {
			for name, addr := range b.Node().Addrs() {
				if name != "metrics" {
					c.Net.Register(id, addr)
				}
			}
		}
		c.Net.Register(id, fmt.Sprintf("127.0.0.1:%d", plain[i]))
		if ctrl[i] != 0 {
			c.Net.Register(id, fmt.Sprintf("127.0.0.1:%d", ctrl[i]))
		}
		b := &Broker{opts: o, logs: newLogBuffer(logBufferMax)}
		b.addrs = map[string]string{"PLAINTEXT": fmt.Sprintf("127.0.0.1:%d", plain[i])}
		if ctrl[i] != 0 {
			b.addrs["CONTROLLER"] = fmt.Sprintf("127.0.0.1:%d", ctrl[i])
		}
		c.nodes = append(c.nodes, b)
	}
	t.Cleanup(func() {
		// Stop the non-voters first and the voters together: a voter
		// stopping alone waits for the others to elect a new controller.
		var wg sync.WaitGroup
		for _, b := range c.nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := b.stop(); err != nil {
					t.Errorf("brokertest: node %d: graceful stop at the end of the test: %v", b.opts.nodeID, err)
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			for _, b := range c.nodes {
				t.Logf("node %d log (last %d KiB):\n%s", b.opts.nodeID, logBufferMax>>10, b.logs.String())
			}
			t.Logf("network: %v", c.Net.Stats())
		}
	})
	// Voters wait for a quorum while they start: start every node at once.
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, b := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.startNode(t, b, plain[i], ctrl[i])
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("brokertest: node %d: %v", i+1, err)
		}
	}
	// Each node returns from its start once it is unfenced itself; its
	// image may not yet show the others unfenced, and a client of it
	// would not find them in its Metadata (kgo: "unknown broker"). A
	// cluster is ready when every node lists every broker.
	c.WaitFor(t, 30*time.Second, "every node to see every broker unfenced", func() bool {
		for _, b := range c.nodes {
			if n := b.Node(); n == nil || len(n.Image().UnfencedBrokers()) != len(c.nodes) {
				return false
			}
		}
		return true
	})
	return c
}

// startNode starts b on its first ports. A free port picked in advance can
// be taken by another process before the node binds it (seen in CI, with
// other test binaries running); the PLAINTEXT port is nobody's to know in
// advance, so the node then starts again on a new one. The CONTROLLER port
// is in every voter's controller.quorum.voters and cannot move.
func (c *Cluster) startNode(t testing.TB, b *Broker, plain, ctrl int) error {
	for attempt := 0; ; attempt++ {
		err := b.start(plain, ctrl, 0)
		if err == nil || attempt == 5 || !strings.Contains(err.Error(), "listener PLAINTEXT") || !strings.Contains(err.Error(), "address already in use") {
			return err
		}
		ports, leases, err := freePorts(1)
		if err != nil {
			return err
		}
		t.Cleanup(func() { releaseAll(leases) }) // Cleanup, unlike Fatal, may be called from any goroutine
		plain = ports[0]
		addr := fmt.Sprintf("127.0.0.1:%d", plain)
		c.Net.Register(b.opts.nodeID, addr)
		b.mu.Lock()
		b.addrs["PLAINTEXT"] = addr
		b.mu.Unlock()
	}
}

// Node is the node with the given id (1-based).
func (c *Cluster) Node(id int32) *Broker {
	return c.nodes[id-1]
}

// Nodes lists every node, running or not.
func (c *Cluster) Nodes() []*Broker { return slices.Clone(c.nodes) }

// Running lists the ids of the nodes running now.
func (c *Cluster) Running() []int32 {
	var out []int32
	for _, b := range c.nodes {
		if b.Node() != nil {
			out = append(out, b.opts.nodeID)
		}
	}
	return out
}

// Addrs are the PLAINTEXT addresses of every node, the bootstrap list.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, b := range c.nodes {
		out = append(out, b.Addr())
	}
	return out
}

// Client returns a kgo client bootstrapped at every node, closed when the
// test ends; opts come after the harness's.
func (c *Cluster) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, c.Addrs(), append(append([]kgo.Opt{kgo.MetadataMinAge(50 * time.Millisecond)}, c.nodes[0].opts.clientOpts...), opts...))
}

// Admin returns a kadm client bootstrapped at every node.
func (c *Cluster) Admin(t testing.TB, opts ...kgo.Opt) *kadm.Client {
	t.Helper()
	return newAdmin(t, c.Addrs(), append(slices.Clone(c.nodes[0].opts.clientOpts), opts...))
}

// Kill stops node id the way SIGKILL does (Broker.Crash).
func (c *Cluster) Kill(t testing.TB, id int32) { t.Helper(); c.Node(id).Crash(t) }

// Restart starts a killed or stopped node again on its directory and
// ports.
func (c *Cluster) Restart(t testing.TB, id int32) { t.Helper(); c.Node(id).StartAgain(t) }

// Stop stops node id gracefully (controlled shutdown first).
func (c *Cluster) Stop(t testing.TB, id int32) { t.Helper(); c.Node(id).Stop(t) }

// Image is the newest metadata image a running node has applied; the
// node with the highest offset when several run.
func (c *Cluster) Image() *raftmeta.Image {
	var best *raftmeta.Image
	for _, b := range c.nodes {
		if n := b.Node(); n != nil {
			if img := n.Image(); best == nil || img.Offset > best.Offset {
				best = img
			}
		}
	}
	return best
}

// Leader is the leader of a partition in the newest image (-1 when it
// has none or the topic is unknown).
func (c *Cluster) Leader(topic string, partition int32) int32 {
	img := c.Image()
	if img == nil {
		return -1
	}
	t, ok := img.Topics[topic]
	if !ok || int(partition) >= len(t.Partitions) {
		return -1
	}
	return t.Partitions[partition].Leader
}

// Controller is the active controller's node id as the running nodes see
// it (-1 if none knows one).
func (c *Cluster) Controller() int32 {
	for _, b := range c.nodes {
		if n := b.Node(); n != nil {
			if id := n.ControllerID(); id >= 0 {
				return id
			}
		}
	}
	return -1
}

// WaitFor polls cond every 20 ms until it holds, failing the test with
// what after timeout.
func (c *Cluster) WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("brokertest: timed out after %v waiting for %s", timeout, what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// WaitForISR waits until every partition of topic has a leader and an ISR
// of size replicas, as every running node sees it, and every running
// replica has taken the leadership that says (replicasTook).
func (c *Cluster) WaitForISR(t testing.TB, topic string, replicas int, timeout time.Duration) {
	t.Helper()
	c.WaitFor(t, timeout, fmt.Sprintf("%s fully in sync with %d replicas on every running node", topic, replicas), func() bool {
		// Every running node must see it, not just the newest image: a
		// client asks whichever broker it likes next, and a node that has
		// not applied the topic yet answers UNKNOWN_TOPIC_OR_PARTITION.
		seen := 0
		for _, b := range c.nodes {
			n := b.Node()
			if n == nil {
				continue
			}
			tp, ok := n.Image().Topics[topic]
			if !ok {
				return false
			}
			for _, p := range tp.Partitions {
				if p.Leader < 0 || len(p.ISR) != replicas || !b.replicasTook(n, topic, p) {
					return false
				}
			}
			seen++
		}
		return seen > 0
	})
}

// replicasTook reports whether node n's replica of p (if it hosts one)
// has taken the leader and leader epoch p names. A node publishes an image
// before its replica manager applies it, so for a moment its image may
// name it leader while its replica is not yet one (a request there is
// answered NOT_LEADER_OR_FOLLOWER, and the replica logs "leader" later).
func (b *Broker) replicasTook(n *broker.Node, topic string, p *raftmeta.Partition) bool {
	if !slices.Contains(p.Replicas, b.opts.nodeID) {
		return true
	}
	rm := n.Replicas()
	if rm == nil {
		return false
	}
	r, ok := rm.Partition(storage.TopicPartition{Topic: topic, Partition: p.Index})
	return ok && r.Leader() == p.Leader && r.LeaderEpoch() == p.LeaderEpoch
}
