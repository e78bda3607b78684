package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListOffsets: v1-10
//
// Behavior:
// * Latest is the high watermark for read_uncommitted, the last stable offset for read_committed, the log end offset for replicas.
//
// Version notes:
// * v1: single offset per partition
// * v2: IsolationLevel (KIP-98)
// * v4: CurrentLeaderEpoch and LeaderEpoch (KIP-320)
// * v6: flexible versions
// * v7: max timestamp -3 (KIP-734)
// * v8: earliest local -4 (KIP-405)
// * v9: latest tiered -5 (KIP-1005)
// * v10: TimeoutMillis (KIP-1075)

func init() { register(api{key: 2, min: 1, max: 10, handle: (*Server).handleListOffsets}) }

// ListOffsets needs DESCRIBE on each topic, else its partitions are
// TOPIC_AUTHORIZATION_FAILED (KafkaApis.handleListOffsetRequest).
func (s *Server) handleListOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListOffsetsRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.Topics, func(t *kmsg.ListOffsetsRequestTopic) bool { return c.allowed(resTopic, t.Topic, opDescribe) })
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	if len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.Replicas.ListOffsets(ctx, req)
	}
	for _, t := range denied {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errTopicAuth
			rp.Timestamp, rp.Offset, rp.LeaderEpoch = -1, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
