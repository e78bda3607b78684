package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// clusterNode is one node of a cluster of strait processes that a user
// starts as in Kafka's KRaft combined mode: `strait serve --config
// nodeN.properties`, run in the directory holding the file. It reuses
// node's data directory, ports and kill/term.
type clusterNode struct {
	*node
	id   int32
	dir  string // where the properties file is and the process runs
	file string // nodeN.properties
	// meta asks this node alone (its seed broker), never another: each
	// node's metadata image is checked on its own.
	meta *kgo.Client
}

// clusterProps are the properties of node id of a cluster of all: a
// combined broker and controller, the three voters on their CONTROLLER
// listeners. metrics.listener is Strait's own key (three processes on one
// host cannot share its default port); group.initial.rebalance.delay.ms=0
// is in Kafka's own config/server.properties.
func clusterProps(id int32, all []*clusterNode, extra []string) string {
	var voters []string
	for _, n := range all {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", n.id, n.ports.controller))
	}
	me := all[id-1]
	lines := []string{
		"# Strait e2e: node " + fmt.Sprint(id) + " of a three-node KRaft combined-mode cluster",
		fmt.Sprintf("node.id=%d", id),
		"process.roles=broker,controller",
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", me.ports.kafka, me.ports.controller),
		fmt.Sprintf("advertised.listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", me.ports.kafka, me.ports.controller),
		"controller.listener.names=CONTROLLER",
		"inter.broker.listener.name=PLAINTEXT",
		"controller.quorum.voters=" + strings.Join(voters, ","),
		"log.dirs=" + me.logDir,
		fmt.Sprintf("metrics.listener=127.0.0.1:%d", me.ports.metrics),
		"group.initial.rebalance.delay.ms=0",
	}
	return strings.Join(append(lines, extra...), "\n") + "\n"
}

// requestsHandled is the node's strait_requests_total for api (e.g.
// "Produce"), counted since it started, read from its metrics listener.
func (cn *clusterNode) requestsHandled(api string) (float64, error) {
	v, _, err := scrapeMetric(cn.ports.metrics, `strait_requests_total{api="`+api+`"}`)
	return v, err // none handled yet: the series does not exist
}

// scrapeMetric reads one series from the metrics listener on port:
// its value and whether it exists.
func scrapeMetric(port int, series string) (float64, bool, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil, err
		}
	}
	return 0, false, sc.Err()
}

// newClusterNodes picks every node's ports up front (each file names all
// the voters) and writes node1..nodeN.properties into one directory.
func newClusterNodes(t *testing.T, n int, extra ...string) []*clusterNode {
	t.Helper()
	return newClusterNodesOn(t, freePorts(t, n), extra...)
}

// newClusterNodesOn is newClusterNodes on ports picked by the caller, with
// other nodes' (one node per ports).
func newClusterNodesOn(t *testing.T, ps []ports, extra ...string) []*clusterNode {
	t.Helper()
	dir := t.TempDir()
	var nodes []*clusterNode
	for i, p := range ps {
		nodes = append(nodes, &clusterNode{node: newNodeOn(t, p), id: int32(i + 1), dir: dir, file: fmt.Sprintf("node%d.properties", i+1)})
	}
	for _, cn := range nodes {
		if err := os.WriteFile(filepath.Join(dir, cn.file), []byte(clusterProps(cn.id, nodes, extra)), 0o644); err != nil {
			t.Fatal(err)
		}
		cn.meta = newClient(t, cn.kafkaAddr())
	}
	return nodes
}

// launch starts the node's process without waiting: the voters of a new
// cluster are ready only once a quorum of them runs.
func (cn *clusterNode) launch() *proc {
	cn.t.Helper()
	if cn.cur != nil && !cn.cur.exited() {
		cn.t.Fatalf("node %d already running", cn.id)
	}
	cn.runs++
	cn.cur = startProc(cn.t, cn.dir, "serve", "--config", cn.file)
	return cn.cur
}

// awaitReady waits for the running process's ready line.
func (cn *clusterNode) awaitReady(timeout time.Duration) {
	cn.t.Helper()
	ready, err := cn.cur.waitReady(timeout)
	if err != nil {
		cn.t.Fatalf("node %d, start %d: %v", cn.id, cn.runs, err)
	}
	if got := ready["listener.PLAINTEXT"]; got != cn.kafkaAddr() {
		cn.t.Fatalf("node %d: ready line names listener.PLAINTEXT=%q, want %q", cn.id, got, cn.kafkaAddr())
	}
}

