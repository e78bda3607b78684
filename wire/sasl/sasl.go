// Package sasl is the seam between the wire layer's SASL authenticator
// (SaslHandshake, SaslAuthenticate and the per-connection state of Kafka's
// SaslServerAuthenticator) and the mechanisms a listener enables: PLAIN,
// SCRAM-SHA-256/512 and OAUTHBEARER live in sub-packages and implement
// Mechanism; the wire layer knows nothing of their messages.
//
// Credentials live below the wire layer (PLAIN users in the listener's JAAS
// config, SCRAM credentials in the metadata log, OAUTHBEARER keys in a JWKS
// file), so a mechanism takes what it needs through the interfaces here and
// the broker adapts its stores to them.
package sasl

import (
	"errors"
	"time"
)

// Mechanism is one SASL mechanism a listener enables (sasl.enabled.mechanisms).
// It is shared by every connection of the listener and must be safe for
// concurrent use.
type Mechanism interface {
	// Name is the mechanism's IANA name, as SaslHandshake carries it:
	// "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER".
	Name() string
	// NewSession starts the exchange of one authentication (or, with
	// KIP-368, one re-authentication) of one connection.
	NewSession() Session
}

// Session is one authentication exchange. The wire layer calls Step once
// per SaslAuthenticate request, in order, from one goroutine at a time.
type Session interface {
	// Step takes the client's next token (SaslAuthenticate's AuthBytes)
	// and returns the server's reply (the response's AuthBytes). done is
	// true once the client is authenticated; Principal and Expiry are
	// valid from then on. A non-nil error ends the exchange: wrap
	// ErrAuthenticationFailed for bad credentials or a token the
	// mechanism cannot parse (the client gets SASL_AUTHENTICATION_FAILED
	// with the error's text, which must not say whether the user exists;
	// Kafka's SASL servers answer a malformed token so too) and
	// ErrIllegalState for a token after the exchange ended. A mechanism
	// that answers a failure with a
	// last server message before failing (OAUTHBEARER's error JSON, RFC
	// 7628 section 3.2.2) returns that reply with a nil error and fails
	// on the client's next token.
	Step(token []byte) (reply []byte, done bool, err error)
	// Principal is Kafka's principal of the authenticated client,
	// "User:<name>", once Step has returned done.
	Principal() string
	// Expiry is when the credential the client presented stops being
	// valid (OAUTHBEARER's token exp), or the zero Time for none. The
	// session lifetime of KIP-368 is the earlier of this and
	// connections.max.reauth.ms from now.
	Expiry() time.Time
}

// ErrAuthenticationFailed marks a Step error as wrong or unknown
// credentials: SASL_AUTHENTICATION_FAILED (58).
var ErrAuthenticationFailed = errors.New("authentication failed")

// ErrIllegalState marks a Step error as a token the exchange did not
// expect here (one after it ended): ILLEGAL_SASL_STATE (34).
var ErrIllegalState = errors.New("illegal SASL state")

// ScramCredential is what the server keeps of a SCRAM password (RFC 5802
// section 3): the salt and iteration count the client needs to derive its
// keys, StoredKey to check the client's proof and ServerKey to sign the
// server's final message. The password itself is never kept.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int
}

// ScramCredentials looks up a user's credential for a SCRAM mechanism
// ("SCRAM-SHA-256" or "SCRAM-SHA-512"); the broker adapts the metadata
// image (UserScramCredentialRecord) to it. ok is false for an unknown user.
type ScramCredentials interface {
	ScramCredential(mechanism, user string) (cred ScramCredential, ok bool)
}
