package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// ShareGroupDescribe: v1 (KIP-932)
//
// Behavior (GroupMetadataManager.shareGroupDescribe, ShareGroup.asDescribedGroup):
//   - A missing group, or one of another type, answers GROUP_ID_NOT_FOUND
//     with Kafka's message; an empty id INVALID_GROUP_ID.
//   - The assignor is "simple"; members are in member id order, each with
//     its current assignment (topics missing from the image left out).
func (c *GroupCoordinator) ShareGroupDescribe(ctx context.Context, req *kmsg.ShareGroupDescribeRequest) *kmsg.ShareGroupDescribeResponse {
	resp := kmsg.NewPtrShareGroupDescribeResponse()
	resp.Version = req.Version
	img := c.image()
	for _, id := range req.GroupIDs {
		d := c.describeShareGroup(id, img)
		d.AuthorizedOperations = authorizedOperations(req.IncludeAuthorizedOperations, d.ErrorCode)
		resp.Groups = append(resp.Groups, d)
	}
	return resp
}

func (c *GroupCoordinator) describeShareGroup(id string, img *raftmeta.Image) kmsg.ShareGroupDescribeResponseGroup {
	d := kmsg.NewShareGroupDescribeResponseGroup()
	d.GroupID = id
	s, g, code, msg := lockedGroup(c, id, (*shard).shareGroup)
	if code != 0 {
		d.ErrorCode, d.ErrorMessage = code, msg
		return d
	}
	defer s.mu.Unlock()
	d.GroupState = g.state().String()
	d.GroupEpoch = g.groupEpoch
	d.AssignmentEpoch = g.assignmentEpoch
	d.Assignor = c.cfg.Share.Assignors[0]
	d.Members = []kmsg.ShareGroupDescribeResponseGroupMember{}
	for _, mid := range g.sortedMemberIDs() {
		m := g.members[mid]
		dm := kmsg.NewShareGroupDescribeResponseGroupMember()
		dm.MemberID = m.id
		dm.RackID = optString(m.rackID)
		dm.MemberEpoch = m.memberEpoch
		dm.ClientID = m.clientID
		dm.ClientHost = m.clientHost
		dm.SubscribedTopicNames = append([]string{}, m.subscribedTopicNames...)
		dm.Assignment.TopicPartitions = []kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition{}
		for _, t := range m.assigned.sortedTopics() {
			topic := img.TopicsByID[raftmeta.Uuid(t)]
			if topic == nil {
				continue
			}
			tp := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
			tp.TopicID, tp.Topic = t, topic.Name
			tp.Partitions = append([]int32{}, m.assigned[t]...)
			dm.Assignment.TopicPartitions = append(dm.Assignment.TopicPartitions, tp)
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

// listShareGroups is ListGroups for a shard's share groups: protocol type
// and group type "share", state Empty or Stable. Called with mu held.
func (s *shard) listShareGroups(typeOK func(string) bool, states []string) []kmsg.ListGroupsResponseGroup {
	if !typeOK(groupTypeShare) {
		return nil
	}
	var out []kmsg.ListGroupsResponseGroup
	for _, g := range s.shareGroups {
		state := g.state().String()
		if len(states) > 0 && !stateMatchesFilter(state, states) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group = g.id
		lg.ProtocolType = shareProtocolType
		lg.GroupState = state
		lg.GroupType = groupTypeShare
		out = append(out, lg)
	}
	return out
}

// joinShareGroup answers a classic JoinGroup naming a share group with
// INCONSISTENT_GROUP_PROTOCOL and no member id, as Kafka's classicGroupJoin
// answers a group of another type; it reports whether the join may go
// on. Called with mu held.
func (s *shard) joinShareGroup(j *joinRequest, ch chan *kmsg.JoinGroupResponse) bool {
	if s.shareGroups[j.group] == nil {
		return true
	}
	ch <- &kmsg.JoinGroupResponse{ErrorCode: inconsistentGroupProtocol, Generation: -1}
	return false
}

// isShareGroup reports whether id is a share group: OffsetCommit,
// TxnOffsetCommit and OffsetFetch then answer GROUP_ID_NOT_FOUND
// (ShareGroup.validateOffsetCommit/validateOffsetFetch: "Group %s is not a
// consumer group."). Called with mu held.
func (s *shard) isShareGroup(id string) bool { return s.shareGroups[id] != nil }
