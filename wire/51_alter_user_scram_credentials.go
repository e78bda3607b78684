package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
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

// AlterUserScramCredentials needs ALTER on the cluster, else every user's
// result is CLUSTER_AUTHORIZATION_FAILED
// (ControllerApis.handleAlterUserScramCredentials).
func (s *Server) handleAlterUserScramCredentials(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)
	if s.auth(ctx).cluster(opAlter) {
		return s.svc.Admin.AlterUserScramCredentials(ctx, req), nil
	}
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	users := map[string]bool{}
	add := func(name string) {
		if users[name] {
			return
		}
		users[name] = true
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User, r.ErrorCode, r.ErrorMessage = name, errClusterAuth, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		resp.Results = append(resp.Results, r)
	}
	for _, d := range req.Deletions {
		add(d.Name)
	}
	for _, u := range req.Upsertions {
		add(u.Name)
	}
	return resp, nil
}
