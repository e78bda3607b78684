package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeClientQuotas: v0-v1 (KIP-546)
//
// Behavior:
// * Answered from this node's metadata image, as Kafka's brokers answer
//   from their metadata cache (ClientQuotasImage.describe): the stored
//   quotas of the entities the filter matches (EXACT, DEFAULT, SPECIFIED;
//   strict or not). A bad filter is INVALID_REQUEST or UNSUPPORTED_VERSION
//   in the top-level ErrorCode.
//
// Version notes:
// * v1: flexible

func init() {
	register(api{key: 48, min: 0, max: 1, handle: (*Server).handleDescribeClientQuotas})
}

// DescribeClientQuotas needs DESCRIBE_CONFIGS on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED in the top-level ErrorCode
// (KafkaApis.handleDescribeClientQuotasRequest).
func (s *Server) handleDescribeClientQuotas(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeClientQuotasRequest)
	if !s.auth(ctx).cluster(opDescribeConfigs) {
		resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		return resp, nil
	}
	return s.svc.Admin.DescribeClientQuotas(ctx, req), nil
}
