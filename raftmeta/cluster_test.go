package raftmeta

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClusterThreeVoters runs three voters in one process: they elect a
// leader; admin requests sent to followers reach it through the controller
// channel multiplexed on the raft port; brokers register, are unfenced,
// and a controlled shutdown moves leadership away; when the leader is
// closed another takes over within seconds with every write in its image,
// the channels follow it, and the dead node's broker is fenced when its
// session expires.
func TestClusterThreeVoters(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	for id := int32(1); id <= 3; id++ {
		tc.start(id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, q := range tc.nodes {
		if err := q.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	leader := tc.leader(5 * time.Second)
	for id, q := range tc.nodes {
		if got := q.LeaderID(); got != leader {
			t.Fatalf("node %d sees leader %d, not %d", id, got, leader)
		}
		if got := q.ControllerAddr(); got != tc.voters[leader] {
			t.Fatalf("node %d resolves the controller to %s, not %s", id, got, tc.voters[leader])
		}
	}

	// Brokers register through their own node's channel; a follower's
	// reaches the leader over the CONTROLLER port.
	for id := int32(1); id <= 3; id++ {
		tc.startBroker(ctx, id)
	}
	for id, l := range tc.brokers {
		if err := l.WaitUnfenced(ctx); err != nil {
			t.Fatal(err)
		}
		if b := tc.nodes[leader].Image().Brokers[id]; b == nil || b.Epoch != l.Epoch() || b.Fenced || b.IncarnationID != l.IncarnationID() {
			t.Fatalf("broker %d in the image: %+v, lifecycle epoch %d", id, b, l.Epoch())
		}
	}
	// A voter's CONTROLLER listener is not an advertised endpoint.
	if eps := tc.nodes[leader].Image().Brokers[1].Endpoints; len(eps) != 1 || eps[0].Listener != "PLAINTEXT" || eps[0].Port != 9091 {
		t.Fatalf("broker 1 endpoints %+v", eps)
	}

	// Writes sent to each node, followers included, are forwarded.
	var follower int32
	for id := int32(1); id <= 3; id++ {
		if id != leader {
			follower = id
		}
		tc.createTopic(id, "via-"+string('0'+rune(id)), 3, 3)
	}
	tc.topicsEverywhere("via-1", "via-2", "via-3")
	img := tc.nodes[follower].Image()
	for _, name := range []string{"via-1", "via-2", "via-3"} {
		for _, p := range img.Topics[name].Partitions {
			if len(p.Replicas) != 3 || len(p.ISR) != 3 || p.Leader != p.Replicas[0] {
				t.Fatalf("%s-%d: %+v", name, p.Index, *p)
			}
		}
	}
	// A forwarded broker config change names the sending broker's own
	// resource (ConfigAdminManager.preprocess runs on the sender).
	inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, string('0'+rune(follower))
	rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	rc.Name, rc.Value = "log.retention.ms", kmsg.StringPtr("1000")
	rr.Configs = append(rr.Configs, rc)
	inc.Resources = append(inc.Resources, rr)
	if code := tc.send(follower, inc).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode; code != 0 {
		t.Fatalf("forwarded broker config: %v", kerr.ErrorForCode(code))
	}
	// AllocateProducerIds from a follower's broker.
	apr := kmsg.NewPtrAllocateProducerIDsRequest()
	apr.BrokerID, apr.BrokerEpoch = follower, tc.brokers[follower].Epoch()
	if r := tc.send(follower, apr).(*kmsg.AllocateProducerIDsResponse); r.ErrorCode != 0 || r.ProducerIDStart != 0 || r.ProducerIDLen != ProducerIDBlockSize {
		t.Fatalf("allocate producer ids: %+v", r)
	}

	// Controlled shutdown of the follower's broker: it leads nothing
	// afterwards, is in no ISR, and is fenced.
	if err := tc.brokers[follower].ControlledShutdown(ctx); err != nil {
		t.Fatal(err)
	}
	img = tc.nodes[leader].Image()
	if b := img.Brokers[follower]; !b.Fenced || !b.InControlledShutdown {
		t.Fatalf("broker %d after controlled shutdown: %+v", follower, *b)
	}
	for _, name := range []string{"via-1", "via-2", "via-3"} {
		for _, p := range img.Topics[name].Partitions {
			if p.Leader == follower || slices.Contains(p.ISR, follower) || p.Leader == NoLeader {
				t.Fatalf("%s-%d after broker %d shut down: %+v", name, p.Index, follower, *p)
			}
		}
	}
	tc.brokers[follower].Stop()
	// It comes back as a new incarnation and is unfenced again.
	delete(tc.brokers, follower)
	l := tc.startBroker(ctx, follower)
	if err := l.WaitUnfenced(ctx); err != nil {
		t.Fatal(err)
	}

	// Kill the leader: another voter leads within seconds, with the same
	// image, and the surviving channels follow it.
	before := tc.nodes[leader].Image()
	killedAt := time.Now()
	tc.kill(leader)
	newLeader := tc.leader(5 * time.Second)
	t.Logf("node %d took over from %d after %v", newLeader, leader, time.Since(killedAt).Round(time.Millisecond))
	tc.createTopic(follower, "after-failover", 1, 2)
	tc.topicsEverywhere("after-failover")
	for id, q := range tc.nodes {
		got := q.Image()
		for _, name := range before.TopicNames() {
			if !reflect.DeepEqual(got.Topics[name].ID, before.Topics[name].ID) {
				t.Fatalf("node %d lost topic %s", id, name)
			}
		}
		if !maps.EqualFunc(got.Configs, before.Configs, maps.Equal) || got.NextProducerID != before.NextProducerID {
			t.Fatalf("node %d image differs after failover:\n%s", id, formatImage(got))
		}
	}
	// The dead node's broker misses its session on the new controller:
	// fenced, out of every ISR it was not the last member of.
	waitFor(t, 10*time.Second, "the dead broker to be fenced", func() bool {
		return tc.nodes[newLeader].Image().Brokers[leader].Fenced
	})
	img = tc.nodes[newLeader].Image()
	for _, name := range before.TopicNames() {
		for _, p := range img.Topics[name].Partitions {
			if p.Leader == leader || (len(p.ISR) > 1 && slices.Contains(p.ISR, leader)) {
				t.Fatalf("%s-%d still relies on the dead broker %d: %+v", name, p.Index, leader, *p)
			}
		}
	}
	for id, l := range tc.brokers {
		if l.Fenced() {
			t.Fatalf("live broker %d fenced", id)
		}
	}
}

// TestClusterNonVoter: a node outside controller.quorum.voters registers
// through a voter it picks from the voters list, is added to raft as a
// non-voter, follows the metadata log, and is unfenced.
func TestClusterNonVoter(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	for id := int32(1); id <= 4; id++ {
		tc.start(id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	leader := tc.leader(5 * time.Second)
	if tc.nodes[4].IsVoter() || !tc.nodes[1].IsVoter() {
		t.Fatal("voter status")
	}
	tc.unfence(ctx, 1, 2, 3)
	tc.createTopic(leader, "early", 1, 1)
	l := tc.startBroker(ctx, 4)
	if err := tc.nodes[4].WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitUnfenced(ctx); err != nil {
		t.Fatal(err)
	}
	cf := tc.nodes[leader].raft.Load().GetConfiguration()
	if err := cf.Error(); err != nil {
		t.Fatal(err)
	}
	var suffrage []string
	for _, s := range cf.Configuration().Servers {
		suffrage = append(suffrage, string(s.ID)+"="+s.Suffrage.String())
		if s.ID == "4" && (s.Suffrage != raft.Nonvoter || string(s.Address) != tc.nodes[4].Addr()) {
			t.Fatalf("node 4 in the raft configuration: %+v", s)
		}
	}
	slices.Sort(suffrage)
	if tc.accepted[4].Load() == 0 {
		t.Fatal("the non-voter's listener accepted nothing")
	}
	if want := []string{"1=Voter", "2=Voter", "3=Voter", "4=Nonvoter"}; !slices.Equal(suffrage, want) {
		t.Fatalf("raft configuration %v, want %v", suffrage, want)
	}
	// It sees what was written before it joined and what comes after,
	// and its own writes are forwarded.
	tc.createTopic(4, "later", 2, 1)
	tc.topicsEverywhere("early", "later")
	if tc.nodes[4].IsLeader() {
		t.Fatal("the non-voter leads")
	}
	waitFor(t, 5*time.Second, "the non-voter to apply everything", func() bool {
		return tc.nodes[4].Image().Offset == tc.nodes[leader].Image().Offset
	})
	if !reflect.DeepEqual(tc.nodes[4].Image().Brokers, tc.nodes[leader].Image().Brokers) {
		t.Fatal("the non-voter's brokers differ")
	}

	// A graceful stop hands leadership to another voter, never to the
	// non-voter; the non-voter's requests follow.
	if err := tc.nodes[4].TransferLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tc.nodes[leader].TransferLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	next := tc.leader(5 * time.Second)
	if next == leader || next == 4 {
		t.Fatalf("leadership went from %d to %d", leader, next)
	}
	tc.createTopic(4, "after-transfer", 1, 1)
	tc.topicsEverywhere("after-transfer")
}

// TestClusterIsolatedBroker cuts a follower node off from the others: its
// broker's heartbeats stop reaching the controller, which fences it when
// the session expires and moves its leaderships; its channel fails until
// the links heal, and then its heartbeats unfence it again.
func TestClusterIsolatedBroker(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	for id := int32(1); id <= 3; id++ {
		tc.start(id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	leader := tc.leader(5 * time.Second)
	tc.unfence(ctx, 1, 2, 3)
	tc.createTopic(leader, "spread", 3, 3)
	isolated := leader%3 + 1
	tc.topicsEverywhere("spread")
	led := 0
	for _, p := range tc.nodes[leader].Image().Topics["spread"].Partitions {
		if p.Leader == isolated {
			led++
		}
	}
	if led != 1 {
		t.Fatalf("broker %d leads %d partitions of spread", isolated, led)
	}

	for id := int32(1); id <= 3; id++ {
		if id != isolated {
			tc.net.setCut(isolated, id, true)
		}
	}
	waitFor(t, 10*time.Second, "the isolated broker to be fenced", func() bool {
		q := tc.nodes[tc.leader(5*time.Second)]
		return q.Image().Brokers[isolated].Fenced
	})
	img := tc.nodes[tc.leader(5*time.Second)].Image()
	for _, p := range img.Topics["spread"].Partitions {
		if p.Leader == isolated || slices.Contains(p.ISR, isolated) || p.Leader == NoLeader {
			t.Fatalf("spread-%d after isolating %d: %+v", p.Index, isolated, *p)
		}
	}
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err := tc.channels[isolated].Send(short, createReq(7, newTopic("unreachable", 1, 1)))
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send from the isolated node: %v", err)
	}

	for id := int32(1); id <= 3; id++ {
		tc.net.setCut(isolated, id, false)
	}
	// The broker itself never heard it was fenced; the controller's image
	// tells.
	waitFor(t, 15*time.Second, "the isolated broker to be unfenced", func() bool {
		return !tc.nodes[tc.leader(5*time.Second)].Image().Brokers[isolated].Fenced
	})
	tc.createTopic(isolated, "healed", 1, 3)
	tc.topicsEverywhere("healed")
}
