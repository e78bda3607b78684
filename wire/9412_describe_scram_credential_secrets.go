package wire

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// DescribeScramCredentialSecrets: v0 (Strait's own, key 9412; types in
// raftmeta/mirrormsg)
//
// Behavior:
// * Exports this node's SCRAM credentials with their salts, StoredKeys
//   and ServerKeys, for a mirror's SCRAM sync (issue 25): Kafka has no
//   such API (KIP-554's DescribeUserScramCredentials hides them on
//   purpose), so only a Strait source can be synced.
// * Served only on an encrypted listener (SSL, SASL_SSL): a StoredKey and
//   one captured exchange give the ClientKey (ClientProof XOR
//   HMAC(StoredKey, AuthMessage), RFC 5802), a login, so these bytes must
//   never cross an unencrypted link. Elsewhere the request is refused with
//   CLUSTER_AUTHORIZATION_FAILED and a message saying so, before the
//   service is asked.
// * Needs ALTER on the cluster when an authorizer is on
//   (CLUSTER_AUTHORIZATION_FAILED otherwise).
// * Advertised and accepted with a MirrorService, like the mirror RPCs.
//
// Version notes:
// * v0: the only version; flexible.

func init() {
	register(api{key: mirrormsg.KeyDescribeScramCredentialSecrets, min: 0, max: 0, served: servesMirror, handle: (*Server).handleDescribeScramCredentialSecrets})
}

func (s *Server) handleDescribeScramCredentialSecrets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.DescribeScramCredentialSecretsRequest)
	if proto := s.listenerProtocol(reqctx.From(ctx).Listener); !usesTLS(proto) {
		resp := req.ResponseKind().(*mirrormsg.DescribeScramCredentialSecretsResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		resp.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("DescribeScramCredentialSecrets requires an encrypted listener (SSL or SASL_SSL); this request came on a %s listener", proto))
		return resp, nil
	}
	// ALTER on CLUSTER, the permission that can set credentials: reading
	// the verifiers is as sensitive.
	if !s.auth(ctx).cluster(opAlter) {
		resp := req.ResponseKind().(*mirrormsg.DescribeScramCredentialSecretsResponse)
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		return resp, nil
	}
	return mirrorAnswer(s.svc.Mirror.DescribeScramCredentialSecrets(ctx, req))
}

// listenerProtocol is the security protocol of the named listener, ""
// for a name this server does not have.
func (s *Server) listenerProtocol(name string) string {
	for _, l := range s.cfg.Listeners {
		if l.Name == name {
			return l.SecurityProtocol
		}
	}
	return ""
}
