package coordinator

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// A member's first heartbeat initializes the share state of its topics'
// partitions (start offset -1, state epoch the group epoch) and gets
// nothing; once they are initialized its next heartbeat bumps the epoch
// and gets them all.
func TestShareGroupJoinInitializesThenAssigns(t *testing.T) {
	h, fp := newShareHarness(t)
	resp := h.shareOK("sg", "m1", 0, []string{"foo"})
	if resp.MemberEpoch != 1 || deref(resp.MemberID) != "m1" || resp.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("join: epoch %d member %s interval %d", resp.MemberEpoch, deref(resp.MemberID), resp.HeartbeatIntervalMillis)
	}
	if a := respAssignment(resp); a == nil || len(a) != 0 {
		t.Fatalf("join assignment %v, want an empty one: nothing is initialized yet", h.named(a))
	}
	h.waitInitialized("sg", "[foo:[0 1 2]]")
	calls := fp.initCalls()
	if len(calls) != 1 || calls[0].group != "sg" || calls[0].epoch != 1 || len(calls[0].parts) != 3 {
		t.Fatalf("persister initialize calls: %+v", calls)
	}
	for _, p := range calls[0].parts {
		if p.StartOffset != -1 || p.TopicID != h.topicIDOf("foo") {
			t.Fatalf("initialized %+v, want foo at start offset -1", p)
		}
	}
	h.withShareGroup("sg", func(g *shareGroup) {
		if len(g.partitions.initializing) != 0 {
			t.Fatalf("still initializing: %v", g.partitions.initializing)
		}
	})

	resp = h.shareOK("sg", "m1", 1, nil)
	if resp.MemberEpoch != 2 || h.named(respAssignment(resp)) != "[foo:[0 1 2]]" {
		t.Fatalf("heartbeat after initialization: epoch %d assignment %s", resp.MemberEpoch, h.named(respAssignment(resp)))
	}
	// Nothing changed: same epoch, no assignment in the answer.
	resp = h.shareOK("sg", "m1", 2, nil)
	if resp.MemberEpoch != 2 || resp.Assignment != nil {
		t.Fatalf("steady heartbeat: epoch %d assignment %v", resp.MemberEpoch, resp.Assignment)
	}
	// A full request (the subscription sent again) gets the assignment.
	resp = h.shareOK("sg", "m1", 2, []string{"foo"})
	if resp.MemberEpoch != 2 || h.named(respAssignment(resp)) != "[foo:[0 1 2]]" {
		t.Fatalf("full heartbeat: epoch %d assignment %s", resp.MemberEpoch, h.named(respAssignment(resp)))
	}
	if n := len(fp.initCalls()); n != 1 {
		t.Fatalf("%d initialize calls, want 1: initialized partitions are not asked for again", n)
	}
}

// Members share a topic's partitions: each assignable partition goes to
// at least one member, and to several when members outnumber partitions.
func TestShareGroupMembersSharePartitions(t *testing.T) {
	h, _ := newShareHarness(t)
	h.shareOK("sg", "a", 0, []string{"foo"})
	h.waitInitialized("sg", "[foo:[0 1 2]]")
	h.shareOK("sg", "a", 1, nil)
	assigned := map[string]assignment{"b": respAssignment(h.shareOK("sg", "b", 0, []string{"foo"}))}
	epochs := map[string]int32{"a": 2, "b": 3}
	for range 2 {
		for _, m := range []string{"a", "b"} {
			resp := h.shareOK("sg", m, epochs[m], nil)
			epochs[m] = resp.MemberEpoch
			if a := respAssignment(resp); a != nil {
				assigned[m] = a
			}
		}
	}
	union := unionAssignments(assigned["a"], assigned["b"])
	if h.named(union) != "[foo:[0 1 2]]" || assigned["a"].count()+assigned["b"].count() != 3 {
		t.Fatalf("two members on foo(3): a %s b %s", h.named(assigned["a"]), h.named(assigned["b"]))
	}

	// Five members on bar (2 partitions): each partition to three of them.
	for i, m := range []string{"m1", "m2", "m3", "m4", "m5"} {
		resp := h.shareOK("bars", m, 0, []string{"bar"})
		if i == 0 {
			h.waitInitialized("bars", "[bar:[0 1]]")
		}
		epochs[m] = resp.MemberEpoch
	}
	holders := map[int32]int{}
	for _, m := range []string{"m1", "m2", "m3", "m4", "m5"} {
		resp := h.shareOK("bars", m, epochs[m], []string{"bar"})
		a := respAssignment(resp)
		if n := a.count(); n < 1 || n > 2 {
			t.Fatalf("member %s got %s, want 1 or 2 partitions", m, h.named(a))
		}
		for _, p := range a[h.topicIDOf("bar")] {
			holders[p]++
		}
	}
	if holders[0] != 3 || holders[1] != 3 {
		t.Fatalf("holders of bar's partitions %v, want 3 each", holders)
	}
}

