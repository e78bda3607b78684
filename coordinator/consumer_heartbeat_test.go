package coordinator

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// TestConsumerGroupJoinAndRevocation: the first member gets every
// partition; a second member joining bumps the group epoch, and gets the
// partitions moving to it only once the first member has revoked them,
// the first member staying at its epoch until it has.
func TestConsumerGroupJoinAndRevocation(t *testing.T) {
	h := newHarness(t)
	a := h.newConsumer("g", "a", "foo")
	resp := a.join()
	if resp.MemberEpoch != 1 || *resp.MemberID != "a" || resp.HeartbeatIntervalMillis != 5000 || resp.Assignment == nil {
		t.Fatalf("first join: %+v", resp)
	}
	wantNames(t, "a's partitions", a.ownedSet(), "foo/0", "foo/1", "foo/2")
	if st, epoch, aepoch, n := h.cgState("g"); st != "Stable" || epoch != 1 || aepoch != 1 || n != 1 {
		t.Fatalf("after the first join: %s epoch %d assignment epoch %d members %d", st, epoch, aepoch, n)
	}
	// A heartbeat with nothing new keeps the member where it is and
	// leaves the assignment out.
	if resp := a.heartbeat(); resp.MemberEpoch != 1 || resp.Assignment != nil {
		t.Fatalf("idle heartbeat: %+v", resp)
	}

	b := h.newConsumer("g", "b", "foo")
	b.join()
	h.checkExclusive(a, b)
	if st, epoch, aepoch, _ := h.cgState("g"); st != "Reconciling" || epoch != 2 || aepoch != 2 {
		t.Fatalf("after the second join: %s epoch %d assignment epoch %d", st, epoch, aepoch)
	}
	if b.epoch != 2 || len(b.owned) != 0 {
		t.Fatalf("b joined at epoch %d owning %v while a still owns every partition", b.epoch, b.ownedSet())
	}
	var targetA, targetB []string
	h.withConsumerGroup("g", func(g *consumerGroup) {
		targetA, targetB = h.names(g.target["a"]), h.names(g.target["b"])
		if g.member("b").state != memberUnreleasedPartitions {
			t.Fatalf("b's state %s", g.member("b").state)
		}
	})
	if len(targetA) == 0 || len(targetB) == 0 || len(targetA)+len(targetB) != 3 {
		t.Fatalf("target assignment a %v b %v", targetA, targetB)
	}

	// a learns what to give up: it stays at epoch 1 while it revokes.
	if resp := a.heartbeat(); resp.MemberEpoch != 1 || resp.Assignment == nil {
		t.Fatalf("a's heartbeat with partitions to revoke: %+v", resp)
	}
	wantNames(t, "a after the revocation request", a.ownedSet(), targetA...)
	h.withConsumerGroup("g", func(g *consumerGroup) {
		m := g.member("a")
		if m.state != memberUnrevokedPartitions || m.memberEpoch != 1 || !slices.Equal(h.names(m.pendingRevocation), targetB) {
			t.Fatalf("a: state %s epoch %d pending %v", m.state, m.memberEpoch, h.names(m.pendingRevocation))
		}
	})
	// b still cannot have them: a has not said it let them go.
	if resp := b.heartbeat(); resp.MemberEpoch != 2 || len(b.owned) != 0 {
		t.Fatalf("b got partitions a had not released: %+v %v", resp, b.ownedSet())
	}
	// a reports it no longer owns them: it moves to epoch 2.
	if resp := a.heartbeat(); resp.MemberEpoch != 2 {
		t.Fatalf("a after revoking: %+v", resp)
	}
	b.heartbeat()
	wantNames(t, "b after a released", b.ownedSet(), targetB...)
	h.settle(a, b)
	if st, epoch, _, _ := h.cgState("g"); st != "Stable" || epoch != 2 || a.epoch != 2 || b.epoch != 2 {
		t.Fatalf("settled: %s epoch %d, a at %d, b at %d", st, epoch, a.epoch, b.epoch)
	}

	d := h.describeConsumer("g")
	if d.ErrorCode != 0 || d.State != "Stable" || d.Epoch != 2 || d.AssignmentEpoch != 2 || d.AssignorName != "uniform" || len(d.Members) != 2 {
		t.Fatalf("describe: %+v", d)
	}
	for _, dm := range d.Members {
		if dm.MemberEpoch != 2 || dm.ClientID != "client-"+dm.MemberID || dm.ClientHost != "/192.0.2.7" || dm.MemberType != 1 ||
			!slices.Equal(dm.SubscribedTopics, []string{"foo"}) || len(dm.Assignment.TopicPartitions) != 1 ||
			dm.Assignment.TopicPartitions[0].Topic != "foo" {
			t.Fatalf("described member: %+v", dm)
		}
	}
}

