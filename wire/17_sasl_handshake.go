package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SaslHandshake: v0-1
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
// * v0 (deprecated, still served by Kafka 4.x): the tokens that follow
//   are raw size-prefixed frames, answered the same way, instead of
//   SaslAuthenticate requests (sasl_auth.go, rawStep); a failure closes
//   the connection unanswered, and such a client cannot re-authenticate.
//   librdkafka needs v0 advertised to use SASL at all (its
//   SASL_HANDSHAKE feature depends on it), though it then sends v1.
// * v1: the tokens go in SaslAuthenticate (KIP-152).

func init() {
	register(api{key: 17, throttleExempt: true, min: 0, max: 1, handle: (*Server).handleSaslHandshake})
}

func (s *Server) handleSaslHandshake(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	a := authFrom(ctx)
	if a == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp, nil
	}
	resp.ErrorCode, resp.SupportedMechanisms = a.handshake(req.Version, req.Mechanism, s.clock.Now())
	return resp, nil
}