func TestShareGroupLeaveAndSessionExpiry(t *testing.T) {
	h, _ := newShareHarness(t)
	h.shareOK("sg", "a", 0, []string{"foo"})
	h.waitInitialized("sg", "[foo:[0 1 2]]")
	h.shareOK("sg", "a", 1, nil) // epoch 2, foo 0-2
	h.shareOK("sg", "b", 0, []string{"foo"})
	resp := h.shareOK("sg", "a", 2, nil)
	resp = h.shareOK("sg", "a", resp.MemberEpoch, nil)
	if n := h.groupShareMembers("sg"); n != 2 {
		t.Fatalf("%d members", n)
	}

	// b leaves: epoch -1 back, the group epoch moves, a gets it all.
	leave := h.shareOK("sg", "b", -1, nil)
	if leave.MemberEpoch != -1 || deref(leave.MemberID) != "b" {
		t.Fatalf("leave answer: %+v", leave)
	}
	resp = h.shareOK("sg", "a", resp.MemberEpoch, nil)
	if h.named(respAssignment(resp)) != "[foo:[0 1 2]]" {
		t.Fatalf("a after b left: %s", h.named(respAssignment(resp)))
	}
	wantCode(t, "b leaves again", h.shareHB("sg", "b", -1, nil).ErrorCode, unknownMemberID)
	wantCode(t, "b heartbeats after leaving", h.shareHB("sg", "b", 3, nil).ErrorCode, unknownMemberID)

	// a goes silent: fenced one session timeout (45 s) after its last
	// heartbeat, not before.
	h.advance(44 * time.Second)
	if n := h.groupShareMembers("sg"); n != 1 {
		t.Fatalf("a fenced early: %d members", n)
	}
	h.advance(time.Second + time.Millisecond)
	if n := h.groupShareMembers("sg"); n != 0 {
		t.Fatalf("a not fenced after its session: %d members", n)
	}
	h.drainWrites()
	d := h.describeShare("sg")
	if d.ErrorCode != 0 || d.GroupState != "Empty" || len(d.Members) != 0 {
		t.Fatalf("described after expiry: %+v", d)
	}
	wantCode(t, "fenced member heartbeats", h.shareHB("sg", "a", resp.MemberEpoch, nil).ErrorCode, unknownMemberID)
}

func (h *harness) groupShareMembers(id string) int {
	n := -1
	h.withShareGroup(id, func(g *shareGroup) {
		if g != nil {
			n = len(g.members)
		}
	})
	return n
}

func (h *harness) describeShare(id string) kmsg.ShareGroupDescribeResponseGroup {
	req := kmsg.NewPtrShareGroupDescribeRequest()
	req.Version = 1
	req.GroupIDs = []string{id}
	req.IncludeAuthorizedOperations = true
	return h.c.ShareGroupDescribe(clientCtx("admin"), req).Groups[0]
}

