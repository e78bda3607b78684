package broker_test

// Helpers of the cluster integration tests (integration_cluster_*_test.go):
// requests sent to a chosen node rather than where kgo would route them,
// plain produces with a chosen acks, and views of partitions through the
// protocol. kgo sends admin requests to the node Metadata names as the
// controller, so a test of forwarding must address the other nodes itself.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// nodeRequest sends req to node id and fails the test if no answer
// arrives (a transport error, not an error code). A connection to a node
// that restarted since kgo opened it fails its next request (EOF), and
// kgo does not retry requests sent to a chosen broker: nodeRequest tries
// three times, as a client retries a broken connection.
func nodeRequest(ctx context.Context, t testing.TB, cl *kgo.Client, id int32, req kmsg.Request) kmsg.Response {
	t.Helper()
	var err error
	for range 3 {
		var resp kmsg.Response
		if resp, err = cl.Broker(int(id)).Request(ctx, req); err == nil {
			return resp
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s to node %d: %v", kmsg.NameForKey(req.Key()), id, err)
	return nil
}

// rawClient is a client that knows every broker of c, for nodeRequest.
// kgo rewrites a ProduceRequest's acks to the client's (acks=all unless
// opts say otherwise): produceTo needs a client per acks.
func rawClient(ctx context.Context, t testing.TB, c *brokertest.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl := c.Client(t, opts...)
	if err := cl.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if _, err := kadm.NewClient(cl).ListBrokers(ctx); err != nil {
		t.Fatalf("list brokers: %v", err)
	}
	return cl
}

// leaderAckClient is a rawClient whose produce requests carry acks=1.
func leaderAckClient(ctx context.Context, t testing.TB, c *brokertest.Cluster) *kgo.Client {
	t.Helper()
	return rawClient(ctx, t, c, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
}

// produceTo sends one plain (non-idempotent) batch of values to
// topic[partition] on node, with the acks cl is configured with (a
// rawClient: acks=all; a leaderAckClient: acks=1), and returns the
// partition's base offset and error, or the request's error. It may run
// on any goroutine.
func produceTo(ctx context.Context, t testing.TB, cl *kgo.Client, node int32, topic string, partition int32, values ...string) (int64, error) {
	t.Helper()
	recs := make([]record.Record, 0, len(values))
	for i, v := range values {
		recs = append(recs, record.Record{KeyLen: -1, ValueLen: int32(len(v)), Value: []byte(v), TimestampDelta: int64(i)})
	}
	batch, err := record.Build(record.BatchSpec{
		ProducerID: record.NoProducerID, ProducerEpoch: -1, BaseSequence: record.NoSequence,
		PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli(),
	}, recs, nil)
	if err != nil {
		return -1, err
	}
	req := kmsg.NewPtrProduceRequest()
	req.TimeoutMillis = 10000 // kgo sets Acks
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	// Like nodeRequest, retry a broken connection (a node restarted); a
	// retried batch appended twice would show in the offsets the tests
	// check.
	var kresp kmsg.Response
	for range 3 {
		if kresp, err = cl.Broker(int(node)).Request(ctx, req); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return -1, fmt.Errorf("produce to node %d: %w", node, err)
	}
	resp := kresp.(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return -1, fmt.Errorf("produce response for one partition has %d topics", len(resp.Topics))
	}
	pr := resp.Topics[0].Partitions[0]
	return pr.BaseOffset, kerr.ErrorForCode(pr.ErrorCode)
}

// nodeMetadata is node id's answer to a Metadata request for topic.
func nodeMetadata(ctx context.Context, t testing.TB, cl *kgo.Client, id int32, topic string) kmsg.MetadataResponseTopic {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp := nodeRequest(ctx, t, cl, id, req).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 {
		t.Fatalf("node %d: metadata for %s has %d topics", id, topic, len(resp.Topics))
	}
	return resp.Topics[0]
}

// partitions is the kadm view of topic's partitions (Metadata from
// whichever node kgo asks), failing the test on a request error.
func partitions(ctx context.Context, t testing.TB, adm *kadm.Client, topic string) kadm.PartitionDetails {
	t.Helper()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatalf("metadata %s: %v", topic, err)
	}
	td, ok := md.Topics[topic]
	if !ok || td.Err != nil {
		t.Fatalf("metadata %s: topic missing or failed: %v", topic, td.Err)
	}
	return td.Partitions
}

// sameSet reports whether a and b hold the same ids in any order.
func sameSet(a, b []int32) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// createAssigned creates topic through node with a manual replica
// assignment (partition i gets assignment[i]) and the given configs (key,
// value pairs), and fails the test on any error.
func createAssigned(ctx context.Context, t testing.TB, cl *kgo.Client, node int32, topic string, assignment [][]int32, configs ...string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for i, replicas := range assignment {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(i), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	for i := 0; i+1 < len(configs); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = configs[i], kmsg.StringPtr(configs[i+1])
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp := nodeRequest(ctx, t, cl, node, req).(*kmsg.CreateTopicsResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s through node %d: %+v", topic, node, resp.Topics)
	}
}

// logEndOffset is the log end offset of node id's replica of
// topic[partition] (-1 when the node has no such log or is down).
func logEndOffset(c *brokertest.Cluster, id int32, topic string, partition int32) int64 {
	n := c.Node(id).Node()
	if n == nil {
		return -1
	}
	l, ok := n.LogManager().Log(storage.TopicPartition{Topic: topic, Partition: partition})
	if !ok {
		return -1
	}
	return l.LogEndOffset()
}

// values are the records' values in order.
func values(rs []*kgo.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Value)
	}
	return out
}

// seq is prefix-from .. prefix-(to-1).
func seq(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

// readPartition reads topic[partition] from the start until n records
// arrived, and fails the test on a fetch error or after 20 s.
func readPartition(t testing.TB, c *brokertest.Cluster, topic string, partition int32, n int) []*kgo.Record {
	t.Helper()
	cl := c.Client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {partition: kgo.NewOffset().AtStart()},
	}))
	defer cl.Close()
	return pollN(testCtx(t, 20*time.Second), t, cl, n)
}

// runSubtests runs steps in order as subtests and stops at the first that
// fails: each builds on the cluster state the previous ones left.
func runSubtests(t *testing.T, steps []subtest) {
	t.Helper()
	for _, s := range steps {
		start := time.Now()
		ok := t.Run(s.name, s.run)
		t.Logf("%s took %v", s.name, time.Since(start).Round(time.Millisecond))
		if !ok {
			return
		}
	}
}

type subtest struct {
	name string
	run  func(t *testing.T)
}