func (cn *clusterNode) running() bool { return cn.cur != nil && !cn.cur.exited() }

// metadata asks this node (not the cluster) for the metadata of every
// topic.
func (cn *clusterNode) metadata(ctx context.Context) (*kmsg.MetadataResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	seeds := cn.meta.SeedBrokers()
	if len(seeds) != 1 {
		return nil, fmt.Errorf("node %d: %d seed brokers", cn.id, len(seeds))
	}
	resp, err := seeds[0].Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return nil, fmt.Errorf("metadata from node %d: %w", cn.id, err)
	}
	return resp.(*kmsg.MetadataResponse), nil
}

// request sends req to this node alone (not to the controller or a
// partition leader, as a kgo client would route it).
func (cn *clusterNode) request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return cn.meta.SeedBrokers()[0].Request(ctx, req)
}

// clusterAddrs are the PLAINTEXT addresses of every node: clients
// bootstrap from all of them.
func clusterAddrs(nodes []*clusterNode) []string {
	var out []string
	for _, cn := range nodes {
		out = append(out, cn.kafkaAddr())
	}
	return out
}

// brokerIDs are the ids of the brokers a metadata answer lists, sorted,
// each with its advertised host:port.
func brokerIDs(m *kmsg.MetadataResponse) []string {
	var out []string
	for _, b := range m.Brokers {
		out = append(out, fmt.Sprintf("%d@%s:%d", b.NodeID, b.Host, b.Port))
	}
	slices.Sort(out)
	return out
}

// partitionState is one partition as a metadata answer shows it.
type partitionState struct {
	topic     string
	partition int32
	leader    int32
	epoch     int32
	replicas  []int32
	isr       []int32
	err       error
}

func partitions(m *kmsg.MetadataResponse) []partitionState {
	var out []partitionState
	for _, t := range m.Topics {
		if t.Topic == nil {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			out = append(out, partitionState{topic: *t.Topic, partition: -1, leader: -1, err: err})
			continue
		}
		for _, p := range t.Partitions {
			out = append(out, partitionState{*t.Topic, p.Partition, p.Leader, p.LeaderEpoch,
				p.Replicas, p.ISR, kerr.ErrorForCode(p.ErrorCode)})
		}
	}
	slices.SortFunc(out, func(a, b partitionState) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return int(a.partition - b.partition)
	})
	return out
}

// leaderIn is the leader of topic/partition in m, -1 when m does not
// name one.
func leaderIn(m *kmsg.MetadataResponse, topic string, partition int32) int32 {
	for _, p := range partitions(m) {
		if p.topic == topic && p.partition == partition && p.err == nil {
			return p.leader
		}
	}
	return -1
}

// ledBy lists the partitions m shows led by id.
func ledBy(m *kmsg.MetadataResponse, id int32) []string {
	var out []string
	for _, p := range partitions(m) {
		if p.leader == id {
			out = append(out, fmt.Sprintf("%s-%d", p.topic, p.partition))
		}
	}
	return out
}

// inISRs lists the partitions of m whose ISR holds id.
func inISRs(m *kmsg.MetadataResponse, id int32) []string {
	var out []string
	for _, p := range partitions(m) {
		if slices.Contains(p.isr, id) {
			out = append(out, fmt.Sprintf("%s-%d", p.topic, p.partition))
		}
	}
	return out
}

// notFullyReplicated describes the partitions of m without a leader or
// with fewer than want in-sync replicas, "" when there are none; count is
// how many partitions m lists.
func notFullyReplicated(m *kmsg.MetadataResponse, want int) (count int, problems string) {
	var bad []string
	for _, p := range partitions(m) {
		count++
		if p.err != nil || p.leader < 0 || len(p.isr) != want || len(p.replicas) != want {
			bad = append(bad, fmt.Sprintf("%s-%d leader=%d replicas=%v isr=%v err=%v", p.topic, p.partition, p.leader, p.replicas, p.isr, p.err))
		}
	}
	if len(bad) > 5 {
		bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
	}
	return count, strings.Join(bad, "; ")
}

// waitUntil polls cond every 20 ms until it holds, failing the test after
// timeout with cond's last description of what is missing, and returns
// how long it took.
func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	var last string
	for {
		ok, why := cond()
		if ok {
			return time.Since(start)
		}
		last = why
		if time.Since(start) > timeout {
			t.Fatalf("waiting %v for %s: %s", timeout, what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
