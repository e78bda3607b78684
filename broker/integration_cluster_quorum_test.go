package broker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker"
	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/raftmeta"
)

// describeQuorum sends DescribeQuorum v2 for __cluster_metadata-0 to node
// id and returns the partition, failing the test on an error code.
func describeQuorum(ctx context.Context, t testing.TB, cl *kgo.Client, id int32) (*kmsg.DescribeQuorumResponse, kmsg.DescribeQuorumResponseTopicPartition) {
	t.Helper()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	resp := nodeRequest(ctx, t, cl, id, req).(*kmsg.DescribeQuorumResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("DescribeQuorum via node %d: %v, %d topics", id, err, len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		t.Fatalf("DescribeQuorum via node %d: partition error %v", id, err)
	}
	return resp, p
}

// replicaIDs lists the ids of DescribeQuorum replica states.
func replicaIDs(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState) []int32 {
	var ids []int32
	for _, r := range rs {
		ids = append(ids, r.ReplicaID)
	}
	slices.Sort(ids)
	return ids
}

// voterChange sends AddRaftVoter (add) or RemoveRaftVoter for node id
// with metadata directory dir to node via and returns the error code and
// message.
func voterChange(ctx context.Context, t testing.TB, cl *kgo.Client, via int32, add bool, id int32, dir [16]byte, listener *kmsg.DescribeQuorumResponseNodeListener) (int16, string) {
	t.Helper()
	var code int16
	var msg *string
	if add {
		req := kmsg.NewPtrAddRaftVoterRequest()
		req.VoterID, req.VoterDirectoryID, req.TimeoutMillis = id, dir, 30000
		if listener != nil {
			l := kmsg.NewAddRaftVoterRequestListener()
			l.Name, l.Host, l.Port = listener.Name, listener.Host, listener.Port
			req.Listeners = append(req.Listeners, l)
		}
		resp := nodeRequest(ctx, t, cl, via, req).(*kmsg.AddRaftVoterResponse)
		code, msg = resp.ErrorCode, resp.ErrorMessage
	} else {
		req := kmsg.NewPtrRemoveRaftVoterRequest()
		req.VoterID, req.VoterDirectoryID = id, dir
		resp := nodeRequest(ctx, t, cl, via, req).(*kmsg.RemoveRaftVoterResponse)
		code, msg = resp.ErrorCode, resp.ErrorMessage
	}
	if msg == nil {
		return code, ""
	}
	return code, *msg
}

// metaDirectoryID is the directory.id in b's meta.properties.
func metaDirectoryID(t testing.TB, b *brokertest.Broker) [16]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.Dir(), broker.MetaPropertiesFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "directory.id="); ok {
			id, err := raftmeta.ParseUuid(v)
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
	}
	t.Fatalf("no directory.id in %s's meta.properties", b.Dir())
	return [16]byte{}
}

// controllerListener is node id's listener in a DescribeQuorum v2
// response.
func controllerListener(t testing.TB, resp *kmsg.DescribeQuorumResponse, id int32) *kmsg.DescribeQuorumResponseNodeListener {
	t.Helper()
	for _, n := range resp.Nodes {
		if n.NodeID == id && len(n.Listeners) == 1 {
			return &n.Listeners[0]
		}
	}
	t.Fatalf("DescribeQuorum lists no listener of node %d: %+v", id, resp.Nodes)
	return nil
}

