package broker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker"
	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/coordinator/share"
	"github.com/strait-io/strait/raftmeta"
)

// shareRPCs sends the share coordinator's RPCs (FindCoordinator key type
// 2 and keys 83-87, KIP-932) with a franz-go client over real sockets, to
// the broker a test names: kgo does not route these inter-broker keys.
// A request that did not get an answer (the broker is down) reports
// COORDINATOR_NOT_AVAILABLE, as the share-partition leaders' persister
// takes it.
type shareRPCs struct {
	t   testing.TB
	ctx context.Context
	cl  *kgo.Client
}

func (s shareRPCs) request(node int32, req kmsg.Request) kmsg.Response {
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	resp, err := s.cl.Broker(int(node)).Request(ctx, req)
	if err != nil {
		return nil
	}
	return resp
}

// coordinator asks node which broker coordinates k.
func (s shareRPCs) coordinator(node int32, k share.Key) (int32, int16) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorType, req.CoordinatorKeys = 6, share.CoordinatorTypeShare, []string{k.String()}
	resp, _ := s.request(node, req).(*kmsg.FindCoordinatorResponse)
	if resp == nil || len(resp.Coordinators) != 1 {
		return -1, kerr.CoordinatorNotAvailable.Code
	}
	return resp.Coordinators[0].NodeID, resp.Coordinators[0].ErrorCode
}

func (s shareRPCs) initialize(node int32, k share.Key, stateEpoch int32, start int64) int16 {
	resp, _ := s.request(node, share.InitializeRequest(k, stateEpoch, start)).(*kmsg.InitializeShareGroupStateResponse)
	if resp == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	rp, _ := share.InitializeResult(resp)
	return rp.ErrorCode
}

func (s shareRPCs) read(node int32, k share.Key, leaderEpoch int32) kmsg.ReadShareGroupStateResponseTopicPartition {
	resp, _ := s.request(node, share.ReadRequest(k, leaderEpoch)).(*kmsg.ReadShareGroupStateResponse)
	if resp == nil {
		return kmsg.ReadShareGroupStateResponseTopicPartition{ErrorCode: kerr.CoordinatorNotAvailable.Code}
	}
	rp, _ := share.ReadResult(resp)
	return rp
}

func (s shareRPCs) write(node int32, k share.Key, stateEpoch, leaderEpoch int32, start int64, batches ...share.StateBatch) int16 {
	resp, _ := s.request(node, share.WriteRequest(k, stateEpoch, leaderEpoch, start, batches)).(*kmsg.WriteShareGroupStateResponse)
	if resp == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	rp, _ := share.WriteResult(resp)
	return rp.ErrorCode
}

func (s shareRPCs) summary(node int32, k share.Key) kmsg.ReadShareGroupStateSummaryResponseTopicPartition {
	resp, _ := s.request(node, share.SummaryRequest(k)).(*kmsg.ReadShareGroupStateSummaryResponse)
	if resp == nil {
		return kmsg.ReadShareGroupStateSummaryResponseTopicPartition{ErrorCode: kerr.CoordinatorNotAvailable.Code}
	}
	rp, _ := share.SummaryResult(resp)
	return rp
}

func (s shareRPCs) remove(node int32, k share.Key) int16 {
	resp, _ := s.request(node, share.DeleteRequest(k)).(*kmsg.DeleteShareGroupStateResponse)
	if resp == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	rp, _ := share.DeleteResult(resp)
	return rp.ErrorCode
}

