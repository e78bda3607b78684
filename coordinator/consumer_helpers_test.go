package coordinator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// cmember is a simulated KIP-848 consumer (ConsumerGroupHeartbeat v1): it
// picks its own member id, and takes an assignment the moment a response
// carries one, giving up the partitions it no longer lists and starting
// on the new ones, as a consumer whose rebalance callbacks return at once.
// owned is what it consumes; each heartbeat reports it.
type cmember struct {
	h          *harness
	group      string
	id         string
	instanceID *string
	epoch      int32
	topics     []string
	regex      *string
	assignor   *string
	rebalance  int32
	owned      assignment
	// last is the last response.
	last *kmsg.ConsumerGroupHeartbeatResponse
}

// newConsumer is a member of group subscribing to topics, with member id
// name.
func (h *harness) newConsumer(group, name string, topics ...string) *cmember {
	return &cmember{h: h, group: group, id: name, topics: topics, rebalance: 30000, owned: assignment{}}
}

func (m *cmember) static(instanceID string) *cmember {
	m.instanceID = &instanceID
	return m
}

// request is a heartbeat at epoch: a full one (subscription, rebalance
// timeout, owned partitions) when joining, otherwise one with the owned
// partitions only.
func (m *cmember) request(epoch int32) *kmsg.ConsumerGroupHeartbeatRequest {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group = m.group
	req.MemberID = m.id
	req.MemberEpoch = epoch
	req.InstanceID = m.instanceID
	req.RebalanceTimeoutMillis = -1
	if epoch == 0 {
		req.RebalanceTimeoutMillis = m.rebalance
		req.SubscribedTopicRegex = m.regex
		if m.regex == nil {
			req.SubscribedTopicNames = append([]string{}, m.topics...)
		}
		req.ServerAssignor = m.assignor
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		return req
	}
	req.Topics = ownedTopics(m.owned)
	return req
}

func ownedTopics(a assignment) []kmsg.ConsumerGroupHeartbeatRequestTopic {
	out := []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	for _, t := range a.sortedTopics() {
		out = append(out, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t, Partitions: slices.Clone(a[t])})
	}
	return out
}

// send sends req and, on success, takes the epoch and any assignment.
func (m *cmember) send(req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := m.h.c.ConsumerGroupHeartbeat(clientCtx("client-"+m.id), req)
	m.last = resp
	if resp.ErrorCode != 0 {
		return resp
	}
	if resp.MemberID != nil {
		m.id = *resp.MemberID
	}
	m.epoch = resp.MemberEpoch
	if resp.Assignment != nil {
		m.owned = assignment{}
		for _, t := range resp.Assignment.Topics {
			m.owned[t.TopicID] = append(m.owned[t.TopicID], t.Partitions...)
		}
		m.owned = normalizeAssignment(m.owned)
	}
	return resp
}

// join joins (epoch 0), failing the test on an error.
func (m *cmember) join() *kmsg.ConsumerGroupHeartbeatResponse {
	m.h.t.Helper()
	m.owned = assignment{}
	resp := m.send(m.request(0))
	wantCode(m.h.t, "join of "+m.id, resp.ErrorCode, 0)
	return resp
}

// heartbeat heartbeats at the member's epoch, failing the test on an error.
func (m *cmember) heartbeat() *kmsg.ConsumerGroupHeartbeatResponse {
	m.h.t.Helper()
	resp := m.send(m.request(m.epoch))
	wantCode(m.h.t, "heartbeat of "+m.id, resp.ErrorCode, 0)
	return resp
}

// leave leaves with epoch -1, or -2 when static.
func (m *cmember) leave(epoch int32) *kmsg.ConsumerGroupHeartbeatResponse {
	req := m.request(epoch)
	req.Topics = nil
	return m.h.c.ConsumerGroupHeartbeat(clientCtx("client-"+m.id), req)
}

// ownedSet names the member's partitions by topic name, sorted.
func (m *cmember) ownedSet() []string {
	return m.h.names(m.owned)
}

// names lists an assignment's partitions as "topic/partition", sorted.
func (h *harness) names(a assignment) []string {
	img := h.img.Load()
	var out []string
	for t, ps := range a {
		name := fmt.Sprintf("%x", t[:2])
		if topic := img.TopicsByID[raftmeta.Uuid(t)]; topic != nil {
			name = topic.Name
		}
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%s/%d", name, p))
		}
	}
	slices.Sort(out)
	return out
}