// TestClusterQuorumReconfiguration is issue 32's KIP-853 check: in a
// four-node cluster (voters 1-3, node 4 a broker-only observer) under an
// acks=all idempotent producer, node 4 is added to the voters and the
// active controller removed, the removed node stops, and the quorum keeps
// committing (a topic is created, the high watermark moves, the producer
// goes on) with no acknowledged record lost or duplicated. DescribeQuorum,
// sent to a node that is not the controller (forwarded), follows each
// step; the refusals Kafka gives (DUPLICATE_VOTER, VOTER_NOT_FOUND,
// INVALID_REQUEST) are checked on the way.
func TestClusterQuorumReconfiguration(t *testing.T) {
	c := brokertest.StartCluster(t, 4)
	ctx := testCtx(t, 150*time.Second)
	cl := rawClient(ctx, t, c)

	// Before: voters 1-3, node 4 observes and has caught up.
	ctrl := c.Controller()
	var st kmsg.DescribeQuorumResponseTopicPartition
	var resp *kmsg.DescribeQuorumResponse
	c.WaitFor(t, 15*time.Second, "node 4 to show as a caught-up observer", func() bool {
		resp, st = describeQuorum(ctx, t, cl, 4)
		return len(st.Observers) == 1 && st.Observers[0].LastCaughtUpTimestamp > 0
	})
	if st.LeaderID != ctrl || st.LeaderEpoch < 1 || st.HighWatermark < 1 ||
		!slices.Equal(replicaIDs(st.CurrentVoters), []int32{1, 2, 3}) || !slices.Equal(replicaIDs(st.Observers), []int32{4}) {
		t.Fatalf("quorum before: leader %d epoch %d hw %d voters %v observers %v; want leader %d, voters [1 2 3], observers [4]",
			st.LeaderID, st.LeaderEpoch, st.HighWatermark, replicaIDs(st.CurrentVoters), replicaIDs(st.Observers), ctrl)
	}
	dirs := map[int32][16]byte{}
	for _, r := range append(st.CurrentVoters, st.Observers...) {
		dirs[r.ReplicaID] = r.ReplicaDirectoryID
		if want := metaDirectoryID(t, c.Node(r.ReplicaID)); r.ReplicaDirectoryID != want {
			t.Errorf("replica %d: directory id %s, meta.properties says %s", r.ReplicaID, raftmeta.Uuid(r.ReplicaDirectoryID), raftmeta.Uuid(want))
		}
		if r.LogEndOffset < 1 || r.LogEndOffset > st.HighWatermark+1000 || r.LastFetchTimestamp <= 0 || r.LastCaughtUpTimestamp <= 0 {
			t.Errorf("replica %d: log end %d (hw %d), last fetch %d, caught up %d", r.ReplicaID, r.LogEndOffset, st.HighWatermark, r.LastFetchTimestamp, r.LastCaughtUpTimestamp)
		}
	}
	observer := controllerListener(t, resp, 4)
	if observer.Name != "CONTROLLER" || observer.Port == 0 {
		t.Fatalf("node 4's listener: %+v", observer)
	}
	hwBefore := st.HighWatermark

	const topic = "quorum-change"
	createReplicatedTopic(t, c.Admin(t), topic, 6, 3, "min.insync.replicas=2")
	c.WaitForISR(t, topic, 3, 15*time.Second)
	prod := startCountedProducer(ctx, t, c, topic, "q", kgo.RecordRetries(1000), kgo.RecordDeliveryTimeout(60*time.Second))
	ackedNow := prod.Acked
	c.WaitFor(t, 20*time.Second, "300 acknowledged records", func() bool { return ackedNow() >= 300 })

	// Refusals first: nothing changes.
	notCtrl := int32(4)
	otherDir := [16]byte{0x51}
	for _, r := range []struct {
		what     string
		add      bool
		id       int32
		dir      [16]byte
		listener *kmsg.DescribeQuorumResponseNodeListener
		want     *kerr.Error
	}{
		{"AddRaftVoter without the CONTROLLER listener", true, 4, dirs[4], nil, kerr.InvalidRequest},
		{"AddRaftVoter of voter 2", true, 2, dirs[2], controllerListener(t, resp, 2), kerr.DuplicateVoter},
		{"AddRaftVoter of node 4 with another directory", true, 4, otherDir, observer, kerr.RequestTimedOut},
		{"RemoveRaftVoter of node 9", false, 9, otherDir, nil, kerr.VoterNotFound},
		{"RemoveRaftVoter of voter 2 with another directory", false, 2, otherDir, nil, kerr.VoterNotFound},
	} {
		if code, msg := voterChange(ctx, t, cl, notCtrl, r.add, r.id, r.dir, r.listener); code != r.want.Code {
			t.Errorf("%s: %v (%s), want %v", r.what, kerr.ErrorForCode(code), msg, r.want)
		}
	}

	// Add node 4, through a node that is not the controller.
	via := int32(1)
	if via == ctrl {
		via = 2
	}
	added := time.Now()
	if code, msg := voterChange(ctx, t, cl, via, true, 4, dirs[4], observer); code != 0 {
		t.Fatalf("AddRaftVoter 4: %v (%s)", kerr.ErrorForCode(code), msg)
	}
	t.Logf("node 4 added to the voters in %v", time.Since(added).Round(time.Millisecond))
	if code, msg := voterChange(ctx, t, cl, via, true, 4, dirs[4], observer); code != kerr.DuplicateVoter.Code {
		t.Errorf("AddRaftVoter 4 again: %v (%s), want DUPLICATE_VOTER", kerr.ErrorForCode(code), msg)
	}
	_, st = describeQuorum(ctx, t, cl, via)
	if !slices.Equal(replicaIDs(st.CurrentVoters), []int32{1, 2, 3, 4}) || len(st.Observers) != 0 {
		t.Fatalf("after adding 4: voters %v observers %v", replicaIDs(st.CurrentVoters), replicaIDs(st.Observers))
	}

	// Remove the active controller: it hands the leadership on. The high
	// watermark the next leader reports is not below the last one's.
	victim := c.Controller()
	_, st = describeQuorum(ctx, t, cl, via)
	hwAtRemoval := st.HighWatermark
	removed := time.Now()
	if code, msg := voterChange(ctx, t, cl, 4, false, victim, dirs[victim], nil); code != 0 {
		t.Fatalf("RemoveRaftVoter %d: %v (%s)", victim, kerr.ErrorForCode(code), msg)
	}
	t.Logf("node %d removed from the voters in %v", victim, time.Since(removed).Round(time.Millisecond))
	var rest []int32
	for _, id := range []int32{1, 2, 3, 4} {
		if id != victim {
			rest = append(rest, id)
		}
	}
	c.WaitFor(t, 15*time.Second, "a new controller among the remaining voters", func() bool {
		_, st = describeQuorum(ctx, t, cl, 4)
		return slices.Contains(rest, st.LeaderID)
	})
	if !slices.Equal(replicaIDs(st.CurrentVoters), rest) || !slices.Equal(replicaIDs(st.Observers), []int32{victim}) {
		t.Fatalf("after removing %d: voters %v observers %v, want voters %v", victim, replicaIDs(st.CurrentVoters), replicaIDs(st.Observers), rest)
	}
	if st.HighWatermark < hwAtRemoval {
		t.Errorf("high watermark %d under leader %d, %d under leader %d before", st.HighWatermark, st.LeaderID, hwAtRemoval, victim)
	}

	// The removed node follows the metadata log as an observer.
	createReplicatedTopic(t, c.Admin(t), "after-removal", 1, 3)
	c.WaitFor(t, 10*time.Second, fmt.Sprintf("node %d to see a topic created after its removal", victim), func() bool {
		_, ok := c.Node(victim).Node().Image().Topics["after-removal"]
		return ok
	})

	// The removed node stops; the quorum goes on committing.
	atStop := ackedNow()
	c.Stop(t, victim)
	createReplicatedTopic(t, c.Admin(t), "after-quorum-change", 1, 3)
	c.WaitFor(t, 20*time.Second, "300 more acknowledged records", func() bool { return ackedNow() >= atStop+300 })
	survivor := rest[0]
	_, st = describeQuorum(ctx, t, cl, survivor)
	if st.HighWatermark <= hwBefore || !slices.Contains(rest, st.LeaderID) {
		t.Fatalf("after node %d stopped: leader %d, high watermark %d (was %d)", victim, st.LeaderID, st.HighWatermark, hwBefore)
	}
	want, errs := prod.Stop(ctx, t)
	if len(errs) > 0 {
		t.Errorf("the producer saw %d failed records, first: %v", len(errs), errs[0])
	}
	got := consumeAllOf(ctx, t, c, topic)
	lost, dups := lostAndDuplicates(want, got)
	t.Logf("%d records acknowledged (%d after node %d stopped), %d read", len(want), len(want)-atStop, victim, len(got))
	if lost != 0 || dups != 0 {
		t.Fatalf("acknowledged but lost: %d, duplicates: %d (of %d acknowledged)", lost, dups, len(want))
	}

	// The voter set is raft's, kept in the metadata log: restarted nodes
	// keep it, though controller.quorum.voters still names the removed
	// node and not node 4. The removed node comes back an observer; node 4
	// (broker-only, so on a new raft port) a voter again, once its broker
	// registered the new address.
	restarted := time.Now()
	c.Restart(t, victim)
	t.Logf("node %d restarted in %v", victim, time.Since(restarted).Round(time.Millisecond))
	c.Node(4).Restart(t)
	t.Logf("nodes %d and 4 restarted in %v", victim, time.Since(restarted).Round(time.Millisecond))
	c.WaitFor(t, 20*time.Second, "voters "+fmt.Sprint(rest)+" with node 4 caught up after the restarts", func() bool {
		_, st = describeQuorum(ctx, t, cl, survivor)
		caughtUp := false
		for _, r := range st.CurrentVoters {
			caughtUp = caughtUp || r.ReplicaID == 4 && r.LastCaughtUpTimestamp > time.Now().Add(-5*time.Second).UnixMilli()
		}
		return caughtUp && slices.Equal(replicaIDs(st.CurrentVoters), rest) && slices.Equal(replicaIDs(st.Observers), []int32{victim})
	})
	t.Logf("quorum as before %v after the restarts", time.Since(restarted).Round(time.Millisecond))
	// Node 4 took its raft port again (raftmeta/controller_port.go), so
	// the voters reach it where the configuration says.
	resp, _ = describeQuorum(ctx, t, cl, survivor)
	if again := controllerListener(t, resp, 4); again.Host != observer.Host || again.Port != observer.Port {
		t.Errorf("node 4's CONTROLLER listener was %s:%d, after its restart %s:%d", observer.Host, observer.Port, again.Host, again.Port)
	}
	createReplicatedTopic(t, c.Admin(t), "after-restarts", 1, 3)
}
