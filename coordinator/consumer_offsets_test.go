package coordinator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClassicAPIsOnConsumerGroup: the classic group APIs answer a
// consumer group as Kafka answers them for members of the consumer
// protocol, and ListGroups/DescribeGroups/ConsumerGroupDescribe tell the
// two kinds of group apart.
func TestClassicAPIsOnConsumerGroup(t *testing.T) {
	h := newHarness(t)
	a := h.newConsumer("g", "a", "foo")
	s := h.newConsumer("g", "s", "foo").static("i")
	a.join()
	s.join()
	h.settle(a, s)
	classic := h.newMember("c", "cl")
	wantCode(t, "classic join", classic.join().ErrorCode, 0)
	wantCode(t, "classic sync", classic.sync(map[string][]byte{classic.id: consumerAssignment(map[string][]int32{"foo": {0}})}).ErrorCode, 0)

	intruder := h.newMember("g", "x")
	jr := intruder.join()
	if jr.ErrorCode != inconsistentGroupProtocol || jr.Generation != -1 {
		t.Fatalf("classic JoinGroup to a consumer group with members: %s gen %d", errName(jr.ErrorCode), jr.Generation)
	}
	asClassic := &tmember{h: h, group: "g", clientID: "x", id: "a", generation: a.epoch}
	wantCode(t, "SyncGroup of a consumer-protocol member", asClassic.sync(nil).ErrorCode, unknownMemberID)
	wantCode(t, "Heartbeat of a consumer-protocol member", asClassic.heartbeat(), unknownMemberID)
	other := &tmember{h: h, group: "g", clientID: "x", id: "other", instanceID: kmsg.StringPtr("i"), generation: 1}
	wantCode(t, "Heartbeat naming another member's instance id", other.heartbeat(), fencedInstanceID)
	leave := asClassic.leave()
	wantCode(t, "LeaveGroup of a consumer-protocol member", leave.Members[0].ErrorCode, unknownMemberID)

	d := h.describe("g")
	if d.ErrorCode != 0 || d.State != "Dead" || len(d.Members) != 0 || d.ProtocolType != "" {
		t.Fatalf("DescribeGroups of a consumer group: %+v", d)
	}
	wantNames(t, "ListGroups", h.listGroupTypes(), "c/Stable/consumer/classic", "g/Stable/consumer/consumer")
	wantNames(t, "ListGroups of consumer groups", h.listGroupTypes("Consumer"), "g/Stable/consumer/consumer")
	wantNames(t, "ListGroups of classic groups", h.listGroupTypes("classic"), "c/Stable/consumer/classic")
	if cd := h.describeConsumer("c"); cd.ErrorCode != groupIDNotFound || *cd.ErrorMessage != "Group c is not a consumer group." {
		t.Fatalf("ConsumerGroupDescribe of a classic group: %s %v", errName(cd.ErrorCode), cd.ErrorMessage)
	}
	if cd := h.describeConsumer("nope"); cd.ErrorCode != groupIDNotFound || *cd.ErrorMessage != "Consumer group nope not found." {
		t.Fatalf("ConsumerGroupDescribe of no group: %s %v", errName(cd.ErrorCode), cd.ErrorMessage)
	}
	// A heartbeat for a classic group's id.
	cm := h.newConsumer("c", "m", "foo")
	if resp := cm.send(cm.request(3)); resp.ErrorCode != groupIDNotFound || *resp.ErrorMessage != "Group c is not a consumer group." {
		t.Fatalf("consumer heartbeat to a classic group: %s %v", errName(resp.ErrorCode), resp.ErrorMessage)
	}

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"g"}
	wantCode(t, "deleting a consumer group with members", h.c.DeleteGroups(context.Background(), del).Groups[0].ErrorCode, nonEmptyGroup)

	// The admin client removes a static member by its instance id alone.
	_, before, _, _ := h.cgState("g")
	rm := kmsg.NewPtrLeaveGroupRequest()
	rm.Version = 5
	rm.Group = "g"
	rm.Members = []kmsg.LeaveGroupRequestMember{{InstanceID: kmsg.StringPtr("i")}, {InstanceID: kmsg.StringPtr("unknown")}}
	lr := h.c.LeaveGroup(context.Background(), rm)
	wantCode(t, "removing static member i", lr.Members[0].ErrorCode, 0)
	wantCode(t, "removing an unknown instance", lr.Members[1].ErrorCode, unknownMemberID)
	h.drainWrites()
	if _, e, _, n := h.cgState("g"); n != 1 || e != before+1 {
		t.Fatalf("after removing i: epoch %d, %d members", e, n)
	}
	h.settle(a)
	wantNames(t, "a", a.ownedSet(), "foo/0", "foo/1", "foo/2")
}

