// Package scram is the server side of the SCRAM-SHA-256 and SCRAM-SHA-512
// SASL mechanisms (RFC 5802, RFC 7677) as Kafka's ScramSaslServer speaks
// them. What a stored credential is and its key derivation (Kafka's
// ScramFormatter) are raftmeta/scramcred's, which the controller shares.
package scram

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/strait-io/strait/raftmeta/scramcred"
	"github.com/strait-io/strait/wire/sasl"
)

// Mechanism is SCRAM-SHA-256 or SCRAM-SHA-512 over a credential store. It
// is safe for concurrent use.
type Mechanism struct {
	name  string
	hash  func() hash.Hash
	creds sasl.ScramCredentials
	rand  io.Reader
	// mockKey makes the salt answered for an unknown user: the same for
	// every attempt at that user on this broker, different on another
	// broker and after a restart, and unguessable, so the server-first
	// message looks like a real user's (RFC 5802 section 9).
	mockKey []byte
	// serverNonce makes the server's part of a nonce (randomNonce; tests
	// fix it to replay RFC 7677's example).
	serverNonce func() (string, error)
}

// NewMechanism returns the mechanism name ("SCRAM-SHA-256" or
// "SCRAM-SHA-512") over creds. random may be nil for crypto/rand.
//
// Delegation tokens (the tokenauth=true extension of KIP-48) are not
// supported: a client that asks for one is refused like a wrong password.
func NewMechanism(name string, creds sasl.ScramCredentials, random io.Reader) (*Mechanism, error) {
	h, err := scramcred.HashFor(name)
	if err != nil {
		return nil, err
	}
	if creds == nil {
		return nil, fmt.Errorf("scram: %s needs a credential store", name)
	}
	if random == nil {
		random = rand.Reader
	}
	m := &Mechanism{name: name, hash: h, creds: creds, rand: random, mockKey: make([]byte, 32)}
	m.serverNonce = m.randomNonce
	if _, err := io.ReadFull(random, m.mockKey); err != nil {
		return nil, fmt.Errorf("scram: %w", err)
	}
	return m, nil
}

// Name implements sasl.Mechanism.
func (m *Mechanism) Name() string { return m.name }

// NewSession implements sasl.Mechanism.
func (m *Mechanism) NewSession() sasl.Session { return &session{m: m} }

type state int

const (
	receiveClientFirst state = iota
	receiveClientFinal
	complete
	failed
)

func (s state) String() string {
	return [...]string{"RECEIVE_CLIENT_FIRST_MESSAGE", "RECEIVE_CLIENT_FINAL_MESSAGE", "COMPLETE", "FAILED"}[s]
}

// session is one exchange (Kafka's ScramSaslServer).
type session struct {
	m     *Mechanism
	state state

	first       *clientFirst
	serverFirst string
	nonce       string // c-nonce s-nonce
	cred        sasl.ScramCredential
	principal   string
}

// authError is a failed authentication: the client gets
// SASL_AUTHENTICATION_FAILED with the text.
type authError struct{ msg string }

func (e *authError) Error() string { return e.msg }
func (e *authError) Unwrap() error { return sasl.ErrAuthenticationFailed }

// invalidCredentials is the one answer to every credential problem: wrong
// password, unknown user, bad proof or nonce, malformed message. It is
// the text Kafka's SaslServerAuthenticator sends for a SaslException, and
// says nothing of whether the user exists.
func (s *session) invalidCredentials() error {
	return &authError{"Authentication failed during authentication due to invalid credentials with SASL mechanism " + s.m.name}
}

// Step implements sasl.Session.
func (s *session) Step(token []byte) (reply []byte, done bool, err error) {
	switch s.state {
	case receiveClientFirst:
		reply, err = s.receiveClientFirst(string(token))
	case receiveClientFinal:
		reply, err = s.receiveClientFinal(string(token))
		done = err == nil
	default:
		return nil, false, fmt.Errorf("%w: unexpected challenge in SASL server state %s", sasl.ErrIllegalState, s.state)
	}
	if err != nil {
		s.state = failed
		s.cred = sasl.ScramCredential{}
		return nil, false, err
	}
	return reply, done, nil
}

