package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetForLeaderEpoch: v2-4
//
// Behavior:
// * Answers from the partition's leader epoch cache (KIP-101, KIP-279).
//
// Version notes:
// * v2: CurrentLeaderEpoch (KIP-320)
// * v3: ReplicaID
// * v4: flexible versions

func init() { register(api{key: 23, min: 2, max: 4, handle: (*Server).handleOffsetForLeaderEpoch}) }

// OffsetForLeaderEpoch: CLUSTER_ACTION on the cluster (a follower) allows
// every topic; otherwise (a consumer, KIP-320) each topic needs DESCRIBE,
// else TOPIC_AUTHORIZATION_FAILED (KafkaApis.handleOffsetForLeaderEpochRequest).
func (s *Server) handleOffsetForLeaderEpoch(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetForLeaderEpochRequest)
	c := s.auth(ctx)
	var denied []kmsg.OffsetForLeaderEpochRequestTopic
	if !c.cluster(opClusterAction) {
		denied = splitAllowed(&req.Topics, func(t *kmsg.OffsetForLeaderEpochRequestTopic) bool { return c.allowed(resTopic, t.Topic, opDescribe) })
	}
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	if len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.Replicas.OffsetForLeaderEpoch(ctx, req)
	}
	for _, t := range denied {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.LeaderEpoch, rp.EndOffset = p.Partition, errTopicAuth, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
