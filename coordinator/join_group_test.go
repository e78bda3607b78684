package coordinator

import (
	"bytes"
	"context"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// threeMemberGroup brings a, b and c into generation 1 of group g through
// the initial rebalance delay, with a as leader assigning foo's partitions,
// and returns them Stable.
func threeMemberGroup(t *testing.T, h *harness, group string) (a, b, c *tmember) {
	t.Helper()
	a, b, c = h.newMember(group, "ca"), h.newMember(group, "cb"), h.newMember(group, "cc")
	ja := a.joinAsync()
	h.waitAwaiting(group, 1)
	jb := b.joinAsync()
	h.waitAwaiting(group, 2)
	jc := c.joinAsync()
	h.waitAwaiting(group, 3)
	notReady(t, ja)
	// The initial delay (3s) ends, but members joined during it: it is
	// extended once more (bounded by the rebalance timeout).
	h.advance(3 * time.Second)
	notReady(t, ja)
	h.advance(3 * time.Second)
	ra, rb, rc := recv(t, ja), recv(t, jb), recv(t, jc)
	for _, r := range []*kmsg.JoinGroupResponse{ra, rb, rc} {
		wantCode(t, "join", r.ErrorCode, 0)
		if r.Generation != 1 || *r.Protocol != "range" || *r.ProtocolType != "consumer" || r.LeaderID != a.id {
			t.Fatalf("join response: gen %d protocol %v type %v leader %q (want 1 range consumer %q)", r.Generation, *r.Protocol, *r.ProtocolType, r.LeaderID, a.id)
		}
	}
	if len(ra.Members) != 3 || len(rb.Members) != 0 || len(rc.Members) != 0 {
		t.Fatalf("member lists: leader %d, followers %d %d; want 3 0 0", len(ra.Members), len(rb.Members), len(rc.Members))
	}
	for i, want := range []*tmember{a, b, c} {
		if ra.Members[i].MemberID != want.id || !bytes.Equal(ra.Members[i].ProtocolMetadata, want.protocols[0].Metadata) {
			t.Fatalf("leader's member %d = %q, want %q with its metadata", i, ra.Members[i].MemberID, want.id)
		}
	}
	fb, fc := b.syncAsync(nil), c.syncAsync(nil)
	h.waitSyncParked(group, b.id)
	h.waitSyncParked(group, c.id)
	notReady(t, fb)
	assign := map[string][]byte{
		a.id: consumerAssignment(map[string][]int32{"foo": {0}}),
		b.id: consumerAssignment(map[string][]int32{"foo": {1}}),
		c.id: consumerAssignment(map[string][]int32{"foo": {2}}),
	}
	sa := a.sync(assign)
	sb, sc := recv(t, fb), recv(t, fc)
	for m, r := range map[*tmember]*kmsg.SyncGroupResponse{a: sa, b: sb, c: sc} {
		wantCode(t, "sync "+m.clientID, r.ErrorCode, 0)
		if !bytes.Equal(r.MemberAssignment, assign[m.id]) || *r.Protocol != "range" || *r.ProtocolType != "consumer" {
			t.Fatalf("sync %s: assignment %x protocol %v, want %x range", m.clientID, r.MemberAssignment, r.Protocol, assign[m.id])
		}
	}
	if st, gen, n, _ := h.groupState(group); st != stateStable || gen != 1 || n != 3 {
		t.Fatalf("group: %s gen %d members %d, want Stable 1 3", st, gen, n)
	}
	return a, b, c
}

func TestJoinSyncHeartbeatThreeMembers(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.InitialRebalanceDelay = 3 * time.Second })
	a, b, c := threeMemberGroup(t, h, "g1")
	for _, m := range []*tmember{a, b, c} {
		wantCode(t, "heartbeat", m.heartbeat(), 0)
	}

	// The assignment was persisted before anyone was answered.
	recs := h.log.records(t, PartitionFor("g1", testPartitions))
	last := recs[len(recs)-1]
	if last.groupKey == nil || last.groupKey.Group != "g1" || last.groupValue == nil {
		t.Fatalf("last record is not g1's group metadata: %+v", last)
	}
	v := last.groupValue
	if v.Version != 3 || v.Generation != 1 || *v.Protocol != "range" || v.ProtocolType != "consumer" || *v.Leader != a.id || len(v.Members) != 3 {
		t.Fatalf("group metadata record: %+v", v)
	}
	for i, m := range []*tmember{a, b, c} {
		rm := v.Members[i]
		if rm.MemberID != m.id || rm.ClientID != m.clientID || rm.ClientHost != "/192.0.2.7" || rm.SessionTimeoutMillis != 10000 ||
			rm.RebalanceTimeoutMillis != 30000 || !bytes.Equal(rm.Subscription, m.protocols[0].Metadata) {
			t.Fatalf("record member %d: %+v", i, rm)
		}
	}

	d := h.describe("g1")
	if d.ErrorCode != 0 || d.State != "Stable" || d.ProtocolType != "consumer" || d.Protocol != "range" || len(d.Members) != 3 ||
		d.AuthorizedOperations != -2147483648 {
		t.Fatalf("describe: %+v", d)
	}
	if d.Members[1].MemberID != b.id || d.Members[1].ClientID != "cb" || d.Members[1].ClientHost != "/192.0.2.7" ||
		!bytes.Equal(d.Members[1].MemberAssignment, consumerAssignment(map[string][]int32{"foo": {1}})) {
		t.Fatalf("described member: %+v", d.Members[1])
	}

	// A member leaves: the others learn of the rebalance from heartbeats
	// and rejoin into generation 2; the leader is still a.
	lr := c.leave()
	wantCode(t, "leave", lr.Members[0].ErrorCode, 0)
	wantCode(t, "heartbeat after leave", a.heartbeat(), rebalanceInProgress)
	wantCode(t, "left member heartbeat", c.heartbeat(), unknownMemberID)
	ja, jb := a.joinAsync(), b.joinAsync()
	ra, rb := recv(t, ja), recv(t, jb)
	if ra.Generation != 2 || rb.Generation != 2 || len(ra.Members) != 2 || ra.LeaderID != a.id {
		t.Fatalf("rejoin: gen %d/%d leader members %d leader %q", ra.Generation, rb.Generation, len(ra.Members), ra.LeaderID)
	}
	wantCode(t, "stale generation heartbeat", (&tmember{h: h, group: "g1", id: b.id, generation: 1}).heartbeat(), illegalGeneration)
}

