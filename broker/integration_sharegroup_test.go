package broker_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/coordinator"
)

// memShareGroupPersister is an in-memory share coordinator for the broker
// tests: the start offset each partition was initialized with.
type memShareGroupPersister struct {
	mu    sync.Mutex
	state map[string]map[coordinator.SharePartitionID]int64
	inits int
}

func newMemShareGroupPersister() *memShareGroupPersister {
	return &memShareGroupPersister{state: map[string]map[coordinator.SharePartitionID]int64{}}
}

func (m *memShareGroupPersister) InitializeState(_ context.Context, group string, _ int32, parts []coordinator.ShareStateInit) ([]coordinator.SharePartitionResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inits++
	if m.state[group] == nil {
		m.state[group] = map[coordinator.SharePartitionID]int64{}
	}
	var out []coordinator.SharePartitionResult
	for _, p := range parts {
		m.state[group][p.SharePartitionID] = p.StartOffset
		out = append(out, coordinator.SharePartitionResult{SharePartitionID: p.SharePartitionID})
	}
	return out, nil
}

func (m *memShareGroupPersister) ReadSummary(_ context.Context, group string, parts []coordinator.SharePartitionID) ([]coordinator.ShareStateSummary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []coordinator.ShareStateSummary
	for _, p := range parts {
		start, ok := m.state[group][p]
		if !ok {
			out = append(out, coordinator.ShareStateSummary{SharePartitionID: p, Err: kerr.UnknownTopicOrPartition})
			continue
		}
		out = append(out, coordinator.ShareStateSummary{SharePartitionID: p, StartOffset: start, DeliveryCompleteCount: 0})
	}
	return out, nil
}

func (m *memShareGroupPersister) DeleteState(_ context.Context, group string, parts []coordinator.SharePartitionID) ([]coordinator.SharePartitionResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []coordinator.SharePartitionResult
	for _, p := range parts {
		delete(m.state[group], p)
		out = append(out, coordinator.SharePartitionResult{SharePartitionID: p})
	}
	return out, nil
}

func (m *memShareGroupPersister) partitions(group string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.state[group])
}

// shareGroupMember heartbeats a share group with kmsg requests (franz-go
// routes them to the group's coordinator).
type shareGroupMember struct {
	t     *testing.T
	cl    *kgo.Client
	group string
	id    string
	epoch int32
	// findEach looks the coordinator up before every heartbeat.
	findEach bool
	// assigned is the last assignment the coordinator sent, by topic id.
	assigned map[[16]byte][]int32
}