// topicIDOf is a topic's id in the harness image.
func (h *harness) topicIDOf(name string) topicID {
	return topicID(h.img.Load().Topics[name].ID)
}

// settle heartbeats every member in turn until a round changes nothing,
// checking after every heartbeat that no partition is consumed by two
// members at once: the guarantee reconciliation gives.
func (h *harness) settle(ms ...*cmember) {
	h.t.Helper()
	for round := 0; round < 20; round++ {
		changed := false
		for _, m := range ms {
			epoch, owned := m.epoch, m.ownedSet()
			m.heartbeat()
			h.checkExclusive(ms...)
			changed = changed || epoch != m.epoch || !slices.Equal(owned, m.ownedSet())
		}
		if !changed {
			return
		}
	}
	h.t.Fatalf("members did not settle in 20 rounds")
}

// checkExclusive fails if two members consume the same partition.
func (h *harness) checkExclusive(ms ...*cmember) {
	h.t.Helper()
	owner := map[string]string{}
	for _, m := range ms {
		for _, tp := range m.ownedSet() {
			if o, ok := owner[tp]; ok {
				h.t.Fatalf("%s is consumed by %s and %s at once", tp, o, m.id)
			}
			owner[tp] = m.id
		}
	}
}

// withConsumerGroup runs fn on a consumer group under its shard's lock;
// fn gets nil if there is no such consumer group.
func (h *harness) withConsumerGroup(id string, fn func(g *consumerGroup)) {
	s := h.c.shard(PartitionFor(id, testPartitions))
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.consumerGroups[id])
}

// cgState is a consumer group's state, epoch and assignment epoch.
func (h *harness) cgState(id string) (state string, epoch, assignmentEpoch int32, members int) {
	h.withConsumerGroup(id, func(g *consumerGroup) {
		if g == nil {
			state = "none"
			return
		}
		state, epoch, assignmentEpoch, members = g.state().String(), g.groupEpoch, g.assignmentEpoch, len(g.members)
	})
	return
}

// dumpConsumerGroup prints everything a consumer group holds that its
// records carry, deterministically (fmt sorts map keys), to compare a
// group with itself after a reload.
func (h *harness) dumpConsumerGroup(id string) string {
	var b strings.Builder
	h.withConsumerGroup(id, func(g *consumerGroup) {
		if g == nil {
			b.WriteString("none")
			return
		}
		fmt.Fprintf(&b, "epoch=%d hash=%d assignmentEpoch=%d state=%s\n", g.groupEpoch, g.metadataHash, g.assignmentEpoch, g.state())
		fmt.Fprintf(&b, "static=%v\ntarget=%v\npartitionEpochs=%v\n", g.staticMembers, g.target, g.partitionEpochs)
		for _, re := range sortedKeysOf(g.regexes) {
			fmt.Fprintf(&b, "regex %q=%+v\n", re, g.regexes[re])
		}
		for _, mid := range g.sortedMemberIDs() {
			fmt.Fprintf(&b, "member %+v\n", *g.members[mid])
		}
	})
	return b.String()
}

// updateImage publishes a new metadata image: a copy of the current one
// with fn applied and a higher offset.
func (h *harness) updateImage(fn func(img *raftmeta.Image)) {
	old := h.img.Load()
	img := *old
	img.Offset++
	img.Topics = maps.Clone(old.Topics)
	img.TopicsByID = maps.Clone(old.TopicsByID)
	img.Brokers = maps.Clone(old.Brokers)
	fn(&img)
	h.img.Store(&img)
}

// listGroupTypes is ListGroups v5 as "group/state/protocolType/type".
func (h *harness) listGroupTypes(types ...string) []string {
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 5
	req.TypesFilter = types
	resp := h.c.ListGroups(context.Background(), req)
	var out []string
	for _, g := range resp.Groups {
		out = append(out, fmt.Sprintf("%s/%s/%s/%s", g.Group, g.GroupState, g.ProtocolType, g.GroupType))
	}
	return out
}

// describeConsumer is ConsumerGroupDescribe v1 of one group.
func (h *harness) describeConsumer(group string) kmsg.ConsumerGroupDescribeResponseGroup {
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Version = 1
	req.Groups = []string{group}
	return h.c.ConsumerGroupDescribe(context.Background(), req).Groups[0]
}

// wantNames fails unless got lists want.
func wantNames(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}
