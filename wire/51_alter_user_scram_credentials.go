package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterUserScramCredentials: v0 (KIP-554)
//
// Behavior:
// * Forwarded to the active controller, which validates each user's
//   alterations (DUPLICATE_RESOURCE, UNACCEPTABLE_CREDENTIAL,
//   UNSUPPORTED_SASL_MECHANISM, RESOURCE_NOT_FOUND) and appends
//   UserScramCredentialRecord / RemoveUserScramCredentialRecord; an
//   upsertion's salted password becomes StoredKey and ServerKey there.
//
// Version notes:
// * v0: flexible

func init() {
	register(api{key: 51, min: 0, max: 0, handle: (*Server).handleAlterUserScramCredentials})
}

func (s *Server) handleAlterUserScramCredentials(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	// authz: Kafka checks ALTER on the CLUSTER resource
	// (ControllerApis.handleAlterUserScramCredentials); unauthorized is
	// CLUSTER_AUTHORIZATION_FAILED for every user's result.
	return s.svc.Admin.AlterUserScramCredentials(ctx, kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)), nil
}