func TestMemberSessionExpiry(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.InitialRebalanceDelay = 3 * time.Second })
	a, b, c := threeMemberGroup(t, h, "g")
	// a and b heartbeat every 4s; c is silent. Its 10s session ends.
	for range 2 {
		h.advance(4 * time.Second)
		wantCode(t, "a", a.heartbeat(), 0)
		wantCode(t, "b", b.heartbeat(), 0)
	}
	if st, _, n, _ := h.groupState("g"); st != stateStable || n != 3 {
		t.Fatalf("before expiry: %s with %d members", st, n)
	}
	h.advance(2*time.Second + time.Millisecond)
	if st, _, n, _ := h.groupState("g"); st != statePreparingRebalance || n != 2 {
		t.Fatalf("after c's session expired: %s with %d members, want PreparingRebalance 2", st, n)
	}
	wantCode(t, "expired member", c.heartbeat(), unknownMemberID)
	wantCode(t, "a during rebalance", a.heartbeat(), rebalanceInProgress)
	ja, jb := a.joinAsync(), b.joinAsync()
	ra, rb := recv(t, ja), recv(t, jb)
	if ra.Generation != 2 || rb.Generation != 2 || len(ra.Members) != 2 {
		t.Fatalf("rejoin after expiry: gen %d/%d, %d members", ra.Generation, rb.Generation, len(ra.Members))
	}
}

func TestRebalanceTimeoutRemovesMembersThatDoNotRejoin(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.InitialRebalanceDelay = 3 * time.Second })
	a, b, c := threeMemberGroup(t, h, "g")
	// The leader rejoins (forcing a rebalance); b rejoins, c never does
	// but keeps heartbeating: the rebalance timeout (30s) removes it.
	ja := a.joinAsync()
	h.waitAwaiting("g", 1)
	jb := b.joinAsync()
	h.waitAwaiting("g", 2)
	for range 7 {
		h.advance(4 * time.Second)
		wantCode(t, "c heartbeat during rebalance", c.heartbeat(), rebalanceInProgress)
	}
	notReady(t, ja)
	h.advance(2 * time.Second)
	ra, rb := recv(t, ja), recv(t, jb)
	if ra.Generation != 2 || rb.Generation != 2 || len(ra.Members) != 2 {
		t.Fatalf("after rebalance timeout: gen %d/%d, %d members", ra.Generation, rb.Generation, len(ra.Members))
	}
	wantCode(t, "removed member", c.heartbeat(), unknownMemberID)
}