// TestConsumerGroupMemberEpochChecks: a heartbeat must carry the member's
// epoch, or its previous one with partitions it is still assigned (the
// response that moved it was lost): FENCED_MEMBER_EPOCH otherwise; and
// the requests Kafka refuses as malformed are refused.
func TestConsumerGroupMemberEpochChecks(t *testing.T) {
	h := newHarness(t)
	a, b, c := h.newConsumer("g", "a", "foo"), h.newConsumer("g", "b", "foo"), h.newConsumer("g", "c", "foo")
	a.join()
	b.join()
	h.settle(a, b)
	c.join()
	h.settle(a, b, c)
	h.withConsumerGroup("g", func(g *consumerGroup) {
		if m := g.member("a"); m.memberEpoch != 3 || m.previousMemberEpoch != 2 {
			t.Fatalf("a at epoch %d, previously %d", m.memberEpoch, m.previousMemberEpoch)
		}
	})
	hb := func(epoch int32, owned assignment) int16 {
		req := a.request(epoch)
		req.Topics = ownedTopics(owned)
		return h.c.ConsumerGroupHeartbeat(clientCtx("x"), req).ErrorCode
	}
	wantCode(t, "a newer epoch", hb(4, a.owned), fencedMemberEpoch)
	wantCode(t, "the previous epoch owning assigned partitions", hb(2, a.owned), 0)
	wantCode(t, "the previous epoch owning nothing", hb(2, assignment{}), 0)
	wantCode(t, "the previous epoch owning another member's partition", hb(2, b.owned), fencedMemberEpoch)
	wantCode(t, "the previous epoch without owned partitions", func() int16 {
		req := a.request(2)
		req.Topics = nil
		return h.c.ConsumerGroupHeartbeat(clientCtx("x"), req).ErrorCode
	}(), fencedMemberEpoch)
	wantCode(t, "an epoch older than the previous", hb(1, a.owned), fencedMemberEpoch)
	// Kafka fences a member that rejoins under its id past its first epoch.
	req := a.request(0)
	wantCode(t, "a rejoin of a member at epoch 3", h.c.ConsumerGroupHeartbeat(clientCtx("x"), req).ErrorCode, fencedMemberEpoch)

	unknown := h.newConsumer("g", "nobody", "foo")
	wantCode(t, "an unknown member", unknown.send(unknown.request(4)).ErrorCode, unknownMemberID)
	wantCode(t, "an unknown member leaving", unknown.leave(-1).ErrorCode, unknownMemberID)
	ghost := h.newConsumer("nogroup", "x", "foo")
	wantCode(t, "an unknown group", ghost.send(ghost.request(3)).ErrorCode, groupIDNotFound)

	bad := []struct {
		what string
		mod  func(*kmsg.ConsumerGroupHeartbeatRequest)
		code int16
		msg  string
	}{
		{"no group", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Group = " " }, invalidRequest, "GroupId can't be empty."},
		{"no member id in v1", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID = "" }, invalidRequest, "MemberId can't be empty."},
		{"empty instance id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.InstanceID = kmsg.StringPtr("") }, invalidRequest, "InstanceId can't be empty."},
		{"no rebalance timeout", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RebalanceTimeoutMillis = -1 }, invalidRequest, "RebalanceTimeoutMs must be provided in first request."},
		{"owned partitions on join", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = ownedTopics(a.owned) }, invalidRequest, "TopicPartitions must be empty when (re-)joining."},
		{"no subscription", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = nil }, invalidRequest, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."},
		{"epoch -3", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -3 }, invalidRequest, "MemberEpoch is -3, but must be greater than or equal to -2."},
		{"unknown assignor", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = kmsg.StringPtr("sticky") }, unsupportedAssignor, "ServerAssignor sticky is not supported. Supported assignors: uniform, range."},
		{"bad regex", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.SubscribedTopicNames, r.SubscribedTopicRegex = nil, kmsg.StringPtr("(")
		}, invalidRegularExpression, "SubscribedTopicRegex `(` is not a valid regular expression"},
	}
	for _, tc := range bad {
		req := h.newConsumer("g2", "z", "foo").request(0)
		tc.mod(req)
		resp := h.c.ConsumerGroupHeartbeat(clientCtx("x"), req)
		if resp.ErrorCode != tc.code || resp.ErrorMessage == nil || !strings.HasPrefix(*resp.ErrorMessage, tc.msg) {
			t.Errorf("%s: got %s %v, want %s %q", tc.what, errName(resp.ErrorCode), resp.ErrorMessage, errName(tc.code), tc.msg)
		}
	}
	if st, _, _, _ := h.cgState("g2"); st != "none" {
		t.Fatalf("refused joins created group g2: %s", st)
	}

	// v0 lets the coordinator pick the member id.
	req = h.newConsumer("g3", "", "foo").request(0)
	req.Version = 0
	resp := h.c.ConsumerGroupHeartbeat(clientCtx("x"), req)
	if resp.ErrorCode != 0 || resp.MemberID == nil || len(*resp.MemberID) != 22 || resp.MemberEpoch != 1 {
		t.Fatalf("v0 join without a member id: %+v", resp)
	}
}