// awaitCoordinator asks the running nodes until one answers k's
// coordinator and that coordinator reads k (at leader epoch -1, which
// fences and records nothing) without being away: not there, moved or
// loading. want is the read's error code (INVALID_REQUEST for a
// share-partition not initialized yet).
func (s shareRPCs) awaitCoordinator(nodes func() []int32, k share.Key, want *kerr.Error) int32 {
	s.t.Helper()
	var last string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, asked := range nodes() {
			node, code := s.coordinator(asked, k)
			if code != 0 {
				last = fmt.Sprintf("node %d answers FindCoordinator with %v", asked, kerr.ErrorForCode(code))
				continue
			}
			r := s.read(node, k, -1)
			if r.ErrorCode == codeOf(want) {
				return node
			}
			last = fmt.Sprintf("coordinator %d reads %v", node, kerr.ErrorForCode(r.ErrorCode))
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("no coordinator of %s serving it: %s", k, last)
	return -1
}

func codeOf(err *kerr.Error) int16 {
	if err == nil {
		return 0
	}
	return err.Code
}

func wantShareCode(t testing.TB, what string, got int16, want *kerr.Error) {
	t.Helper()
	if got != codeOf(want) {
		t.Fatalf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

// wantShareState fails unless a read answered the state epoch, start
// offset and batches.
func wantShareState(t testing.TB, what string, r kmsg.ReadShareGroupStateResponseTopicPartition, stateEpoch int32, start int64, batches []share.StateBatch) {
	t.Helper()
	if r.ErrorCode != 0 || r.StateEpoch != stateEpoch || r.StartOffset != start || !slices.Equal(share.ReadBatches(r), batches) {
		t.Fatalf("%s: %v state epoch %d start %d batches %v; want state epoch %d start %d batches %v",
			what, kerr.ErrorForCode(r.ErrorCode), r.StateEpoch, r.StartOffset, share.ReadBatches(r), stateEpoch, start, batches)
	}
}

func sb(first, last int64, state int8, count int16) share.StateBatch {
	return share.StateBatch{FirstOffset: first, LastOffset: last, DeliveryState: state, DeliveryCount: count}
}

// topicID is a topic's id as the metadata answers it.
func topicID(t testing.TB, ctx context.Context, adm *kadm.Client, topic string) raftmeta.Uuid {
	t.Helper()
	td, err := adm.ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("listing %s: %v %v", topic, err, td[topic].Err)
	}
	return raftmeta.Uuid(td[topic].ID)
}

// sameStatePartition is a key of another group whose state lives in the
// same __share_group_state partition as k's, so the same broker
// coordinates both.
func sameStatePartition(k share.Key, partitions int32) share.Key {
	for i := 0; ; i++ {
		o := share.Key{GroupID: fmt.Sprint("other-", i), TopicID: k.TopicID, Partition: k.Partition}
		if share.PartitionFor(o, partitions) == share.PartitionFor(k, partitions) {
			return o
		}
	}
}

// On one node: FindCoordinator for a share-partition key creates
// __share_group_state as Kafka does (50 partitions, the replication
// factor capped at the one broker, the delete policy without retention),
// the share coordinator's keys are advertised, and a share-partition's
// state initialized, read and written over the wire, and through the
// broker's share-state client, is read back the same after the broker
// is killed and started again, its fences with it; deleted, it is gone.
func TestShareCoordinatorSingleNode(t *testing.T) {
	b := brokertest.Start(t)
	ctx := testCtx(t, 2*time.Minute)
	adm := b.Admin(t)
	createTopic(t, adm, "orders", 3)
	k := share.Key{GroupID: "g", TopicID: topicID(t, ctx, adm, "orders"), Partition: 1}
	rpc := shareRPCs{t: t, ctx: ctx, cl: b.Client(t)}
	self := func() []int32 { return []int32{1} }

	if node := rpc.awaitCoordinator(self, k, kerr.InvalidRequest); node != 1 {
		t.Fatalf("coordinator %d", node)
	}
	td, err := adm.ListTopics(ctx, share.Topic)
	if err != nil || td[share.Topic].Err != nil {
		t.Fatalf("listing %s: %v %v", share.Topic, err, td[share.Topic].Err)
	}
	if d := td[share.Topic]; len(d.Partitions) != 50 || d.Partitions.NumReplicas() != 1 || !d.IsInternal {
		t.Fatalf("%s has %d partitions, %d replicas, internal %t; want 50, 1, true", share.Topic, len(d.Partitions), d.Partitions.NumReplicas(), d.IsInternal)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, share.Topic)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rc.On(share.Topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"cleanup.policy": "delete", "retention.ms": "-1", "min.insync.replicas": "2", "segment.bytes": "104857600"} {
		got := "<unset>"
		for _, c := range cfg.Configs {
			if c.Key == name && c.Value != nil {
				got = *c.Value
			}
		}
		if got != want {
			t.Errorf("%s %s=%s, want %s", share.Topic, name, got, want)
		}
	}
	avReq := kmsg.NewPtrApiVersionsRequest()
	avReq.ClientSoftwareName, avReq.ClientSoftwareVersion = "strait-test", "1"
	av, _ := rpc.request(1, avReq).(*kmsg.ApiVersionsResponse)
	if av == nil || av.ErrorCode != 0 {
		t.Fatalf("ApiVersions: %+v", av)
	}
	advertised := map[int16][2]int16{}
	for _, k := range av.ApiKeys {
		if k.ApiKey >= 83 && k.ApiKey <= 87 {
			advertised[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
		}
	}
	if want := map[int16][2]int16{83: {0, 0}, 84: {0, 0}, 85: {0, 1}, 86: {0, 0}, 87: {0, 1}}; fmt.Sprint(advertised) != fmt.Sprint(want) {
		t.Fatalf("share coordinator keys advertised %v, want %v", advertised, want)
	}

	wantShareCode(t, "initialize", rpc.initialize(1, k, 0, 10), nil)
	wantShareState(t, "read after initialize", rpc.read(1, k, 1), 0, 10, nil)
	wantShareCode(t, "write", rpc.write(1, k, 0, 1, 10, sb(10, 14, 2, 1), sb(15, 19, 0, 1)), nil)
	wantShareCode(t, "write", rpc.write(1, k, 0, 1, 12, sb(15, 16, 4, 2)), nil)
	want := []share.StateBatch{sb(12, 14, 2, 1), sb(15, 16, 4, 2), sb(17, 19, 0, 1)}
	wantShareState(t, "read", rpc.read(1, k, 1), 0, 12, want)

	// The broker's own share-state client (this node coordinates).
	client := b.Node().ShareStateClient()
	k2 := share.Key{GroupID: "h", TopicID: k.TopicID, Partition: 2}
	if err := client.Initialize(ctx, k2, 3, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Read(ctx, k2, 4); err != nil {
		t.Fatal(err)
	}
	want2 := []share.StateBatch{sb(100, 104, 0, 2)}
	if err := client.Write(ctx, k2, broker.ShareState{StateEpoch: 3, LeaderEpoch: 4, StartOffset: 100, Batches: want2}); err != nil {
		t.Fatal(err)
	}
	if err := client.Write(ctx, k2, broker.ShareState{StateEpoch: 2, LeaderEpoch: 4, StartOffset: 100}); !isKerr(err, kerr.FencedStateEpoch) {
		t.Fatalf("a write at an older state epoch: %v, want FENCED_STATE_EPOCH", err)
	}

	b.Crash(t)
	b.StartAgain(t)
	rpc.cl = b.Client(t)
	rpc.awaitCoordinator(self, k, nil)
	wantShareState(t, "read after a restart", rpc.read(1, k, 1), 0, 12, want)
	wantShareCode(t, "write of the leader before", rpc.write(1, k, 0, 0, 12), kerr.FencedLeaderEpoch)
	if s := rpc.summary(1, k); s.ErrorCode != 0 || s.StartOffset != 12 || s.StateEpoch != 0 || s.LeaderEpoch != 1 {
		t.Fatalf("summary after a restart: %+v", s)
	}
	client = b.Node().ShareStateClient()
	if st, err := client.Read(ctx, k2, 4); err != nil || st.StateEpoch != 3 || st.StartOffset != 100 || !slices.Equal(st.Batches, want2) {
		t.Fatalf("the client reads %+v, %v after a restart", st, err)
	}

	wantShareCode(t, "delete", rpc.remove(1, k), nil)
	wantShareCode(t, "read of the deleted", rpc.read(1, k, 1).ErrorCode, kerr.InvalidRequest)
	if err := client.Delete(ctx, k2); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Read(ctx, k2, 4); !isKerr(err, kerr.InvalidRequest) {
		t.Fatalf("the client reads a deleted share-partition: %v, want INVALID_REQUEST", err)
	}
}

func isKerr(err error, want *kerr.Error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke) && ke == want
}

// On three nodes (__share_group_state replicated three times,
// min.insync.replicas 2): the coordinator FindCoordinator names is the
// leader of the key's partition; another node's share-state client
// reaches it over the wire; when the coordinator is killed another
// replica takes over with the same state, fences and all, serves new
// writes, and the killed node comes back.
func TestShareCoordinatorClusterFailover(t *testing.T) {
	const statePartitions = 3
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig(fmt.Sprint("share.coordinator.state.topic.num.partitions=", statePartitions)))
	ctx := testCtx(t, 3*time.Minute)
	adm := c.Admin(t)
	createReplicatedTopic(t, adm, "orders", 3, 3)
	k := share.Key{GroupID: "g", TopicID: topicID(t, ctx, adm, "orders"), Partition: 0}
	rpc := shareRPCs{t: t, ctx: ctx, cl: c.Client(t)}

	coord := rpc.awaitCoordinator(c.Running, k, kerr.InvalidRequest)
	statePartition := share.PartitionFor(k, statePartitions)
	if leader := c.Leader(share.Topic, statePartition); leader != coord {
		t.Fatalf("FindCoordinator names node %d; %s-%d is led by %d", coord, share.Topic, statePartition, leader)
	}
	c.WaitForISR(t, share.Topic, 3, 30*time.Second)

	wantShareCode(t, "initialize", rpc.initialize(coord, k, 1, 0), nil)
	wantShareState(t, "read", rpc.read(coord, k, 5), 1, 0, nil)
	wantShareCode(t, "write", rpc.write(coord, k, 1, 5, 0, sb(0, 9, 2, 1), sb(10, 29, 0, 1)), nil)
	wantShareCode(t, "write", rpc.write(coord, k, 1, 5, 5, sb(10, 14, 0, 2)), nil)
	want := []share.StateBatch{sb(5, 9, 2, 1), sb(10, 14, 0, 2), sb(15, 29, 0, 1)}
	wantShareState(t, "read", rpc.read(coord, k, 5), 1, 5, want)

	// Another node's share-state client sends keys 83-85 to the
	// coordinator over the wire.
	var other int32
	for _, n := range c.Running() {
		if n != coord {
			other = n
			break
		}
	}
	k2 := sameStatePartition(k, statePartitions)
	client := c.Node(other).Node().ShareStateClient()
	if err := client.Initialize(ctx, k2, 0, 40); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Read(ctx, k2, 7); err != nil {
		t.Fatal(err)
	}
	want2 := []share.StateBatch{sb(40, 49, 4, 5)}
	if err := client.Write(ctx, k2, broker.ShareState{StateEpoch: 0, LeaderEpoch: 7, StartOffset: 40, Batches: want2}); err != nil {
		t.Fatal(err)
	}
	wantShareState(t, "read of what another node's client wrote", rpc.read(coord, k2, 7), 0, 40, want2)

	// Kill the coordinator: a replica of the partition takes over.
	c.Kill(t, coord)
	running := func() []int32 { return slices.DeleteFunc(c.Running(), func(n int32) bool { return n == coord }) }
	next := rpc.awaitCoordinator(running, k, nil)
	if next == coord {
		t.Fatalf("the killed node %d still coordinates", coord)
	}
	wantShareState(t, "read at the new coordinator", rpc.read(next, k, 5), 1, 5, want)
	wantShareCode(t, "write of an older leader at the new coordinator", rpc.write(next, k, 1, 4, 5), kerr.FencedLeaderEpoch)
	wantShareState(t, "read of a new leader", rpc.read(next, k, 6), 1, 5, want)
	wantShareCode(t, "write of the new leader", rpc.write(next, k, 1, 6, 10, sb(15, 19, 2, 1)), nil)
	want = []share.StateBatch{sb(10, 14, 0, 2), sb(15, 19, 2, 1), sb(20, 29, 0, 1)}
	wantShareState(t, "read after the failover", rpc.read(next, k, 6), 1, 10, want)
	if st, err := c.Node(other).Node().ShareStateClient().Read(ctx, k2, 7); err != nil || st.StartOffset != 40 || !slices.Equal(st.Batches, want2) {
		t.Fatalf("the client reads %+v, %v after the failover", st, err)
	}

	// The killed node comes back and catches up; the state is the same
	// wherever the coordinator is.
	c.Restart(t, coord)
	c.WaitForISR(t, share.Topic, 3, 30*time.Second)
	last := rpc.awaitCoordinator(c.Running, k, nil)
	wantShareState(t, "read after the restart", rpc.read(last, k, 6), 1, 10, want)
	wantShareCode(t, "write of the leader before", rpc.write(last, k, 1, 5, 10), kerr.FencedLeaderEpoch)
}