func TestMemberIDRequiredAndPendingExpiry(t *testing.T) {
	h := newHarness(t)
	m := h.newMember("g", "client")
	r := m.joinOnce()
	wantCode(t, "first join v9", r.ErrorCode, memberIDRequired)
	if len(r.MemberID) < len("client-")+36 || r.MemberID[:7] != "client-" {
		t.Fatalf("generated member id %q, want client-<uuid>", r.MemberID)
	}
	h.withGroup("g", func(g *classicGroup) {
		if !g.isPendingMember(r.MemberID) || len(g.members) != 0 {
			t.Fatalf("pending %v members %d", g.isPendingMember(r.MemberID), len(g.members))
		}
	})
	// The pending id expires with the session timeout.
	h.advance(10*time.Second + time.Millisecond)
	h.withGroup("g", func(g *classicGroup) {
		if g.isPendingMember(r.MemberID) {
			t.Fatal("pending member outlived its session timeout")
		}
	})
	r = m.joinOnce()
	wantCode(t, "join with an expired pending id", r.ErrorCode, unknownMemberID)

	// JoinGroup v3 has no MEMBER_ID_REQUIRED step.
	old := kmsg.NewPtrJoinGroupRequest()
	old.Version = 3
	old.Group = "g3"
	old.SessionTimeoutMillis = 10000
	old.RebalanceTimeoutMillis = 10000
	old.ProtocolType = "consumer"
	old.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{1}}}
	r = h.c.JoinGroup(clientCtx("old"), old)
	wantCode(t, "v3 join", r.ErrorCode, 0)
	if r.Generation != 1 || r.LeaderID != r.MemberID || r.Version != 3 {
		t.Fatalf("v3 join: %+v", r)
	}
}