// Kafka's throwIfShareGroupMemberEpochIsInvalid: a greater epoch, or a
// smaller one that is not the previous epoch, is fenced, even on a join.
func TestShareGroupMemberEpochChecks(t *testing.T) {
	h, _ := newShareHarness(t)
	h.shareOK("sg", "a", 0, []string{"foo"})
	h.waitInitialized("sg", "[foo:[0 1 2]]")
	// The join's answer was lost: joining again at 0 (a's previous
	// epoch) is accepted.
	if resp := h.shareOK("sg", "a", 0, []string{"foo"}); resp.MemberEpoch != 2 {
		t.Fatalf("rejoin at the previous epoch: epoch %d", resp.MemberEpoch)
	}
	// Now at 2 (previous 1).
	resp := h.shareHB("sg", "a", 3, nil)
	wantCode(t, "greater epoch", resp.ErrorCode, fencedMemberEpoch)
	if !strings.Contains(deref(resp.ErrorMessage), "greater member epoch (3)") {
		t.Fatalf("message %q", deref(resp.ErrorMessage))
	}
	wantCode(t, "previous epoch", h.shareHB("sg", "a", 1, nil).ErrorCode, 0)
	wantCode(t, "older epoch", h.shareHB("sg", "a", 0, []string{"foo"}).ErrorCode, fencedMemberEpoch)
	wantCode(t, "unknown member", h.shareHB("sg", "z", 2, nil).ErrorCode, unknownMemberID)
	wantCode(t, "unknown group", h.shareHB("nosuch", "z", 2, nil).ErrorCode, groupIDNotFound)
}

func TestShareGroupMaxSize(t *testing.T) {
	h, _ := newShareHarness(t, func(c *Config) { c.Share.MaxGroupSize = 2 })
	h.shareOK("sg", "a", 0, []string{"foo"})
	h.shareOK("sg", "b", 0, []string{"foo"})
	resp := h.shareHB("sg", "c", 0, []string{"foo"})
	wantCode(t, "third member", resp.ErrorCode, groupMaxSizeReached)
	if deref(resp.ErrorMessage) != "The share group has reached its maximum capacity of 2 members." {
		t.Fatalf("message %q", deref(resp.ErrorMessage))
	}
	wantCode(t, "a member of the full group", h.shareHB("sg", "a", 1, nil).ErrorCode, 0)
}

func TestShareGroupHeartbeatValidation(t *testing.T) {
	h, _ := newShareHarness(t)
	rack := "  "
	for _, c := range []struct {
		name  string
		req   func(*kmsg.ShareGroupHeartbeatRequest)
		code  int16
		msgIs string
	}{
		{"no member id", func(r *kmsg.ShareGroupHeartbeatRequest) { r.MemberID = "" }, invalidRequest, "MemberId can't be empty."},
		{"no group id", func(r *kmsg.ShareGroupHeartbeatRequest) { r.GroupID = " " }, invalidRequest, "GroupId can't be empty."},
		{"blank rack", func(r *kmsg.ShareGroupHeartbeatRequest) { r.RackID = &rack }, invalidRequest, "RackId can't be empty."},
		{"join without topics", func(r *kmsg.ShareGroupHeartbeatRequest) { r.SubscribedTopicNames = []string{} }, invalidRequest, "SubscribedTopicNames must be set in first request."},
		{"epoch -2", func(r *kmsg.ShareGroupHeartbeatRequest) { r.MemberEpoch = -2 }, invalidRequest, "MemberEpoch is invalid."},
	} {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.Version = 1
		req.GroupID, req.MemberID, req.SubscribedTopicNames = "sg", "m", []string{"foo"}
		c.req(req)
		resp := h.c.ShareGroupHeartbeat(clientCtx("c"), req)
		wantCode(t, c.name, resp.ErrorCode, c.code)
		if deref(resp.ErrorMessage) != c.msgIs {
			t.Fatalf("%s: message %q, want %q", c.name, deref(resp.ErrorMessage), c.msgIs)
		}
	}
	if n := h.groupShareMembers("sg"); n != -1 {
		t.Fatalf("an invalid request created the group")
	}

	// Without a persister share groups are not served.
	plain := newHarness(t)
	wantCode(t, "no persister", plain.shareHB("sg", "m", 0, []string{"foo"}).ErrorCode, unsupportedVersion)
}

