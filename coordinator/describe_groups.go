package coordinator

import (
	"context"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupAuthorizedOperations is the bit field of the operations a GROUP
// resource supports (READ 3, DELETE 6, DESCRIBE 8), all allowed while no
// authorizer runs (AuthHelper.authorizedOperations with no authorizer).
const groupAuthorizedOperations int32 = 1<<3 | 1<<6 | 1<<8

// DescribeGroups: v0-5
//
// Behavior:
//   - A group that does not exist is described as Dead with no error.
//   - Member metadata is included only for Stable groups, whose protocol is
//     selected (GroupMetadataManager.describeGroups).
//   - Client id and host are those of each member's JoinGroup.
//   - A consumer group (KIP-848) is not a classic group: it is described
//     as Dead with no error, as Kafka does before v6
//     (ConsumerGroupDescribe describes it).
//
// Version notes:
//   - v3: AuthorizedOperations when IncludeAuthorizedOperations (KIP-430);
//     otherwise Integer.MIN_VALUE.
//   - v4: GroupInstanceID of members (KIP-345).
func (c *GroupCoordinator) DescribeGroups(ctx context.Context, req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := kmsg.NewPtrDescribeGroupsResponse()
	resp.Version = req.Version
	for _, id := range req.Groups {
		d := c.describeGroup(id)
		d.AuthorizedOperations = authorizedOperations(req.Version >= 3 && req.IncludeAuthorizedOperations, d.ErrorCode)
		resp.Groups = append(resp.Groups, d)
	}
	return resp
}

// authorizedOperations is a described group's AuthorizedOperations:
// groupAuthorizedOperations when asked for and the group was described,
// else Integer.MIN_VALUE, as Kafka answers.
func authorizedOperations(asked bool, code int16) int32 {
	if asked && code == 0 {
		return groupAuthorizedOperations
	}
	return math.MinInt32
}

// lockedGroup looks id up with lookup in its shard, which it returns
// locked; or the error code and message to answer (the shard unlocked):
// INVALID_GROUP_ID for an empty id, the shard's error, lookup's.
func lockedGroup[G any](c *GroupCoordinator, id string, lookup func(*shard, string) (G, *cgError)) (*shard, G, int16, *string) {
	var zero G
	if id == "" {
		return nil, zero, invalidGroupID, nil
	}
	s, code := c.lockShard(id)
	if code != 0 {
		return nil, zero, code, nil
	}
	g, e := lookup(s, id)
	if e != nil {
		s.mu.Unlock()
		return nil, zero, e.code, kmsg.StringPtr(e.msg)
	}
	return s, g, 0, nil
}

func (c *GroupCoordinator) describeGroup(id string) kmsg.DescribeGroupsResponseGroup {
	d := kmsg.NewDescribeGroupsResponseGroup()
	d.Group = id
	s, code := c.lockShard(id)
	if code != 0 {
		d.ErrorCode = code
		return d
	}
	defer s.mu.Unlock()
	g := s.group(id)
	if g == nil {
		// Missing, or a consumer group.
		d.State = stateDead.String()
		return d
	}
	d.State = g.state.String()
	d.ProtocolType = g.protocolType
	protocol := ""
	if g.is(stateStable) {
		protocol = g.protocolName
		d.Protocol = protocol
	}
	d.Members = []kmsg.DescribeGroupsResponseGroupMember{}
	for _, m := range g.members {
		d.Members = append(d.Members, m.describe(protocol))
	}
	return d
}
