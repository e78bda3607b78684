package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteRecords: v0-2
//
// Behavior:
// * Offset -1 deletes up to the high watermark.
//
// Version notes:
// * v1: same as v0
// * v2: flexible versions

func init() { register(api{key: 21, min: 0, max: 2, handle: (*Server).handleDeleteRecords}) }

// DeleteRecords needs DELETE on each topic, else TOPIC_AUTHORIZATION_FAILED
// (KafkaApis.handleDeleteRecordsRequest).
func (s *Server) handleDeleteRecords(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteRecordsRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.Topics, func(t *kmsg.DeleteRecordsRequestTopic) bool { return c.allowed(resTopic, t.Topic, opDelete) })
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	if len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.Replicas.DeleteRecords(ctx, req)
	}
	for _, t := range denied {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.LowWatermark = p.Partition, errTopicAuth, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
