package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeUserScramCredentials: v0 (KIP-554)
//
// Behavior:
// * Answered from this node's metadata image, as Kafka's brokers answer from
//   their metadata cache: every user with a credential when none is named,
//   else the named ones (RESOURCE_NOT_FOUND, DUPLICATE_RESOURCE).
// * Mechanisms and iterations only; the salt and keys never leave the log.
//
// Version notes:
// * v0: flexible

func init() {
	register(api{key: 50, min: 0, max: 0, handle: (*Server).handleDescribeUserScramCredentials})
}

// DescribeUserScramCredentials needs DESCRIBE on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED in the top-level ErrorCode
// (KafkaApis.handleDescribeUserScramCredentialsRequest).
func (s *Server) handleDescribeUserScramCredentials(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	if !s.auth(ctx).cluster(opDescribe) {
		resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		return resp, nil
	}
	return s.svc.Admin.DescribeUserScramCredentials(ctx, req), nil
}