// TestConsumerGroupLeaveAndSessionExpiry: a member leaving (epoch -1) or
// silent past group.consumer.session.timeout.ms is removed and the group
// epoch bumped, so the others take its partitions.
func TestConsumerGroupLeaveAndSessionExpiry(t *testing.T) {
	h := newHarness(t)
	a, b := h.newConsumer("g", "a", "foo"), h.newConsumer("g", "b", "foo")
	a.join()
	b.join()
	h.settle(a, b)
	_, before, _, _ := h.cgState("g")

	resp := a.leave(-1)
	if resp.ErrorCode != 0 || resp.MemberEpoch != -1 || *resp.MemberID != "a" {
		t.Fatalf("leave: %+v", resp)
	}
	if st, epoch, _, n := h.cgState("g"); n != 1 || epoch != before+1 || st != "Assigning" {
		t.Fatalf("after a left: %s epoch %d members %d", st, epoch, n)
	}
	wantCode(t, "leaving twice", a.leave(-1).ErrorCode, unknownMemberID)
	wantCode(t, "heartbeat after leaving", a.send(a.request(a.epoch)).ErrorCode, unknownMemberID)
	h.settle(b)
	wantNames(t, "b after a left", b.ownedSet(), "foo/0", "foo/1", "foo/2")

	c := h.newConsumer("g", "c", "foo")
	c.join()
	h.settle(b, c)
	_, before, _, _ = h.cgState("g")
	// c goes silent; b keeps heartbeating.
	h.advance(30 * time.Second)
	b.heartbeat()
	h.advance(15*time.Second + time.Millisecond)
	h.drainWrites()
	if st, epoch, _, n := h.cgState("g"); n != 1 || epoch != before+1 {
		t.Fatalf("after c's session expired: %s epoch %d members %d", st, epoch, n)
	}
	wantCode(t, "c after its session expired", c.send(c.request(c.epoch)).ErrorCode, unknownMemberID)
	h.settle(b)
	wantNames(t, "b after c expired", b.ownedSet(), "foo/0", "foo/1", "foo/2")

	// The last member leaving leaves an empty group, which stays.
	b.leave(-1)
	if st, _, _, n := h.cgState("g"); st != "Empty" || n != 0 {
		t.Fatalf("after everyone left: %s, %d members", st, n)
	}
}

