package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// OffsetCommit: v2-9
//
// Behavior:
// * Committed by the group coordinator into __consumer_offsets with acks=all before answering.
// * Generation and member checks as Kafka's classic groups; generation -1 commits for groups with no members.
//
// Version notes:
// * v2: RetentionTimeMillis (ignored since v5)
// * v3: ThrottleMillis
// * v5: RetentionTimeMillis removed
// * v6: CommittedLeaderEpoch (KIP-320)
// * v7: GroupInstanceID (KIP-345)
// * v8: flexible versions
// * v9: new consumer protocol members (KIP-848; classic groups only here)

func init() { register(api{key: 8, min: 2, max: 9, handle: (*Server).handleOffsetCommit}) }

// OffsetCommit needs READ on the group, else every partition is
// GROUP_AUTHORIZATION_FAILED, and READ on each topic, else its partitions
// are TOPIC_AUTHORIZATION_FAILED (KafkaApis.handleOffsetCommitRequest).
//
// A forward-only commit (Strait's tag mirrormsg.ForwardOnlyCommitTag: a
// mirror's group offset sync writing into a group with live members) also
// needs CLUSTER_ACTION on the cluster, as the inter-broker RPCs do: it
// bypasses the group's member checks. Without it every partition is
// CLUSTER_AUTHORIZATION_FAILED.
func (s *Server) handleOffsetCommit(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetCommitRequest)
	c := s.auth(ctx)
	groupOK := c.allowed(resGroup, req.Group, opRead)
	if mirrormsg.IsForwardOnly(req) && !c.cluster(opClusterAction) {
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		refuseOffsetCommit(resp, req.Topics, errClusterAuth)
		return resp, nil
	}
	denied := splitAllowed(&req.Topics, func(t *kmsg.OffsetCommitRequestTopic) bool {
		return groupOK && c.allowed(resTopic, t.Topic, opRead)
	})
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	if len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.Groups.OffsetCommit(ctx, req)
	}
	code := errTopicAuth
	if !groupOK {
		code = errGroupAuth
	}
	refuseOffsetCommit(resp, denied, code)
	return resp, nil
}

// refuseOffsetCommit answers every partition of topics with code.
func refuseOffsetCommit(resp *kmsg.OffsetCommitResponse, topics []kmsg.OffsetCommitRequestTopic, code int16) {
	for _, t := range topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
}