// try heartbeats, returning the request's error (a connection to a
// killed node, say).
func (m *shareGroupMember) try(ctx context.Context, topics []string) (*kmsg.ShareGroupHeartbeatResponse, error) {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = m.group, m.id, m.epoch, topics
	var kresp kmsg.Response
	var err error
	if m.findEach {
		// Ask for the coordinator every time: franz-go keeps dialing a
		// dead coordinator it cached.
		var id int32
		if id, err = groupCoordinatorOf(ctx, m.cl, m.group); err == nil {
			kresp, err = m.cl.Broker(int(id)).Request(ctx, req)
		}
	} else {
		kresp, err = m.cl.Request(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	resp := kresp.(*kmsg.ShareGroupHeartbeatResponse)
	if resp.ErrorCode == 0 {
		m.epoch = resp.MemberEpoch
		if resp.Assignment != nil {
			m.assigned = map[[16]byte][]int32{}
			for _, tp := range resp.Assignment.TopicPartitions {
				m.assigned[tp.TopicID] = tp.Partitions
			}
		}
	}
	return resp, nil
}

// mustHeartbeat heartbeats until the coordinator answers, which must be
// without error (a coordinator that moved or is loading is retried, as a
// client does).
func (m *shareGroupMember) mustHeartbeat(ctx context.Context, topics []string) *kmsg.ShareGroupHeartbeatResponse {
	m.t.Helper()
	resp := m.answered(ctx, topics)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("ShareGroupHeartbeat of %s at epoch %d: %v (%v)", m.id, m.epoch, err, resp.ErrorMessage)
	}
	return resp
}

// answered heartbeats until a coordinator answers.
func (m *shareGroupMember) answered(ctx context.Context, topics []string) *kmsg.ShareGroupHeartbeatResponse {
	m.t.Helper()
	for {
		resp, err := m.try(ctx, topics)
		if err == nil {
			switch resp.ErrorCode {
			case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code:
			default:
				return resp
			}
		}
		if ctx.Err() != nil {
			m.t.Fatalf("ShareGroupHeartbeat of %s: %v (last error %v)", m.id, ctx.Err(), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// count is how many partitions the member holds.
func (m *shareGroupMember) count() int {
	n := 0
	for _, ps := range m.assigned {
		n += len(ps)
	}
	return n
}

// heartbeatUntil heartbeats the members in turn until cond holds.
func heartbeatUntil(ctx context.Context, t *testing.T, what string, cond func() bool, ms ...*shareGroupMember) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
		for _, m := range ms {
			m.mustHeartbeat(ctx, nil)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func apiRange(t *testing.T, ctx context.Context, cl *kgo.Client, key int16) (int16, int16, bool) {
	t.Helper()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == key {
			return k.MinVersion, k.MaxVersion, true
		}
	}
	return 0, 0, false
}

// TestShareGroupMembershipOverTheWire drives a share group's membership
// and admin APIs over real sockets (kmsg requests and kadm): every broker
// serves share groups and advertises their keys; members join, get the
// partitions once their share state is initialized, share them, leave;
// the group survives a restart; its offsets are described (with lag),
// altered and deleted, and the group deleted.
func TestShareGroupMembershipOverTheWire(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)

	// A broker as it starts by default: share groups on, their
	// persister the node's share coordinator client.
	plain := brokertest.Start(t)
	for key, want := range map[int16][2]int16{76: {1, 1}, 77: {1, 1}, 78: {1, 2}, 79: {1, 2}, 90: {0, 1}, 91: {0, 0}, 92: {0, 0}} {
		if lo, hi, ok := apiRange(t, ctx, plain.Client(t), key); !ok || lo != want[0] || hi != want[1] {
			t.Fatalf("a default broker advertises key %d v%d-%d (%t), want v%d-v%d", key, lo, hi, ok, want[0], want[1])
		}
	}
	plain.Stop(t)

	persister := newMemShareGroupPersister()
	b := brokertest.Start(t, brokertest.WithShareGroupPersister(persister))
	cl := b.Client(t)
	for key, want := range map[int16][2]int16{76: {1, 1}, 77: {1, 1}, 90: {0, 1}, 91: {0, 0}, 92: {0, 0}} {
		if lo, hi, ok := apiRange(t, ctx, cl, key); !ok || lo != want[0] || hi != want[1] {
			t.Fatalf("key %d advertised v%d-%d (%t), want v%d-v%d", key, lo, hi, ok, want[0], want[1])
		}
	}
	adm := b.Admin(t)
	const topic, group = "shared", "sg"
	createTopic(t, adm, topic, 3)

	a := &shareGroupMember{t: t, cl: cl, group: group, id: "member-a"}
	resp := a.mustHeartbeat(ctx, []string{topic})
	if a.epoch != 1 || resp.HeartbeatIntervalMillis != 5000 || resp.Assignment == nil || a.count() != 0 {
		t.Fatalf("join: %+v", resp)
	}
	// Once the share state of the topic's partitions is initialized, the
	// next heartbeat assigns them.
	heartbeatUntil(ctx, t, "a to get the 3 partitions", func() bool { return a.count() == 3 }, a)
	if persister.partitions(group) != 3 {
		t.Fatalf("%d partitions initialized", persister.partitions(group))
	}

	bm := &shareGroupMember{t: t, cl: cl, group: group, id: "member-b"}
	bm.mustHeartbeat(ctx, []string{topic})
	heartbeatUntil(ctx, t, "a and b to share the partitions", func() bool {
		return a.count()+bm.count() == 3 && a.count() > 0 && bm.count() > 0 && a.epoch == bm.epoch
	}, a, bm)

	described, err := adm.DescribeShareGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	d := described[group]
	if d.Err != nil || d.GroupState != "Stable" || d.Assignor != "simple" || d.GroupEpoch != a.epoch || len(d.Members) != 2 ||
		d.Members[0].MemberID != "member-a" || d.Members[1].MemberID != "member-b" {
		t.Fatalf("DescribeShareGroups: %+v", d)
	}
	listed, err := adm.ListGroupsByType(ctx, []string{"share"})
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := listed[group]; !ok || g.ProtocolType != "share" || g.State != "Stable" || len(listed) != 1 {
		t.Fatalf("ListGroups of share groups: %+v", listed)
	}

	// The coordinator restarts: the group is reloaded from
	// __consumer_offsets and the members carry on at their epochs.
	b.Restart(t)
	cl, adm = b.Client(t), b.Admin(t)
	a.cl, bm.cl = cl, cl
	epoch := a.epoch
	a.mustHeartbeat(ctx, nil)
	if a.epoch != epoch {
		t.Fatalf("a's epoch after the restart %d, was %d", a.epoch, epoch)
	}

	// b leaves; a gets everything.
	bm.epoch = -1
	bm.mustHeartbeat(ctx, nil)
	heartbeatUntil(ctx, t, "a to get b's partitions", func() bool { return a.count() == 3 }, a)
	// Offsets of a group with members cannot be altered.
	if _, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 1}}}); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Fatalf("AlterShareGroupOffsets of a group with members: %v", err)
	}
	a.epoch = -1
	a.mustHeartbeat(ctx, nil)

	// An empty group: its start offsets are described (uninitialized: -1),
	// altered, described with their lag, deleted; then the group.
	prod := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 10 {
		produceSync(t, prod, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprint(i))})
	}
	offs, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if got := shareOffsets(offs[group].Offsets); got != "shared/0:-1/-1 shared/1:-1/-1 shared/2:-1/-1" {
		t.Fatalf("offsets before altering: %s (%v)", got, offs[group].Err)
	}
	altered, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 4}}})
	if err != nil || altered.Error() != nil {
		t.Fatalf("AlterShareGroupOffsets: %v %v", err, altered)
	}
	offs, err = adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if got := shareOffsets(offs[group].Offsets); got != "shared/0:4/6 shared/1:-1/-1 shared/2:-1/-1" {
		t.Fatalf("offsets after altering: %s", got)
	}
	deleted, err := adm.DeleteShareGroupOffsets(ctx, group, topic)
	if err != nil || deleted.Error() != nil {
		t.Fatalf("DeleteShareGroupOffsets: %v %v", err, deleted)
	}
	if n := persister.partitions(group); n != 0 {
		t.Fatalf("%d partitions of state left after DeleteShareGroupOffsets", n)
	}

	// A share group id answers the classic APIs as Kafka does.
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Group = group
	ofResp, err := of.RequestWith(ctx, cl)
	if err != nil || ofResp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("OffsetFetch of a share group: %v %+v", err, ofResp)
	}

	dg, err := adm.DeleteGroups(ctx, group)
	if err != nil || dg[group].Err != nil {
		t.Fatalf("DeleteGroups: %v %+v", err, dg)
	}
	if described, err := adm.DescribeShareGroups(ctx, group); err != nil || !errors.Is(described[group].Err, kerr.GroupIDNotFound) {
		t.Fatalf("a deleted share group described: %v %+v", err, described[group])
	}
}

