package oauthbearer

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/strait-io/strait/wire/sasl"
)

// TokenValidator validates a bearer token; *Validator is the one the broker
// uses, tests may give another.
type TokenValidator interface {
	Validate(token string) (Token, error)
}

// Mechanism is OAUTHBEARER over a TokenValidator (Kafka's
// OAuthBearerSaslServer with OAuthBearerValidatorCallbackHandler). It is
// safe for concurrent use.
type Mechanism struct {
	validator TokenValidator
	log       *slog.Logger
	close     func()
}

var (
	_ sasl.Mechanism = (*Mechanism)(nil)
	_ io.Closer      = (*Mechanism)(nil)
)

// NewMechanism returns OAUTHBEARER over v; it logs why it refuses a token.
func NewMechanism(v TokenValidator, log *slog.Logger) *Mechanism {
	return &Mechanism{validator: v, log: log, close: func() {}}
}

// Name implements sasl.Mechanism.
func (*Mechanism) Name() string { return Name }

// Name is the mechanism's name in sasl.enabled.mechanisms and SaslHandshake.
const Name = "OAUTHBEARER"

// NewSession implements sasl.Mechanism.
func (m *Mechanism) NewSession() sasl.Session { return &session{m: m} }

// Close stops what the mechanism runs in the background (refreshing the
// JWKS of New) and waits for it; sessions already authenticated are
// unaffected. It implements io.Closer, so that the broker can close the
// mechanisms of its listeners without knowing which need it.
func (m *Mechanism) Close() error {
	m.close()
	return nil
}

type sessionState int

const (
	awaitingInitial  sessionState = iota
	awaitingErrorAck              // the error reply went out; \x01 must follow
	authenticated
	failed
)

type session struct {
	m         *Mechanism
	state     sessionState
	errReply  []byte
	principal string
	expiry    time.Time
}

// Step implements sasl.Session. OAUTHBEARER is one client message: the
// token is valid (empty reply, done) or it is not, and then, as RFC 7628
// section 3.2.2 and Kafka, the server replies with the error JSON, the
// client answers \x01 and the server fails with that JSON as the message.
func (s *session) Step(token []byte) ([]byte, bool, error) {
	switch s.state {
	case awaitingErrorAck:
		s.state = failed
		if !bytes.Equal(token, []byte{kvSep}) {
			return nil, false, fmt.Errorf("%w: after the server's error the OAUTHBEARER client must send \\x01", sasl.ErrIllegalState)
		}
		return nil, false, fmt.Errorf("%w: %s", sasl.ErrAuthenticationFailed, s.errReply)
	case authenticated:
		return nil, false, fmt.Errorf("%w: the OAUTHBEARER exchange is already complete", sasl.ErrIllegalState)
	case failed:
		return nil, false, fmt.Errorf("%w: the OAUTHBEARER exchange has failed", sasl.ErrIllegalState)
	}
	s.state = failed
	msg, err := parseInitialResponse(token)
	if err != nil {
		// Kafka answers a malformed first message (a SaslException) with
		// SASL_AUTHENTICATION_FAILED, not ILLEGAL_SASL_STATE.
		s.m.log.Info("OAUTHBEARER authentication failed", "reason", err)
		return nil, false, fmt.Errorf("%w: %v", sasl.ErrAuthenticationFailed, err)
	}
	tok, err := s.m.validator.Validate(msg.token)
	if err != nil {
		s.m.log.Warn("OAUTHBEARER token refused", "reason", err)
		s.errReply = errorReply("invalid_token")
		s.state = awaitingErrorAck
		return s.errReply, false, nil
	}
	if msg.authzid != "" && msg.authzid != tok.Subject {
		// As Kafka: an authorization id, if given, must be the token's
		// principal; acting for someone else is not supported.
		return nil, false, fmt.Errorf("%w: the client requested an authorization id (%s) that is different from the token's principal name (%s)",
			sasl.ErrAuthenticationFailed, msg.authzid, tok.Subject)
	}
	// The extensions are accepted and ignored: Kafka's
	// OAuthBearerValidatorCallbackHandler marks every one valid, and
	// nothing in Strait reads them.
	s.state = authenticated
	s.principal = "User:" + tok.Subject
	s.expiry = tok.Expiry
	return []byte{}, true, nil
}

// Principal implements sasl.Session.
func (s *session) Principal() string { return s.principal }

// Expiry implements sasl.Session: the token's exp, so that KIP-368 ends the
// session when the token does.
func (s *session) Expiry() time.Time { return s.expiry }
