package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeProducers: v0
//
// Behavior:
// * The idempotent and transactional producers a partition's local log
//   remembers (KIP-664), answered by the replicas service
//   (replication/describe_producers.go).
//
// Version notes:
// * v0: flexible versions

func init() { register(api{key: 61, min: 0, max: 0, handle: (*Server).handleDescribeProducers}) }

// DescribeProducers needs READ on each topic, else TOPIC_AUTHORIZATION_FAILED
// (KafkaApis.handleDescribeProducersRequest).
func (s *Server) handleDescribeProducers(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeProducersRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.Topics, func(t *kmsg.DescribeProducersRequestTopic) bool { return c.allowed(resTopic, t.Topic, opRead) })
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	if len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.Replicas.DescribeProducers(ctx, req)
	}
	for _, t := range denied {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, errTopicAuth
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