func TestStaticMemberReplacement(t *testing.T) {
	h := newHarness(t)
	a := h.newMember("g", "ca")
	a.instanceID = kmsg.StringPtr("instance-a")
	b := h.newMember("g", "cb")
	b.instanceID = kmsg.StringPtr("instance-b")
	ra := a.join()
	wantCode(t, "static join", ra.ErrorCode, 0) // static members get no MEMBER_ID_REQUIRED
	if ra.MemberID[:len("instance-a-")] != "instance-a-" {
		t.Fatalf("static member id %q", ra.MemberID)
	}
	wantCode(t, "sync", a.sync(map[string][]byte{a.id: []byte("A1")}).ErrorCode, 0)
	jb := b.joinAsync()
	h.waitAwaiting("g", 1)
	wantCode(t, "a heartbeat", a.heartbeat(), rebalanceInProgress)
	ja := a.joinAsync()
	ra, rb := recv(t, ja), recv(t, jb)
	if ra.Generation != 2 || rb.Generation != 2 {
		t.Fatalf("gen %d %d", ra.Generation, rb.Generation)
	}
	fb := b.syncAsync(nil)
	h.waitSyncParked("g", b.id)
	wantCode(t, "leader sync", a.sync(map[string][]byte{a.id: []byte("A2"), b.id: []byte("B2")}).ErrorCode, 0)
	wantCode(t, "b sync", recv(t, fb).ErrorCode, 0)

	// a restarts: same instance id, no member id. Stable, same protocols:
	// no rebalance; a gets a new member id in the same generation and, at
	// v9, the member list with SkipAssignment since it leads.
	oldID := a.id
	a2 := h.newMember("g", "ca")
	a2.instanceID = kmsg.StringPtr("instance-a")
	r := a2.join()
	wantCode(t, "static rejoin", r.ErrorCode, 0)
	if r.MemberID == oldID || r.Generation != 2 || r.LeaderID != r.MemberID || !r.SkipAssignment || len(r.Members) != 2 {
		t.Fatalf("static rejoin: id %q (old %q) gen %d leader %q skip %v members %d", r.MemberID, oldID, r.Generation, r.LeaderID, r.SkipAssignment, len(r.Members))
	}
	if st, gen, _, _ := h.groupState("g"); st != stateStable || gen != 2 {
		t.Fatalf("group after static rejoin: %s gen %d, want Stable 2 (no rebalance)", st, gen)
	}
	// The old incarnation is fenced; the new one keeps the assignment.
	wantCode(t, "old static member heartbeat", a.heartbeat(), fencedInstanceID)
	wantCode(t, "new static member heartbeat", a2.heartbeat(), 0)
	s := a2.sync(nil)
	wantCode(t, "new static member sync", s.ErrorCode, 0)
	if string(s.MemberAssignment) != "A2" {
		t.Fatalf("assignment after replacement %q, want A2", s.MemberAssignment)
	}
	wantCode(t, "b unaffected", b.heartbeat(), 0)
	// The new member id was persisted.
	recs := h.log.records(t, PartitionFor("g", testPartitions))
	v := recs[len(recs)-1].groupValue
	if v == nil || v.Members[0].MemberID != a2.id || *v.Members[0].InstanceID != "instance-a" || string(v.Members[0].Assignment) != "A2" {
		t.Fatalf("persisted static member: %+v", v)
	}

	// A join carrying the old member id with the instance id is fenced.
	a.generation = 2
	wantCode(t, "old id rejoin", a.joinOnce().ErrorCode, fencedInstanceID)

	// LeaveGroup by instance id alone (admin removal) removes the member.
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 3
	req.Group = "g"
	req.Members = []kmsg.LeaveGroupRequestMember{{InstanceID: kmsg.StringPtr("instance-b")}, {InstanceID: kmsg.StringPtr("nope")}}
	lr := h.c.LeaveGroup(context.Background(), req)
	if lr.ErrorCode != 0 || len(lr.Members) != 2 || lr.Members[0].ErrorCode != 0 || lr.Members[1].ErrorCode != unknownMemberID {
		t.Fatalf("leave by instance id: %+v", lr)
	}
	if _, _, n, _ := h.groupState("g"); n != 1 {
		t.Fatalf("members after removing instance-b: %d", n)
	}
}

func TestStaticMemberRejoinDuringCompletingRebalanceRebalances(t *testing.T) {
	h := newHarness(t)
	a := h.newMember("g", "ca")
	a.instanceID = kmsg.StringPtr("ia")
	wantCode(t, "join", a.join().ErrorCode, 0)
	// Group is CompletingRebalance (no SyncGroup yet). The instance comes
	// back with a new process: a rebalance, so the leader does not assign
	// to a dead member id.
	a2 := h.newMember("g", "ca")
	a2.instanceID = kmsg.StringPtr("ia")
	r := a2.join()
	wantCode(t, "rejoin", r.ErrorCode, 0)
	if r.Generation != 2 || r.LeaderID != a2.id {
		t.Fatalf("rejoin: gen %d leader %q", r.Generation, r.LeaderID)
	}
}

