// Package plain is the server side of SASL/PLAIN (RFC 4616) over the users
// of a listener's JAAS configuration, as Kafka's PlainSaslServer with its
// default PlainServerCallbackHandler:
//
//	listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
//	    username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";
//
// Each user_<name>="<password>" option is a user; username and password
// are the broker's own credentials for the inter-broker link (the broker
// reads them, not this package).
package plain

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"
	"time"

	"github.com/strait-io/strait/raftmeta/jaas"
	"github.com/strait-io/strait/wire/sasl"
)

// Name is the mechanism's name in SaslHandshake.
const Name = "PLAIN"

// LoginModule is the JAAS login module a PLAIN listener's config names.
const LoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"

// userPrefix marks a user option (PlainServerCallbackHandler's
// JAAS_USER_PREFIX).
const userPrefix = "user_"

// Mechanism checks PLAIN credentials against a fixed set of users.
type Mechanism struct {
	// users maps a user name to the SHA-256 of its password: compared in
	// constant time whatever the lengths.
	users map[string][sha256.Size]byte
}

// New returns the mechanism for users (name → password).
func New(users map[string]string) *Mechanism {
	m := &Mechanism{users: make(map[string][sha256.Size]byte, len(users))}
	for u, p := range users {
		m.users[u] = sha256.Sum256([]byte(p))
	}
	return m
}

// UsersFromJAAS reads the user_<name> options of a PlainLoginModule entry.
func UsersFromJAAS(c jaas.Config) (map[string]string, error) {
	if c.Module != LoginModule {
		return nil, fmt.Errorf("login module %s is not %s", c.Module, LoginModule)
	}
	users := map[string]string{}
	for k, v := range c.Options {
		if name, ok := strings.CutPrefix(k, userPrefix); ok && name != "" {
			users[name] = v
		}
	}
	return users, nil
}

// Name implements sasl.Mechanism.
func (m *Mechanism) Name() string { return Name }

// NewSession implements sasl.Mechanism.
func (m *Mechanism) NewSession() sasl.Session { return &session{m: m} }

type session struct {
	m    *Mechanism
	user string
	done bool
}

// Step checks the client's one message: [authzid] NUL authcid NUL passwd.
// Every failure is SASL_AUTHENTICATION_FAILED, with PlainSaslServer's
// messages; none says whether the user exists.
func (s *session) Step(token []byte) ([]byte, bool, error) {
	if s.done {
		return nil, false, fmt.Errorf("%w: SASL/PLAIN takes one message; the exchange is already complete", sasl.ErrIllegalState)
	}
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return nil, false, fmt.Errorf("%w: Invalid SASL/PLAIN response: expected 3 tokens, got %d", sasl.ErrAuthenticationFailed, len(parts))
	}
	authzid, user, pass := string(parts[0]), string(parts[1]), parts[2]
	switch {
	case user == "":
		return nil, false, fmt.Errorf("%w: Authentication failed: username not specified", sasl.ErrAuthenticationFailed)
	case len(pass) == 0:
		return nil, false, fmt.Errorf("%w: Authentication failed: password not specified", sasl.ErrAuthenticationFailed)
	}
	want, known := s.m.users[user]
	got := sha256.Sum256(pass)
	// Compare even for an unknown user, so the time taken does not tell.
	match := subtle.ConstantTimeCompare(got[:], want[:]) == 1
	if !known || !match {
		return nil, false, fmt.Errorf("%w: Authentication failed: Invalid username or password", sasl.ErrAuthenticationFailed)
	}
	if authzid != "" && authzid != user {
		return nil, false, fmt.Errorf("%w: Authentication failed: Client requested an authorization id that is different from username", sasl.ErrAuthenticationFailed)
	}
	s.user, s.done = user, true
	return nil, true, nil
}

// Principal implements sasl.Session.
func (s *session) Principal() string { return "User:" + s.user }

// Expiry implements sasl.Session: a PLAIN password does not expire.
func (s *session) Expiry() time.Time { return time.Time{} }