// A subscription change bumps the epoch and filters the assignment to the
// topics subscribed now; a topic never assigned is initialized first.
func TestShareGroupSubscriptionChange(t *testing.T) {
	h, fp := newShareHarness(t)
	h.shareOK("sg", "a", 0, []string{"bar", "foo"})
	h.waitInitialized("sg", "[bar:[0 1] foo:[0 1 2]]")
	resp := h.shareOK("sg", "a", 1, nil)
	if h.named(respAssignment(resp)) != "[bar:[0 1] foo:[0 1 2]]" {
		t.Fatalf("both topics: %s", h.named(respAssignment(resp)))
	}
	resp = h.shareOK("sg", "a", resp.MemberEpoch, []string{"bar"})
	if resp.MemberEpoch != 3 || h.named(respAssignment(resp)) != "[bar:[0 1]]" {
		t.Fatalf("bar only: epoch %d %s", resp.MemberEpoch, h.named(respAssignment(resp)))
	}
	if n := len(fp.initCalls()); n != 1 {
		t.Fatalf("%d initialize calls after unsubscribing, want 1", n)
	}
	// A topic created later and subscribed: initialized, then assigned.
	h.changeImage(func(img *raftmeta.Image) { addTopic(img, "baz", 2, 1) })
	resp = h.shareOK("sg", "a", resp.MemberEpoch, []string{"bar", "baz"})
	h.waitInitialized("sg", "[bar:[0 1] baz:[0 1] foo:[0 1 2]]")
	resp = h.shareOK("sg", "a", resp.MemberEpoch, nil)
	if h.named(respAssignment(resp)) != "[bar:[0 1] baz:[0 1]]" {
		t.Fatalf("bar and baz: %s", h.named(respAssignment(resp)))
	}
}

// A failed initialization leaves the partitions uninitialized: the next
// heartbeat asks again. One that does not answer is asked again once
// group.share.initialize.retry.interval.ms passed, not before.
func TestShareGroupInitializeFailureAndRetry(t *testing.T) {
	h, fp := newShareHarness(t, func(c *Config) { c.Share.InitializeRetryInterval = 10 * time.Second })
	fp.initErr = []error{kerr.CoordinatorNotAvailable}
	h.shareOK("sg", "a", 0, []string{"bar"})
	h.eventually("the failed initialization undone", func() bool {
		undone := false
		h.withShareGroup("sg", func(g *shareGroup) {
			undone = g != nil && g.partitions.exists && len(g.partitions.initializing) == 0 && len(g.partitions.initialized) == 0
		})
		return undone
	})
	resp := h.shareOK("sg", "a", 1, nil)
	h.waitInitialized("sg", "[bar:[0 1]]")
	if n := len(fp.initCalls()); n != 2 {
		t.Fatalf("%d initialize calls, want the failed one and its retry", n)
	}
	resp = h.shareOK("sg", "a", resp.MemberEpoch, nil)
	if h.named(respAssignment(resp)) != "[bar:[0 1]]" {
		t.Fatalf("after the retry: %s", h.named(respAssignment(resp)))
	}

	gate := make(chan struct{})
	fp.mu.Lock()
	fp.initGate = gate
	fp.mu.Unlock()
	e := h.shareOK("other", "x", 0, []string{"foo"}).MemberEpoch
	h.advance(9 * time.Second)
	e = h.shareOK("other", "x", e, nil).MemberEpoch
	h.advance(2 * time.Second)
	h.shareOK("other", "x", e, nil)
	close(gate)
	h.waitInitialized("other", "[foo:[0 1 2]]")
	// Both calls were waiting at the gate; the second may record itself
	// after the first's answer initialized the group.
	others := func() int {
		n := 0
		for _, c := range fp.initCalls() {
			if c.group == "other" {
				n++
			}
		}
		return n
	}
	h.eventually("the retry's call recorded", func() bool { return others() >= 2 })
	if n := others(); n != 2 {
		t.Fatalf("%d initialize calls for the unanswered group, want the first and one retry after the interval", n)
	}
}