// TestConsumerGroupRebalanceTimeout: a member that does not revoke its
// partitions within its rebalance timeout is fenced.
func TestConsumerGroupRebalanceTimeout(t *testing.T) {
	h := newHarness(t)
	a := h.newConsumer("g", "a", "foo")
	a.rebalance = 5000
	a.join()
	b := h.newConsumer("g", "b", "foo")
	b.join()
	a.heartbeat() // told to revoke; it never confirms
	h.withConsumerGroup("g", func(g *consumerGroup) {
		if g.member("a").state != memberUnrevokedPartitions {
			t.Fatalf("a: %s", g.member("a").state)
		}
	})
	h.advance(4 * time.Second)
	b.heartbeat()
	if _, _, _, n := h.cgState("g"); n != 2 {
		t.Fatalf("a fenced before its rebalance timeout")
	}
	h.advance(time.Second + time.Millisecond)
	h.drainWrites()
	if _, _, _, n := h.cgState("g"); n != 1 {
		t.Fatalf("a not fenced after its rebalance timeout: %d members", n)
	}
	h.settle(b)
	wantNames(t, "b", b.ownedSet(), "foo/0", "foo/1", "foo/2")
}

// TestConsumerGroupStaticMembers: a static member leaving with epoch -2
// keeps its partitions reserved; a new member id with its instance id
// takes them over without a rebalance; while its holder is active the
// instance id answers UNRELEASED_INSTANCE_ID, and the replaced member id
// FENCED_INSTANCE_ID.
func TestConsumerGroupStaticMembers(t *testing.T) {
	h := newHarness(t)
	s1 := h.newConsumer("g", "s1", "foo").static("i")
	b := h.newConsumer("g", "b", "foo")
	s1.join()
	b.join()
	h.settle(s1, b)
	_, epoch, _, _ := h.cgState("g")
	held := s1.ownedSet()

	s2 := h.newConsumer("g", "s2", "foo").static("i")
	resp := s2.send(s2.request(0))
	if resp.ErrorCode != unreleasedInstanceID || !strings.Contains(*resp.ErrorMessage, "instance id i cannot join the group because the instance id is owned by s1") {
		t.Fatalf("a second holder of instance id i: %s %v", errName(resp.ErrorCode), resp.ErrorMessage)
	}

	resp = s1.leave(-2)
	if resp.ErrorCode != 0 || resp.MemberEpoch != -2 {
		t.Fatalf("static leave: %+v", resp)
	}
	if _, e, _, n := h.cgState("g"); e != epoch || n != 2 {
		t.Fatalf("a static member's temporary leave rebalanced: epoch %d->%d, %d members", epoch, e, n)
	}
	h.settle(b)
	for _, tp := range b.ownedSet() {
		if slices.Contains(held, tp) {
			t.Fatalf("b took %s, reserved for instance i", tp)
		}
	}

	s2.join()
	if s2.epoch != epoch {
		t.Fatalf("the replacement joined at epoch %d, want %d", s2.epoch, epoch)
	}
	wantNames(t, "the replacement's partitions", s2.ownedSet(), held...)
	if _, e, _, n := h.cgState("g"); e != epoch || n != 2 {
		t.Fatalf("the replacement rebalanced the group: epoch %d, %d members", e, n)
	}
	resp = s1.send(s1.request(s1.epoch))
	if resp.ErrorCode != fencedInstanceID {
		t.Fatalf("the replaced member: %s", errName(resp.ErrorCode))
	}
	h.settle(s2, b)

	// A static member gone for good (-2, then silent) is removed at its
	// session timeout.
	s2.leave(-2)
	h.advance(30 * time.Second)
	b.heartbeat()
	h.advance(15*time.Second + time.Millisecond)
	h.drainWrites()
	if _, e, _, n := h.cgState("g"); n != 1 || e != epoch+1 {
		t.Fatalf("after the static member's session expired: epoch %d, %d members", e, n)
	}
	h.withConsumerGroup("g", func(g *consumerGroup) {
		if len(g.staticMembers) != 0 {
			t.Fatalf("static members left: %v", g.staticMembers)
		}
	})
	h.settle(b)
	wantNames(t, "b", b.ownedSet(), "foo/0", "foo/1", "foo/2")
}