// TestOffsetCommitToConsumerGroup: commits and fetches of a consumer
// group's member are checked against its member epoch; the admin client
// commits only to an empty group; offsets of subscribed topics cannot be
// deleted.
func TestOffsetCommitToConsumerGroup(t *testing.T) {
	h := newHarness(t)
	a := h.newConsumer("g", "a", "foo")
	a.join()
	offs := map[string]map[int32]int64{"foo": {0: 10}, "bar": {0: 20}}
	code := func(v int16, member string, epoch int32) int16 {
		return commitCodes(h.commit(v, "g", member, epoch, offs))["foo/0"]
	}
	wantCode(t, "OffsetCommit v8 by a consumer-protocol member", code(8, "a", 1), unsupportedVersion)
	wantCode(t, "a newer epoch", code(9, "a", 2), staleMemberEpoch)
	wantCode(t, "an unknown member", code(9, "x", 1), unknownMemberID)
	wantCode(t, "no member, group not empty", code(9, "", -1), unknownMemberID)
	for tp, c := range commitCodes(h.commit(9, "g", "a", 1, offs)) {
		wantCode(t, "commit at the member epoch "+tp, c, 0)
	}

	fetch := func(member *string, epoch int32) (int16, []string) {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = 9
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group, rg.MemberID, rg.MemberEpoch = "g", member, epoch
		req.Groups = append(req.Groups, rg)
		g := h.c.OffsetFetch(context.Background(), req).Groups[0]
		var got []string
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				got = append(got, fmt.Sprintf("%s/%d@%d", t.Topic, p.Partition, p.Offset))
			}
		}
		slices.Sort(got)
		return g.ErrorCode, got
	}
	if c, got := fetch(kmsg.StringPtr("a"), 1); c != 0 || !slices.Equal(got, []string{"bar/0@20", "foo/0@10"}) {
		t.Fatalf("fetch by the member: %s %v", errName(c), got)
	}
	if c, got := fetch(nil, -1); c != 0 || len(got) != 2 {
		t.Fatalf("fetch by the admin client: %s %v", errName(c), got)
	}
	if c, _ := fetch(kmsg.StringPtr("a"), 0); c != staleMemberEpoch {
		t.Fatalf("fetch at an old epoch: %s", errName(c))
	}
	if c, _ := fetch(kmsg.StringPtr("x"), 1); c != unknownMemberID {
		t.Fatalf("fetch by an unknown member: %s", errName(c))
	}

	del := func(topic string) int16 {
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = "g"
		req.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
		resp := h.c.OffsetDelete(context.Background(), req)
		if resp.ErrorCode != 0 {
			return resp.ErrorCode
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	wantCode(t, "deleting a subscribed topic's offset", del("foo"), groupSubscribedToTopic)
	wantCode(t, "deleting another topic's offset", del("bar"), 0)

	a.leave(-1)
	wantCode(t, "the admin client committing to the empty group", code(9, "", -1), 0)
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Groups = []string{"g"}
	wantCode(t, "deleting the empty group", h.c.DeleteGroups(context.Background(), req).Groups[0].ErrorCode, 0)
	if offs, _ := h.fetchAll("g"); len(offs) != 0 {
		t.Fatalf("offsets of the deleted group: %v", offs)
	}
	if st, _, _, _ := h.cgState("g"); st != "none" {
		t.Fatalf("deleted group: %s", st)
	}
}

// TestOffsetCommitAssignmentEpochs: KIP-1251. A member may commit at an
// epoch older than its own the partitions it was given at that epoch or
// before and still holds; not a partition it gave up or was given later.
// The epochs are written with the assignment and survive a reload.
func TestOffsetCommitAssignmentEpochs(t *testing.T) {
	h := newHarness(t)
	a, b := h.newConsumer("g", "a", "foo"), h.newConsumer("g", "b", "foo")
	a.join() // epoch 1: a gets foo/0-2
	b.join() // epoch 2
	h.settle(a, b)
	if a.epoch != 2 || b.epoch != 2 {
		t.Fatalf("epochs a %d b %d", a.epoch, b.epoch)
	}
	kept, moved := a.ownedSet(), b.ownedSet()
	if len(kept) == 0 || len(moved) == 0 {
		t.Fatalf("a %v b %v", kept, moved)
	}
	commit := func(member string, epoch int32, tps ...string) map[string]int16 {
		offs := map[string]map[int32]int64{}
		for _, tp := range tps {
			var p int32
			fmt.Sscanf(strings.TrimPrefix(tp, "foo/"), "%d", &p)
			if offs["foo"] == nil {
				offs["foo"] = map[int32]int64{}
			}
			offs["foo"][p] = 100
		}
		return commitCodes(h.commit(9, "g", member, epoch, offs))
	}
	check := func(what string, got map[string]int16, want int16, tps ...string) {
		t.Helper()
		for _, tp := range tps {
			wantCode(t, what+" "+tp, got[tp], want)
		}
	}
	all := append(slices.Clone(kept), moved...)

	// a, at epoch 2, commits at epoch 1 (a commit sent before it heard
	// of epoch 2): taken for the partitions it kept, refused for those it
	// gave up.
	got := commit("a", 1, all...)
	check("a at its previous epoch", got, 0, kept...)
	check("a at its previous epoch", got, staleMemberEpoch, moved...)
	// b was given its partitions at epoch 2: epoch 1 is too old for them.
	check("b at an epoch before its partitions", commit("b", 1, moved...), staleMemberEpoch, moved...)
	// At the member's own epoch every partition is taken, as before
	// KIP-1251; past it none.
	check("a at its epoch", commit("a", 2, all...), 0, all...)
	check("a past its epoch", commit("a", 3, kept...), staleMemberEpoch, kept...)
	// A transactional commit answers ILLEGAL_GENERATION instead.
	x := h.txnProducer("g", 7)
	x.memberID, x.generation = "a", 1
	txn := x.commit(map[string]map[int32]int64{"foo": {0: 1, 1: 1, 2: 1}})
	check("a transactional commit at the previous epoch", txn, 0, kept...)
	check("a transactional commit at the previous epoch", txn, illegalGeneration, moved...)

	h.restart()
	got = commit("a", 1, all...)
	check("after a reload, a at its previous epoch", got, 0, kept...)
	check("after a reload, a at its previous epoch", got, staleMemberEpoch, moved...)
}

// TestEmptyGroupsChangeProtocol: an empty classic group becomes a
// consumer group at its first ConsumerGroupHeartbeat, keeping its
// offsets, whatever group.consumer.migration.policy says (as Kafka
// does); an empty consumer group becomes a classic group at its first
// JoinGroup. A classic group with members is not converted: the answer
// is GROUP_ID_NOT_FOUND, saying why.
func TestEmptyGroupsChangeProtocol(t *testing.T) {
	for _, policy := range []string{"disabled", "upgrade", "downgrade", "bidirectional"} {
		t.Run(policy, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.ConsumerMigrationPolicy = policy })
			m := h.newMember("g", "cl")
			wantCode(t, "classic join", m.join().ErrorCode, 0)
			wantCode(t, "classic sync", m.sync(map[string][]byte{m.id: consumerAssignment(map[string][]int32{"foo": {0, 1, 2}})}).ErrorCode, 0)
			wantCode(t, "classic commit", commitCodes(h.commit(9, "g", m.id, m.generation, map[string]map[int32]int64{"foo": {1: 42}}))["foo/1"], 0)

			a := h.newConsumer("g", "a", "foo")
			resp := a.send(a.request(0))
			want := "Cannot upgrade classic group g to consumer group while it has members: groups mixing both protocols are not served."
			if policy == "disabled" || policy == "downgrade" {
				want = "Cannot upgrade classic group g to consumer group because online upgrade is disabled."
			}
			if resp.ErrorCode != groupIDNotFound || *resp.ErrorMessage != want {
				t.Fatalf("joining a classic group with members: %s %v", errName(resp.ErrorCode), resp.ErrorMessage)
			}

			wantCode(t, "classic leave", m.leave().Members[0].ErrorCode, 0)
			a.join()
			wantNames(t, "groups after the upgrade", h.listGroupTypes(), "g/Stable/consumer/consumer")
			h.restart()
			wantNames(t, "groups after a reload", h.listGroupTypes(), "g/Stable/consumer/consumer")
			if st, _, _, _ := h.groupState("g"); st != stateDead {
				t.Fatalf("the classic group came back: %s", st)
			}
			if offs, _ := h.fetchAll("g"); offs["foo/1"] != "42/5/m42" {
				t.Fatalf("offsets after the upgrade: %v", offs)
			}
			a.heartbeat()

			a.leave(-1)
			m2 := h.newMember("g", "cl")
			wantCode(t, "classic join to the empty consumer group", m2.join().ErrorCode, 0)
			wantNames(t, "groups after the downgrade", h.listGroupTypes(), "g/CompletingRebalance/consumer/classic")
			if offs, _ := h.fetchAll("g"); offs["foo/1"] != "42/5/m42" {
				t.Fatalf("offsets after the downgrade, before a reload: %v", offs)
			}
			h.restart()
			if st, _, _, _ := h.cgState("g"); st != "none" {
				t.Fatalf("the consumer group came back after a reload: %s", st)
			}
			if offs, _ := h.fetchAll("g"); offs["foo/1"] != "42/5/m42" {
				t.Fatalf("offsets after the downgrade: %v", offs)
			}
		})
	}

	h := newHarness(t)
	other := h.newMember("x", "cl", kmsg.JoinGroupRequestProtocol{Name: "p", Metadata: []byte{1}})
	req := other.joinReq()
	req.ProtocolType = "connect"
	resp := h.c.JoinGroup(clientCtx("cl"), req)
	if resp.ErrorCode == memberIDRequired {
		req.MemberID = resp.MemberID
		resp = h.c.JoinGroup(clientCtx("cl"), req)
	}
	wantCode(t, "connect join", resp.ErrorCode, 0)
	a := h.newConsumer("x", "a", "foo")
	if r := a.send(a.request(0)); r.ErrorCode != groupIDNotFound ||
		*r.ErrorMessage != "Cannot upgrade classic group x to consumer group because the group does not use the consumer embedded protocol." {
		t.Fatalf("joining a connect group: %s %v", errName(r.ErrorCode), r.ErrorMessage)
	}
}