// A group id of one type is not another's (Kafka answers each protocol
// as for a missing group or a group of another type).
func TestShareGroupIDClashesWithOtherGroupTypes(t *testing.T) {
	h, _ := newShareHarness(t)
	// A classic group (here a simple one, holding offsets) is not a share group.
	h.commit(9, "classic", "", -1, map[string]map[int32]int64{"foo": {0: 1}})
	resp := h.shareHB("classic", "m", 0, []string{"foo"})
	wantCode(t, "share heartbeat to a classic group", resp.ErrorCode, groupIDNotFound)
	if deref(resp.ErrorMessage) != "Group classic is not a share group." {
		t.Fatalf("message %q", deref(resp.ErrorMessage))
	}
	wantCode(t, "describe a classic group as a share group", h.describeShare("classic").ErrorCode, groupIDNotFound)

	h.shareOK("sg", "m", 0, []string{"foo"})
	cg := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cg.Version = 1
	cg.Group, cg.MemberID, cg.RebalanceTimeoutMillis = "sg", "c1", 30000
	cg.SubscribedTopicNames, cg.Topics = []string{"foo"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	cgResp := h.c.ConsumerGroupHeartbeat(clientCtx("c"), cg)
	wantCode(t, "consumer heartbeat to a share group", cgResp.ErrorCode, groupIDNotFound)
	if deref(cgResp.ErrorMessage) != "Group sg is not a consumer group." {
		t.Fatalf("message %q", deref(cgResp.ErrorMessage))
	}
	cd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cd.Groups = []string{"sg"}
	wantCode(t, "ConsumerGroupDescribe of a share group", h.c.ConsumerGroupDescribe(clientCtx("c"), cd).Groups[0].ErrorCode, groupIDNotFound)

	join := h.newMember("sg", "classic-client").join()
	wantCode(t, "JoinGroup to a share group", join.ErrorCode, inconsistentGroupProtocol)
	if join.MemberID != "" {
		t.Fatalf("JoinGroup answer has member id %q", join.MemberID)
	}
	m := h.newMember("sg", "classic-client")
	m.id, m.generation = "x", 1
	wantCode(t, "Heartbeat to a share group", m.heartbeat(), unknownMemberID)
	wantCode(t, "SyncGroup to a share group", m.sync(nil).ErrorCode, unknownMemberID)
	codes := commitCodes(h.commit(9, "sg", "", -1, map[string]map[int32]int64{"foo": {0: 1}}))
	wantCode(t, "OffsetCommit to a share group", codes["foo/0"], groupIDNotFound)
	wantCode(t, "TxnOffsetCommit to a share group", h.txnProducer("sg", 7).commit(map[string]map[int32]int64{"foo": {0: 1}})["foo/0"], groupIDNotFound)
	if _, code := h.fetchAll("sg"); code != groupIDNotFound {
		t.Fatalf("OffsetFetch of a share group: %s", errName(code))
	}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "sg"
	od.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "foo", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	wantCode(t, "OffsetDelete of a share group", h.c.OffsetDelete(clientCtx("c"), od).ErrorCode, groupIDNotFound)
	if d := h.describe("sg"); d.ErrorCode != 0 || d.State != "Dead" {
		t.Fatalf("DescribeGroups v5 of a share group: %+v", d)
	}
	if n := h.groupShareMembers("sg"); n != 1 {
		t.Fatalf("the share group changed: %d members", n)
	}
}

func TestShareGroupDescribe(t *testing.T) {
	h, _ := newShareHarness(t)
	rack := "r1"
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version = 1
	req.GroupID, req.MemberID, req.RackID, req.SubscribedTopicNames = "sg", "b", &rack, []string{"foo", "bar", "foo"}
	wantCode(t, "join", h.c.ShareGroupHeartbeat(clientCtx("cli-b"), req).ErrorCode, 0)
	h.waitInitialized("sg", "[bar:[0 1] foo:[0 1 2]]")
	h.shareOK("sg", "b", 1, nil)
	h.shareOK("sg", "a", 0, []string{"foo"})

	d := h.describeShare("sg")
	if d.ErrorCode != 0 || d.GroupState != "Stable" || d.GroupEpoch != 3 || d.AssignmentEpoch != 3 || d.Assignor != "simple" ||
		d.AuthorizedOperations != groupAuthorizedOperations || len(d.Members) != 2 {
		t.Fatalf("described: %+v", d)
	}
	a, b := d.Members[0], d.Members[1]
	if a.MemberID != "a" || a.MemberEpoch != 3 || a.RackID != nil || a.ClientID != "share-client" || a.ClientHost != "/192.0.2.7" ||
		strings.Join(a.SubscribedTopicNames, ",") != "foo" {
		t.Fatalf("member a: %+v", a)
	}
	// b's client id is its last heartbeat's; its rack stays.
	if b.MemberID != "b" || b.MemberEpoch != 2 || deref(b.RackID) != "r1" || b.ClientID != "share-client" ||
		strings.Join(b.SubscribedTopicNames, ",") != "bar,foo" || len(b.Assignment.TopicPartitions) != 2 {
		t.Fatalf("member b: %+v", b)
	}
	for _, tp := range b.Assignment.TopicPartitions {
		if tp.Topic == "" || tp.TopicID != h.topicIDOf(tp.Topic) {
			t.Fatalf("b's assignment topic %+v", tp)
		}
	}
	d = h.describeShare("nosuch")
	if d.ErrorCode != groupIDNotFound || deref(d.ErrorMessage) != "Share group nosuch not found." || d.AuthorizedOperations != -2147483648 {
		t.Fatalf("missing group: %+v", d)
	}
	wantCode(t, "empty id", h.describeShare("").ErrorCode, invalidGroupID)
}

func TestListGroupsShareType(t *testing.T) {
	h, _ := newShareHarness(t)
	h.shareOK("stable", "m", 0, []string{"foo"})
	h.shareOK("empty", "m", 0, []string{"foo"})
	h.shareOK("empty", "m", -1, nil)
	h.commit(9, "classic", "", -1, map[string]map[int32]int64{"foo": {0: 1}})
	list := func(types, states []string) string {
		req := kmsg.NewPtrListGroupsRequest()
		req.Version = 5
		req.TypesFilter, req.StatesFilter = types, states
		resp := h.c.ListGroups(clientCtx("admin"), req)
		var out []string
		for _, g := range resp.Groups {
			out = append(out, g.Group+"/"+g.GroupType+"/"+g.ProtocolType+"/"+g.GroupState)
		}
		return strings.Join(out, " ")
	}
	if got := list(nil, nil); got != "classic/classic//Empty empty/share/share/Empty stable/share/share/Stable" {
		t.Fatalf("all groups: %s", got)
	}
	if got := list([]string{"Share"}, nil); got != "empty/share/share/Empty stable/share/share/Stable" {
		t.Fatalf("share groups: %s", got)
	}
	if got := list([]string{"share"}, []string{"stable"}); got != "stable/share/share/Stable" {
		t.Fatalf("stable share groups: %s", got)
	}
	if got := list([]string{"consumer"}, nil); got != "" {
		t.Fatalf("consumer groups: %s", got)
	}
}

func TestShareGroupTopicDeletedLeavesStateMetadata(t *testing.T) {
	h, _ := newShareHarness(t)
	h.shareOK("sg", "a", 0, []string{"foo", "bar"})
	h.waitInitialized("sg", "[bar:[0 1] foo:[0 1 2]]")
	gone := h.img.Load().Topics["bar"]
	h.changeImage(func(img *raftmeta.Image) {
		delete(img.Topics, "bar")
		delete(img.TopicsByID, gone.ID)
	})
	h.c.OnMetadataDelta(&raftmeta.Delta{DeletedTopics: []*raftmeta.Topic{gone}})
	h.waitInitialized("sg", "[foo:[0 1 2]]")
	resp := h.shareOK("sg", "a", 1, nil)
	if h.named(respAssignment(resp)) != "[foo:[0 1 2]]" {
		t.Fatalf("after bar's deletion: %s", h.named(respAssignment(resp)))
	}
}

// A subscribed topic that grows gets its new partitions initialized, and
// the heartbeat after that assigns them: the metadata hash changed, and
// then the initialized partitions did.
func TestShareGroupTopicGrows(t *testing.T) {
	h, fp := newShareHarness(t)
	h.shareOK("sg", "a", 0, []string{"bar"})
	h.waitInitialized("sg", "[bar:[0 1]]")
	resp := h.shareOK("sg", "a", 1, nil)
	if h.named(respAssignment(resp)) != "[bar:[0 1]]" {
		t.Fatalf("before growing: %s", h.named(respAssignment(resp)))
	}
	h.changeImage(func(img *raftmeta.Image) {
		grown := *img.Topics["bar"]
		grown.Partitions = append(slices.Clone(grown.Partitions), &raftmeta.Partition{Topic: "bar", Index: 2, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}})
		img.Topics["bar"], img.TopicsByID[grown.ID] = &grown, &grown
	})
	resp = h.shareOK("sg", "a", resp.MemberEpoch, nil)
	if resp.MemberEpoch != 3 || resp.Assignment != nil {
		t.Fatalf("heartbeat after bar grew: epoch %d assignment %v (bar-2 is not initialized yet)", resp.MemberEpoch, resp.Assignment)
	}
	h.waitInitialized("sg", "[bar:[0 1 2]]")
	if last := fp.initCalls()[len(fp.initCalls())-1]; len(last.parts) != 1 || last.parts[0].Partition != 2 || last.epoch != 3 {
		t.Fatalf("initialize call for the new partition: %+v", last)
	}
	resp = h.shareOK("sg", "a", resp.MemberEpoch, nil)
	if resp.MemberEpoch != 4 || h.named(respAssignment(resp)) != "[bar:[0 1 2]]" {
		t.Fatalf("after bar-2 was initialized: epoch %d %s", resp.MemberEpoch, h.named(respAssignment(resp)))
	}
}

func TestShareConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  ShareConfig
		want string
	}{
		{ShareConfig{HeartbeatInterval: 20 * time.Second}, "group.share.heartbeat.interval.ms (20000) must be less than or equal to group.share.max.heartbeat.interval.ms (15000)"},
		{ShareConfig{SessionTimeout: 30 * time.Second}, "group.share.session.timeout.ms (30000) must be greater than or equal to group.share.min.session.timeout.ms (45000)"},
		{ShareConfig{SessionTimeout: 6 * time.Second, MinSessionTimeout: time.Second, HeartbeatInterval: 6 * time.Second, MinHeartbeatInterval: time.Second},
			"group.share.heartbeat.interval.ms (6000) must be less than group.share.session.timeout.ms (6000)"},
		{ShareConfig{MaxGroupSize: 1001}, "group.share.max.size must be between 1 and 1000, got 1001"},
		{ShareConfig{Assignors: []string{"simple", "simple"}}, "group.share.assignors must contain exactly one assignor, but found 2"},
		{ShareConfig{Assignors: []string{"uniform"}}, `group.share.assignors: unknown assignor "uniform" (simple is served)`},
	} {
		err := Config{Log: newMemLog(), Image: raftmeta.EmptyImage, Share: c.cfg}.Validate()
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	if err := (Config{Log: newMemLog(), Image: raftmeta.EmptyImage}).Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}

// A topic deleted while no shard saw it go (its delta missed) stays in
// the initialized partitions; it must not bump the epoch at every
// heartbeat.
func TestShareGroupStaleInitializedTopicDoesNotBumpEpoch(t *testing.T) {
	h, _ := newShareHarness(t)
	h.shareOK("sg", "a", 0, []string{"foo", "bar"})
	h.waitInitialized("sg", "[bar:[0 1] foo:[0 1 2]]")
	e := h.shareOK("sg", "a", 1, nil).MemberEpoch
	gone := h.img.Load().Topics["bar"]
	h.changeImage(func(img *raftmeta.Image) {
		delete(img.Topics, "bar")
		delete(img.TopicsByID, gone.ID)
	})
	e = h.shareOK("sg", "a", e, nil).MemberEpoch // the metadata hash changed
	for range 3 {
		if resp := h.shareOK("sg", "a", e, nil); resp.MemberEpoch != e {
			t.Fatalf("epoch moved from %d to %d with nothing changed", e, resp.MemberEpoch)
		}
	}
}