// shareOffsets renders described share offsets as "topic/p:start/lag".
func shareOffsets(offs kadm.ShareOffsets) string {
	var out []string
	for topic, ps := range offs {
		for p, o := range ps {
			out = append(out, fmt.Sprintf("%s/%d:%d/%d", topic, p, o.StartOffset, o.Lag))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// groupCoordinatorOf asks FindCoordinator for a group's coordinator.
func groupCoordinatorOf(ctx context.Context, cl *kgo.Client, group string) (int32, error) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey, req.CoordinatorKeys = group, []string{group}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return -1, err
	}
	if len(resp.Coordinators) != 1 {
		return -1, fmt.Errorf("FindCoordinator %s: %d coordinators", group, len(resp.Coordinators))
	}
	if err := kerr.ErrorForCode(resp.Coordinators[0].ErrorCode); err != nil {
		return -1, err
	}
	return resp.Coordinators[0].NodeID, nil
}

func shareCoordinatorOf(ctx context.Context, t *testing.T, cl *kgo.Client, group string) int32 {
	t.Helper()
	id, err := groupCoordinatorOf(ctx, cl, group)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestShareGroupCoordinatorFailover: the node coordinating a share group
// dies; the node taking its __consumer_offsets partition over reloads the
// group, whose members carry on at their epochs with their assignments;
// the lag of DescribeShareGroupOffsets asks each partition's leader, here
// other nodes, for its end offset.
func TestShareGroupCoordinatorFailover(t *testing.T) {
	persister := newMemShareGroupPersister()
	c := brokertest.StartCluster(t, 3, brokertest.WithShareGroupPersister(persister))
	ctx := testCtx(t, 90*time.Second)
	cl := rawClient(ctx, t, c)
	adm := kadm.NewClient(cl)
	const topic, group = "shared3", "sg3"
	createReplicatedTopic(t, adm, topic, 3, 3)
	c.WaitForISR(t, topic, 3, 30*time.Second)

	a := &shareGroupMember{t: t, cl: cl, group: group, id: "member-a", findEach: true}
	bm := &shareGroupMember{t: t, cl: cl, group: group, id: "member-b", findEach: true}
	a.mustHeartbeat(ctx, []string{topic})
	bm.mustHeartbeat(ctx, []string{topic})
	heartbeatUntil(ctx, t, "a and b to share the partitions", func() bool {
		return a.count()+bm.count() == 3 && a.count() > 0 && bm.count() > 0 && a.epoch == bm.epoch
	}, a, bm)
	before := fmt.Sprint(a.epoch, a.assigned, bm.epoch, bm.assigned)

	old := shareCoordinatorOf(ctx, t, cl, group)
	c.Kill(t, old)
	heartbeatUntil(ctx, t, "another node to coordinate the group", func() bool {
		for _, m := range []*shareGroupMember{a, bm} {
			if resp, err := m.try(ctx, nil); err != nil || resp.ErrorCode != 0 {
				return false
			}
		}
		return true
	})
	if now := shareCoordinatorOf(ctx, t, cl, group); now == old {
		t.Fatalf("the killed node %d still coordinates the group", old)
	}
	if after := fmt.Sprint(a.epoch, a.assigned, bm.epoch, bm.assigned); after != before {
		t.Fatalf("members after the failover: %s, before: %s", after, before)
	}

	for _, m := range []*shareGroupMember{a, bm} {
		m.epoch = -1
		m.mustHeartbeat(ctx, nil)
	}
	// A new client: franz-go keeps dialing the dead coordinator it cached.
	adm = kadm.NewClient(rawClient(ctx, t, c))
	prod := c.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 9 {
		produceSync(t, prod, &kgo.Record{Topic: topic, Partition: int32(i % 3), Value: []byte("v")})
	}
	offsets := kadm.Offsets{}
	for p := range int32(3) {
		offsets.Add(kadm.Offset{Topic: topic, Partition: p, At: 1})
	}
	if altered, err := adm.AlterShareGroupOffsets(ctx, group, offsets); err != nil || altered.Error() != nil {
		t.Fatalf("AlterShareGroupOffsets: %v %v", err, altered)
	}
	offs, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if got := shareOffsets(offs[group].Offsets); got != "shared3/0:1/2 shared3/1:1/2 shared3/2:1/2" {
		t.Fatalf("offsets and lag after the failover: %s (%v)", got, offs[group].Err)
	}
}
