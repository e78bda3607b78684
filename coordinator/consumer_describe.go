package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// ConsumerGroupDescribe: v0-1 (KIP-848)
//
// Behavior (GroupMetadataManager.consumerGroupDescribe, ConsumerGroup.asDescribedGroup):
//   - A missing group, or one that is not a consumer group, answers
//     GROUP_ID_NOT_FOUND with a message; an empty id INVALID_GROUP_ID.
//   - The assignor is the one the members prefer, else the default
//     (group.consumer.assignors' first). Members are in member id order,
//     each with its current and target assignments (topics missing from
//     the metadata image are left out).
//
// Version notes:
//   - v1: MemberType, 1 for a member of the consumer protocol (KIP-1099).
func (c *GroupCoordinator) ConsumerGroupDescribe(ctx context.Context, req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse {
	resp := kmsg.NewPtrConsumerGroupDescribeResponse()
	resp.Version = req.Version
	img := c.image()
	for _, id := range req.Groups {
		d := c.describeConsumerGroup(id, img)
		d.AuthorizedOperations = authorizedOperations(req.IncludeAuthorizedOperations, d.ErrorCode)
		resp.Groups = append(resp.Groups, d)
	}
	return resp
}

func (c *GroupCoordinator) describeConsumerGroup(id string, img *raftmeta.Image) kmsg.ConsumerGroupDescribeResponseGroup {
	d := kmsg.NewConsumerGroupDescribeResponseGroup()
	d.Group = id
	s, g, code, msg := lockedGroup(c, id, (*shard).consumerGroup)
	if code != 0 {
		d.ErrorCode, d.ErrorMessage = code, msg
		return d
	}
	defer s.mu.Unlock()
	d.State = g.state().String()
	d.Epoch = g.groupEpoch
	d.AssignmentEpoch = g.assignmentEpoch
	d.AssignorName = g.preferredServerAssignor(nil, nil)
	if d.AssignorName == "" {
		d.AssignorName = c.cfg.ConsumerAssignors[0]
	}
	d.Members = []kmsg.ConsumerGroupDescribeResponseGroupMember{}
	for _, mid := range g.sortedMemberIDs() {
		m := g.member(mid)
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID = m.id
		dm.MemberEpoch = m.memberEpoch
		dm.InstanceID = optString(m.instanceID)
		dm.RackID = optString(m.rackID)
		dm.ClientID = m.clientID
		dm.ClientHost = m.clientHost
		dm.SubscribedTopics = append([]string{}, m.subscribedTopicNames...)
		dm.SubscribedTopicRegex = kmsg.StringPtr(m.subscribedTopicRegex)
		dm.Assignment = describedAssignment(m.assigned, img)
		dm.TargetAssignment = describedAssignment(g.target[m.id], img)
		dm.MemberType = 1
		d.Members = append(d.Members, dm)
	}
	return d
}

// describedAssignment names an assignment's topics from the image.
func describedAssignment(a assignment, img *raftmeta.Image) kmsg.Assignment {
	out := kmsg.Assignment{TopicPartitions: []kmsg.AssignmentTopicPartition{}}
	for _, t := range a.sortedTopics() {
		topic := img.TopicsByID[raftmeta.Uuid(t)]
		if topic == nil {
			continue
		}
		tp := kmsg.NewAssignmentTopicPartition()
		tp.TopicID = t
		tp.Topic = topic.Name
		tp.Partitions = append([]int32{}, a[t]...)
		out.TopicPartitions = append(out.TopicPartitions, tp)
	}
	return out
}