// TestConsumerGroupRegexSubscription: a regex (RE2, whole topic names) is
// resolved when a member first subscribes to it, and again once topics
// appear and the refresh interval passed; its record goes with its last
// subscriber.
func TestConsumerGroupRegexSubscription(t *testing.T) {
	h := newHarness(t)
	m := h.newConsumer("g", "m")
	m.regex = kmsg.StringPtr("fo.*")
	m.join()
	wantNames(t, "partitions of fo.*", m.ownedSet(), "foo/0", "foo/1", "foo/2")
	h.withConsumerGroup("g", func(g *consumerGroup) {
		if r := g.regexes["fo.*"]; !slices.Equal(r.topics, []string{"foo"}) {
			t.Fatalf("resolved regex: %+v", g.regexes)
		}
	})
	d := h.describeConsumer("g")
	if *d.Members[0].SubscribedTopicRegex != "fo.*" || len(d.Members[0].SubscribedTopics) != 0 {
		t.Fatalf("described member: %+v", d.Members[0])
	}

	h.updateImage(func(img *raftmeta.Image) {
		addTopic(img, "food", 2, 1)
		addTopic(img, "xfoo", 1, 1)
	})
	m.heartbeat()
	if len(m.owned) != 1 {
		t.Fatalf("the regex was resolved again within its minimum interval: %v", m.ownedSet())
	}
	h.advance(10*time.Second + time.Millisecond)
	m.heartbeat()
	h.settle(m)
	wantNames(t, "partitions of fo.* with food", m.ownedSet(), "foo/0", "foo/1", "foo/2", "food/0", "food/1")

	// A second subscriber of the same regex shares it.
	n := h.newConsumer("g", "n")
	n.regex = kmsg.StringPtr("fo.*")
	n.join()
	h.settle(m, n)
	if len(m.ownedSet()) == 0 || len(n.ownedSet()) == 0 || len(m.ownedSet())+len(n.ownedSet()) != 5 {
		t.Fatalf("m %v n %v", m.ownedSet(), n.ownedSet())
	}
	m.leave(-1)
	h.withConsumerGroup("g", func(g *consumerGroup) {
		if _, ok := g.regexes["fo.*"]; !ok {
			t.Fatalf("the regex went while n still subscribes to it")
		}
	})
	n.leave(-1)
	h.withConsumerGroup("g", func(g *consumerGroup) {
		if len(g.regexes) != 0 {
			t.Fatalf("regexes after their last subscriber left: %v", g.regexes)
		}
	})
}

// TestConsumerGroupMaxSize: group.consumer.max.size turns new members
// away with GROUP_MAX_SIZE_REACHED; members already in carry on.
func TestConsumerGroupMaxSize(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.ConsumerMaxGroupSize = 2 })
	a, b := h.newConsumer("g", "a", "foo"), h.newConsumer("g", "b", "foo")
	a.join()
	b.join()
	c := h.newConsumer("g", "c", "foo")
	resp := c.send(c.request(0))
	if resp.ErrorCode != groupMaxSizeReached || *resp.ErrorMessage != "The consumer group has reached its maximum capacity of 2 members." {
		t.Fatalf("a third member: %s %v", errName(resp.ErrorCode), resp.ErrorMessage)
	}
	h.settle(a, b)
	a.leave(-1)
	c.join()
	h.settle(b, c)
}
