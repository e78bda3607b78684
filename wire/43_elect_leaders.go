package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ElectLeaders: v0-2
//
// Behavior:
// * PREFERRED moves leadership to the first replica when it is in the ISR;
//   UNCLEAN elects any live replica of a leaderless partition (Kafka's
//   kafka-leader-election.sh). The active controller decides; other
//   brokers forward the request to it.
// * A null topic list means every partition (v0-1 of Kafka's
//   ElectLeadersRequest).
//
// Version notes:
// * v1: ElectionType and a top-level error code
// * v2: flexible versions

func init() { register(api{key: 43, min: 0, max: 2, handle: (*Server).handleElectLeaders}) }

// ElectLeaders needs ALTER on the cluster, else the request and every
// partition named are CLUSTER_AUTHORIZATION_FAILED
// (KafkaApis.handleElectLeaders).
func (s *Server) handleElectLeaders(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ElectLeadersRequest)
	if s.auth(ctx).cluster(opAlter) {
		return s.svc.Admin.ElectLeaders(ctx, req), nil
	}
	resp := deniedResponse(req, errClusterAuth).(*kmsg.ElectLeadersResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, errClusterAuth
			rp.ErrorMessage = kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