func (s *session) receiveClientFirst(msg string) ([]byte, error) {
	first, err := parseClientFirst(msg)
	if err != nil {
		return nil, s.invalidCredentials()
	}
	if first.authzid != "" && first.authzid != first.user {
		// Kafka sends this text itself (a SaslAuthenticationException);
		// it does not depend on whether the user exists.
		return nil, &authError{"Authentication failed: Client requested an authorization id that is different from username"}
	}
	if first.extensions["tokenauth"] == "true" {
		return nil, s.invalidCredentials()
	}
	cred, ok := s.m.creds.ScramCredential(s.m.name, first.user)
	if !ok || cred.Iterations < scramcred.MinIterations || len(cred.StoredKey) != s.m.hash().Size() {
		// An unknown user (or one whose credential cannot be used) goes on
		// with a made-up credential no proof matches, so the exchange
		// looks the same as a wrong password (RFC 5802 section 9).
		cred, err = s.mockCredential(first.user)
		if err != nil {
			return nil, s.invalidCredentials()
		}
	}
	serverNonce, err := s.m.serverNonce()
	if err != nil {
		return nil, s.invalidCredentials()
	}
	s.first, s.cred = first, cred
	s.nonce = first.nonce + serverNonce
	s.serverFirst = "r=" + s.nonce + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) + ",i=" + strconv.Itoa(cred.Iterations)
	s.state = receiveClientFinal
	return []byte(s.serverFirst), nil
}

// mockCredential is the stand-in for an unknown user: a salt fixed per
// user and broker, Kafka's default iterations, and a random StoredKey.
func (s *session) mockCredential(user string) (sasl.ScramCredential, error) {
	salt := scramcred.HMAC(s.m.hash, s.m.mockKey, []byte(user))[:24]
	stored := make([]byte, s.m.hash().Size())
	if _, err := io.ReadFull(s.m.rand, stored); err != nil {
		return sasl.ScramCredential{}, err
	}
	return sasl.ScramCredential{Salt: salt, StoredKey: stored, ServerKey: stored, Iterations: scramcred.DefaultIterations}, nil
}

// randomNonce is the server's part of the nonce: 24 random bytes in
// URL-safe base64, printable and comma-free as RFC 5802 requires.
func (m *Mechanism) randomNonce() (string, error) {
	b := make([]byte, 24)
	if _, err := io.ReadFull(m.rand, b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func (s *session) receiveClientFinal(msg string) ([]byte, error) {
	final, err := parseClientFinal(msg)
	if err != nil {
		return nil, s.invalidCredentials()
	}
	// The nonce must end with the one this exchange made: a client-final
	// of another exchange (a replay) carries another server nonce. Ends
	// with, not equals, as Kafka's ScramSaslServer checks it: librdkafka
	// (kcat, confluent-kafka-*) sends its own nonce again in front of the
	// server's. That is no weaker: the proof signs the AuthMessage, which
	// holds this exchange's server-first message and so its nonce.
	if !strings.HasSuffix(final.nonce, s.nonce) {
		return nil, s.invalidCredentials()
	}
	// Without channel binding c= is the gs2 header in base64 ("biws" for
	// "n,,").
	if final.channelBinding != base64.StdEncoding.EncodeToString([]byte(s.first.gs2Header)) {
		return nil, s.invalidCredentials()
	}
	authMessage := []byte(s.first.bare + "," + s.serverFirst + "," + final.withoutProof)
	h := s.m.hash
	clientSignature := scramcred.HMAC(h, s.cred.StoredKey, authMessage)
	if len(final.proof) != len(clientSignature) {
		return nil, s.invalidCredentials()
	}
	// ClientKey = ClientProof XOR ClientSignature; the proof holds when
	// H(ClientKey) is the StoredKey, compared in constant time.
	clientKey := make([]byte, len(clientSignature))
	subtle.XORBytes(clientKey, final.proof, clientSignature)
	if !hmac.Equal(scramcred.H(h, clientKey), s.cred.StoredKey) {
		return nil, s.invalidCredentials()
	}
	serverSignature := scramcred.HMAC(h, s.cred.ServerKey, authMessage)
	s.principal = "User:" + s.first.user
	s.state = complete
	s.cred = sasl.ScramCredential{}
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSignature)), nil
}

// Principal implements sasl.Session.
func (s *session) Principal() string { return s.principal }

// Expiry implements sasl.Session: a SCRAM password does not expire.
func (s *session) Expiry() time.Time { return time.Time{} }

var _ sasl.Mechanism = (*Mechanism)(nil)
