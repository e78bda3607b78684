package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SaslAuthenticate: v0-2
//
// Behavior (Kafka's SaslServerAuthenticator.handleSaslToken and
// KafkaApis.handleSaslAuthenticateRequest; state in sasl_auth.go):
// * After SaslHandshake, each request's AuthBytes go to the chosen
//   mechanism and its reply comes back in AuthBytes (empty, never null).
// * Bad credentials: SASL_AUTHENTICATION_FAILED with the mechanism's
//   message (never whether the user exists); a malformed or out-of-order
//   token: ILLEGAL_SASL_STATE. Either closes the connection after the
//   answer.
// * Before SaslHandshake: ILLEGAL_SASL_STATE, then the connection closes
//   (Kafka closes without an answer; the answer says why).
// * After authentication (or on a listener without SASL):
//   ILLEGAL_SASL_STATE, and the connection stays.
// * The principal is User:<name> for the connection's later requests
//   (reqctx.Info.Principal), over a TLS client certificate's on SASL_SSL.
//
// Version notes:
// * v1: SessionLifetimeMs (KIP-368): with connections.max.reauth.ms > 0,
//   or a credential that expires, the session's lifetime; the client must
//   re-authenticate (SaslHandshake + SaslAuthenticate on the connection)
//   before it ends, or the connection closes at its next request.
// * v2: flexible versions.

func init() {
	register(api{key: 36, throttleExempt: true, min: 0, max: 2, handle: (*Server).handleSaslAuthenticate})
}

func (s *Server) handleSaslAuthenticate(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SASLAuthenticateRequest)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	a := authFrom(ctx)
	if a == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		msg := "SaslAuthenticate request received on a listener without SASL"
		resp.ErrorMessage = &msg
		return resp, nil
	}
	res := a.authenticate(req.SASLAuthBytes, s.clock.Now())
	resp.ErrorCode = res.code
	if res.msg != "" {
		resp.ErrorMessage = &res.msg
	}
	resp.SASLAuthBytes = res.reply
	if resp.SASLAuthBytes == nil {
		resp.SASLAuthBytes = []byte{}
	}
	resp.SessionLifetimeMillis = res.lifetime.Milliseconds()
	return resp, nil
}
