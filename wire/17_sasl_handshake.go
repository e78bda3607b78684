package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SaslHandshake: v1
//
// Behavior (Kafka's SaslServerAuthenticator.handleHandshakeRequest and
// KafkaApis.handleSaslHandshakeRequest; state in sasl_auth.go):
// * On a SASL listener, before authentication: a mechanism the listener
//   enables (sasl.enabled.mechanisms) is answered with no error and the
//   enabled list, and SaslAuthenticate requests carry its exchange; any
//   other is answered UNSUPPORTED_SASL_MECHANISM with the enabled list,
//   and the connection is closed after the answer.
// * On an authenticated connection whose session expires (KIP-368,
//   connections.max.reauth.ms or the credential's lifetime), and not within
//   a second of the last re-authentication's start: a re-authentication
//   begins, with the same mechanism (another is UNSUPPORTED_SASL_MECHANISM
//   and closes).
// * Otherwise (authenticated without an expiring session, or a listener
//   without SASL): ILLEGAL_SASL_STATE, and the connection stays.
//
// Version notes:
// * v0 (deprecated) made the tokens that follow raw size-prefixed SASL
//   bytes instead of SaslAuthenticate requests. Strait does not serve that
//   framing, so v0 is not advertised (a v0 request closes the connection,
//   as any unserved version does); every client since Kafka 1.0 sends v1.
// * v1: the tokens go in SaslAuthenticate (KIP-152).

func init() { register(api{key: 17, min: 1, max: 1, handle: (*Server).handleSaslHandshake}) }

func (s *Server) handleSaslHandshake(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	a := authFrom(ctx)
	if a == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp, nil
	}
	resp.ErrorCode, resp.SupportedMechanisms = a.handshake(req.Mechanism, s.clock.Now())
	return resp, nil
}