func TestCooperativeTwoPhaseRebalance(t *testing.T) {
	h := newHarness(t)
	owned := func(ps ...int32) []kmsg.JoinGroupRequestProtocol {
		var o map[string][]int32
		if len(ps) > 0 {
			o = map[string][]int32{"foo": ps}
		}
		return []kmsg.JoinGroupRequestProtocol{{Name: "cooperative-sticky", Metadata: consumerMeta([]string{"foo"}, o)}}
	}
	a := h.newMember("g", "ca", owned()...)
	wantCode(t, "a joins", a.join().ErrorCode, 0)
	wantCode(t, "a syncs", a.sync(map[string][]byte{a.id: consumerAssignment(map[string][]int32{"foo": {0, 1, 2}})}).ErrorCode, 0)
	a.protocols = owned(0, 1, 2)

	// b joins: first rebalance. a rejoins still owning everything; the
	// leader (a) revokes partition 2 from itself but cannot give it to b
	// yet (cooperative), so b gets nothing in generation 2.
	b := h.newMember("g", "cb", owned()...)
	jb := b.joinAsync()
	h.waitAwaiting("g", 1)
	wantCode(t, "a heartbeat", a.heartbeat(), rebalanceInProgress)
	ja := a.joinAsync()
	ra, rb := recv(t, ja), recv(t, jb)
	if ra.Generation != 2 || rb.Generation != 2 || ra.LeaderID != a.id {
		t.Fatalf("phase 1: gen %d/%d leader %q", ra.Generation, rb.Generation, ra.LeaderID)
	}
	fb := b.syncAsync(nil)
	h.waitSyncParked("g", b.id)
	sa := a.sync(map[string][]byte{
		a.id: consumerAssignment(map[string][]int32{"foo": {0, 1}}),
		b.id: consumerAssignment(nil),
	})
	wantCode(t, "phase 1 leader sync", sa.ErrorCode, 0)
	wantCode(t, "phase 1 follower sync", recv(t, fb).ErrorCode, 0)

	// a dropped partition 2: it rejoins right away with its new owned
	// partitions (different metadata), which starts the second rebalance.
	a.protocols = owned(0, 1)
	ja = a.joinAsync()
	h.waitAwaiting("g", 1)
	if st, _, _, _ := h.groupState("g"); st != statePreparingRebalance {
		t.Fatalf("after a's rejoin: %s", st)
	}
	wantCode(t, "b heartbeat", b.heartbeat(), rebalanceInProgress)
	jb = b.joinAsync()
	ra, rb = recv(t, ja), recv(t, jb)
	if ra.Generation != 3 || rb.Generation != 3 {
		t.Fatalf("phase 2: gen %d/%d", ra.Generation, rb.Generation)
	}
	// The leader sees the current ownership: a owns 0,1 and b nothing.
	var metaA kmsg.ConsumerMemberMetadata
	for _, m := range ra.Members {
		if m.MemberID == a.id {
			if err := metaA.ReadFrom(m.ProtocolMetadata); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(metaA.OwnedPartitions) != 1 || len(metaA.OwnedPartitions[0].Partitions) != 2 {
		t.Fatalf("leader sees a owning %+v, want foo [0 1]", metaA.OwnedPartitions)
	}
	fb = b.syncAsync(nil)
	h.waitSyncParked("g", b.id)
	wantCode(t, "phase 2 leader sync", a.sync(map[string][]byte{
		a.id: consumerAssignment(map[string][]int32{"foo": {0, 1}}),
		b.id: consumerAssignment(map[string][]int32{"foo": {2}}),
	}).ErrorCode, 0)
	sb := recv(t, fb)
	wantCode(t, "phase 2 follower sync", sb.ErrorCode, 0)
	var asg kmsg.ConsumerMemberAssignment
	if err := asg.ReadFrom(sb.MemberAssignment); err != nil || len(asg.Topics) != 1 || asg.Topics[0].Partitions[0] != 2 {
		t.Fatalf("b's phase 2 assignment: %+v %v", asg, err)
	}
	if st, gen, _, _ := h.groupState("g"); st != stateStable || gen != 3 {
		t.Fatalf("final: %s gen %d", st, gen)
	}
}

func TestJoinErrors(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxGroupSize = 2 })
	join := func(mut func(r *kmsg.JoinGroupRequest)) *kmsg.JoinGroupResponse {
		req := h.newMember("g", "c").joinReq()
		mut(req)
		return h.c.JoinGroup(clientCtx("c"), req)
	}
	wantCode(t, "empty group id", join(func(r *kmsg.JoinGroupRequest) { r.Group = "" }).ErrorCode, invalidGroupID)
	wantCode(t, "session below min", join(func(r *kmsg.JoinGroupRequest) { r.SessionTimeoutMillis = 5999 }).ErrorCode, invalidSessionTimeout)
	wantCode(t, "session above max", join(func(r *kmsg.JoinGroupRequest) { r.SessionTimeoutMillis = 1800001 }).ErrorCode, invalidSessionTimeout)
	wantCode(t, "no protocols", join(func(r *kmsg.JoinGroupRequest) { r.Protocols = nil }).ErrorCode, inconsistentGroupProtocol)
	wantCode(t, "no protocol type", join(func(r *kmsg.JoinGroupRequest) { r.ProtocolType = "" }).ErrorCode, inconsistentGroupProtocol)
	wantCode(t, "member id of a missing group", join(func(r *kmsg.JoinGroupRequest) { r.MemberID = "ghost"; r.Group = "nope" }).ErrorCode, unknownMemberID)

	a, b := h.newMember("g", "ca"), h.newMember("g", "cb")
	wantCode(t, "a", a.join().ErrorCode, 0)
	wantCode(t, "a sync", a.sync(nil).ErrorCode, 0)
	// A protocol the group's members do not support, or another type.
	other := h.newMember("g", "x", kmsg.JoinGroupRequestProtocol{Name: "roundrobin", Metadata: []byte{1}})
	wantCode(t, "unsupported protocol", other.join().ErrorCode, inconsistentGroupProtocol)
	connect := h.newMember("g", "x")
	req := connect.joinReq()
	req.ProtocolType = "connect"
	wantCode(t, "other protocol type", h.c.JoinGroup(clientCtx("x"), req).ErrorCode, inconsistentGroupProtocol)
	// An unknown member id in an existing group.
	ghost := h.newMember("g", "ghost")
	ghost.id = "ghost-1"
	wantCode(t, "unknown member", ghost.joinOnce().ErrorCode, unknownMemberID)

	// group.max.size = 2: b fits, a third member does not.
	jb := b.joinAsync()
	h.waitAwaiting("g", 1)
	ja := a.joinAsync()
	recv(t, ja)
	recv(t, jb)
	c := h.newMember("g", "cc")
	r := c.join()
	wantCode(t, "third member", r.ErrorCode, groupMaxSizeReached)
	if r.MemberID != "" {
		t.Fatalf("rejected member got id %q", r.MemberID)
	}
}

