package coordinator

import (
	"slices"

	"github.com/strait-io/strait/coordinator/assignor"
	"github.com/strait-io/strait/raftmeta"
)

// updateShareTargetAssignment computes the group's target assignment for
// groupEpoch with the simple assignor (coordinator/assignor) over the members (updated replacing
// its old self), assigning only the partitions whose share state is
// initialized, and returns updated's target; the changed targets and the
// new assignment epoch are added to recs
// (GroupMetadataManager.updateTargetAssignment for share groups,
// TargetAssignmentBuilder.ShareTargetAssignmentBuilder).
func (s *shard) updateShareTargetAssignment(g *shareGroup, groupEpoch int32, updated *shareMember, typ assignor.SubscriptionType,
	img *raftmeta.Image, recs *[]shareRecord) (assignment, *cgError) {
	members := make(map[string]*shareMember, len(g.members)+1)
	for id, m := range g.members {
		members[id] = m
	}
	members[updated.id] = updated
	spec := assignor.GroupSpec{Members: make(map[string]assignor.Member, len(members)), Type: typ}
	for id, m := range members {
		ids := subscribedShareTopicIDs(m, img)
		topics := make([]topicID, 0, len(ids))
		for t := range ids {
			topics = append(topics, t)
		}
		slices.SortFunc(topics, compareTopicIDs)
		spec.Members[id] = assignor.Member{RackID: m.rackID, Topics: topics, Assignment: assignor.Partitions(g.target[id])}
	}
	describer := initializedDescriber{imageDescriber{img}, g.partitions.initializedAssignment()}
	result, err := assignor.Simple().Assign(spec, describer)
	if err != nil {
		s.log.Error("computing a share group's target assignment failed", "group", g.id, "epoch", groupEpoch, "err", err)
		return nil, cgErrorf(unknownServerError, "Failed to compute a new target assignment for epoch %d: %v", groupEpoch, err)
	}
	targetOf := func(id string) assignment { return normalizeAssignment(assignment(result[id])) }
	for _, id := range sortedKeysOf(members) {
		next := targetOf(id)
		if old, ok := g.target[id]; !ok || !equalAssignments(old, next) {
			*recs = append(*recs, newShareTargetAssignmentRecord(g.id, id, next))
		}
	}
	*recs = append(*recs, newShareTargetAssignmentEpochRecord(g.id, groupEpoch))
	s.log.Info("computed a new share group target assignment", "group", g.id, "epoch", groupEpoch, "members", len(members))
	return targetOf(updated.id), nil
}

// subscribedShareTopicIDs are the ids of the existing topics a member
// subscribes to.
func subscribedShareTopicIDs(m *shareMember, img *raftmeta.Image) map[topicID]bool {
	out := map[topicID]bool{}
	for _, name := range m.subscribedTopicNames {
		if t := img.Topics[name]; t != nil {
			out[topicID(t.ID)] = true
		}
	}
	return out
}

// reconcileShareMember is ShareGroupAssignmentBuilder: a member moves to
// a new target epoch at once with its target assignment, kept to the
// topics it subscribes to; a changed subscription filters the target
// again. Share groups revoke nothing: records are shared, not owned.
func reconcileShareMember(m shareMember, targetEpoch int32, target assignment, subscriptionChanged bool, img *raftmeta.Image) shareMember {
	if !subscriptionChanged && m.isReconciledTo(targetEpoch) {
		return m
	}
	subscribed := subscribedShareTopicIDs(&m, img)
	keep := func(t topicID, _ int32) bool { return subscribed[t] }
	next := m
	switch {
	case targetEpoch != m.memberEpoch:
		next.state = memberStable
		next.assigned = filterAssignment(target, keep)
		next.previousMemberEpoch, next.memberEpoch = m.memberEpoch, targetEpoch
	case subscriptionChanged:
		next.assigned = filterAssignment(target, keep)
	}
	return next
}

// initializedDescriber describes topics to the simple assignor from the
// image, and lets it hand out only initialized partitions
// (assignor.AssignableDescriber; Kafka's withTopicAssignablePartitionsMap).
type initializedDescriber struct {
	imageDescriber
	initialized assignment
}

func (d initializedDescriber) Assignable(t topicID, p int32) bool {
	return d.initialized.contains(t, p)
}
