package wire

import (
	"context"

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

func (s *Server) handleDescribeUserScramCredentials(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	// authz: Kafka checks DESCRIBE on the CLUSTER resource
	// (KafkaApis.handleDescribeUserScramCredentialsRequest); unauthorized
	// is CLUSTER_AUTHORIZATION_FAILED in the top-level ErrorCode.
	return s.svc.Admin.DescribeUserScramCredentials(ctx, kreq.(*kmsg.DescribeUserSCRAMCredentialsRequest)), nil
}