func TestProtocolSelectionByVote(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.InitialRebalanceDelay = time.Second })
	p := func(names ...string) []kmsg.JoinGroupRequestProtocol {
		var out []kmsg.JoinGroupRequestProtocol
		for _, n := range names {
			out = append(out, kmsg.JoinGroupRequestProtocol{Name: n, Metadata: []byte(n)})
		}
		return out
	}
	// Everyone supports range and roundrobin. a prefers sticky, which not
	// all members support, so a's vote goes to range; three vote
	// roundrobin.
	ms := []*tmember{
		h.newMember("g", "a", p("sticky", "range", "roundrobin")...),
		h.newMember("g", "b", p("roundrobin", "range")...),
		h.newMember("g", "c", p("roundrobin", "range")...),
		h.newMember("g", "d", p("roundrobin", "range")...),
	}
	var chans []<-chan *kmsg.JoinGroupResponse
	for i, m := range ms {
		chans = append(chans, m.joinAsync())
		h.waitAwaiting("g", i+1)
	}
	h.advance(time.Second) // extended: members joined during the delay
	notReady(t, chans[0])
	h.advance(time.Second)
	for _, ch := range chans {
		r := recv(t, ch)
		if *r.Protocol != "roundrobin" {
			t.Fatalf("selected %q, want roundrobin", *r.Protocol)
		}
	}
	// The leader gets each member's metadata for the selected protocol.
	r := ms[0].lastJoin
	var got []string
	for _, m := range r.Members {
		got = append(got, string(m.ProtocolMetadata))
	}
	sort.Strings(got)
	if len(got) != 4 || got[0] != "roundrobin" || got[3] != "roundrobin" {
		t.Fatalf("leader's metadata %v", got)
	}
}

func TestInitialRebalanceDelayExtendsForNewMembers(t *testing.T) {
	h := newHarness(t) // group.initial.rebalance.delay.ms 3000 by default
	h.c.cfg.InitialRebalanceDelay = 3 * time.Second
	a, b := h.newMember("g", "a"), h.newMember("g", "b")
	a.rebalance = 10000
	b.rebalance = 10000
	ja := a.joinAsync()
	h.waitAwaiting("g", 1)
	h.advance(2 * time.Second)
	jb := b.joinAsync()
	h.waitAwaiting("g", 2)
	h.advance(time.Second) // the first delay ends, but b arrived: extended
	notReady(t, ja)
	h.advance(3 * time.Second)
	ra, rb := recv(t, ja), recv(t, jb)
	if ra.Generation != 1 || rb.Generation != 1 || len(ra.Members) != 2 {
		t.Fatalf("initial rebalance: gen %d/%d members %d", ra.Generation, rb.Generation, len(ra.Members))
	}
}
