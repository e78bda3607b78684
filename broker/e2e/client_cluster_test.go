package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// clientCluster is three strait binaries set up for a third-party client's
// tests (librdkafka through kcat, kafkajs): RF=3 topics with
// min.insync.replicas=2, and a broker session short enough that a killed
// broker is fenced, and its partitions move, within a test's budget.
type clientCluster struct {
	nodes     []*clusterNode
	bootstrap string // every node's address, comma-separated
	adm       *kadm.Client
}

func startClientCluster(t *testing.T) *clientCluster {
	t.Helper()
	return startClientClusterSession(t, 3*time.Second)
}

// startClientClusterSession is startClientCluster with the broker session
// timeout given: a test that needs a killed broker to stay the leader of
// its partitions for a while sets it long.
func startClientClusterSession(t *testing.T, session time.Duration) *clientCluster {
	t.Helper()
	nodes := newClusterNodes(t, 3,
		"default.replication.factor=3",
		"min.insync.replicas=2",
		"offsets.topic.replication.factor=3",
		"num.partitions=6",
		fmt.Sprintf("broker.session.timeout.ms=%d", session.Milliseconds()),
		"broker.heartbeat.interval.ms=300",
	)
	for _, cn := range nodes {
		cn.launch()
	}
	for _, cn := range nodes {
		cn.awaitReady(30 * time.Second)
	}
	return &clientCluster{
		nodes:     nodes,
		bootstrap: strings.Join(clusterAddrs(nodes), ","),
		adm:       kadm.NewClient(newClient(t, nodes[0].kafkaAddr())),
	}
}

// brokers are the nodes as "id@host:port", in id order: what a client
// bootstrapped from any of them must list.
func (c *clientCluster) brokers() []string {
	var out []string
	for _, cn := range c.nodes {
		out = append(out, fmt.Sprintf("%d@%s", cn.id, cn.kafkaAddr()))
	}
	return out
}

// create makes topic with partitions partitions of three replicas.
func (c *clientCluster) create(t *testing.T, ctx context.Context, topic string, partitions int32) {
	t.Helper()
	resp, err := c.adm.CreateTopic(ctx, partitions, 3, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// leaderOf waits for topic/0 to have a leader and returns that node and the
// addresses of the others.
func (c *clientCluster) leaderOf(t *testing.T, ctx context.Context, topic string) (leader *clusterNode, others []string) {
	t.Helper()
	var id int32
	waitUntil(t, 10*time.Second, topic+"/0 to have a leader", func() (bool, string) {
		m, err := c.nodes[0].metadata(ctx)
		if err != nil {
			return false, err.Error()
		}
		id = leaderIn(m, topic, 0)
		return id > 0, fmt.Sprintf("leader %d", id)
	})
	leader = c.nodes[id-1]
	for _, cn := range c.nodes {
		if cn != leader {
			others = append(others, cn.kafkaAddr())
		}
	}
	return leader, others
}

// checkCommittedAtEnd fails the test unless group's committed offset for
// every partition of topic is the partition's end offset.
func (c *clientCluster) checkCommittedAtEnd(t *testing.T, ctx context.Context, group, topic string) {
	t.Helper()
	committed, err := c.adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := c.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		got, ok := committed.Lookup(topic, o.Partition)
		if !ok || got.Err != nil || got.At != o.Offset {
			t.Fatalf("partition %d: committed %+v, want the end offset %d", o.Partition, got, o.Offset)
		}
	})
}

// countValues compares the values in recs with the n values
// fmt.Sprintf(format, i) a producer was told were delivered: lost are
// missing, duplicates are extra copies of any value.
func countValues(recs []stored, format string, n int) (lost, duplicates int) {
	seen := map[string]int{}
	for _, r := range recs {
		seen[r.value]++
	}
	for _, c := range seen {
		duplicates += c - 1
	}
	for i := range n {
		if seen[fmt.Sprintf(format, i)] == 0 {
			lost++
		}
	}
	return lost, duplicates
}
