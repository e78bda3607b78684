package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/wire/sasl"
)

// The SASL authenticator of one connection on a SASL_PLAINTEXT or
// SASL_SSL listener: Kafka's SaslServerAuthenticator and the part of
// KafkaChannel that re-authenticates (KIP-368).
//
// Until the connection has authenticated it may send only ApiVersions,
// SaslHandshake and SaslAuthenticate, each no larger than
// sasl.server.max.receive.size; anything else closes it (as Kafka's
// authenticator throws IllegalSaslStateException). The loop reads one such
// request at a time: a SASL request, or any request before authentication,
// sets the gate, and the loop reads no further frame until the request's
// handler has run and cleared it (Kafka mutes the channel while it
// authenticates), so a request pipelined behind the last SaslAuthenticate
// is judged, and sized, after authentication completed.
//
// A failure (bad credentials, an unsupported mechanism, a SaslAuthenticate
// out of order) answers the request with the error and then closes the
// connection, as Kafka sends its authentication failure response before
// closing.

// authState is where the exchange stands.
type authState int

const (
	authHandshake    authState = iota // ApiVersions or SaslHandshake expected
	authAuthenticate                  // SaslAuthenticate expected
	authComplete                      // authenticated
	authFailed                        // failed: the connection is closing
)

// minReauthInterval is KafkaChannel's MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS:
// a SaslHandshake sooner than this after the last re-authentication began
// is not a re-authentication (it is answered ILLEGAL_SASL_STATE).
const minReauthInterval = time.Second

type authenticator struct {
	cfg      *SASL
	listener string
	metrics  AuthMetrics
	enabled  []string // mechanism names, in configured order

	// gate is set by whoever reads the connection (its loop, or its
	// runner: reader.go) when it starts a request that must be handled
	// before the next frame is read, and cleared by that request's
	// goroutine (request.run).
	gate atomic.Bool
	// open is true while the connection is authenticated and not
	// re-authenticating: the pre-authentication size cap is off.
	open atomic.Bool
	// raw is true after a SaslHandshake v0 until the exchange ends: the
	// frames are the mechanism's tokens themselves, not SaslAuthenticate
	// requests, and so are the answers (Kafka before KIP-152; still
	// served by Kafka 4.x). Set and cleared by the gated request's
	// goroutine, read by whoever reads the next frame.
	raw atomic.Bool

	mu          sync.Mutex
	state       authState
	mech        sasl.Mechanism
	session     sasl.Session
	principal   string    // "User:<name>" once authenticated
	expiry      time.Time // the session's end (KIP-368); zero: none
	reauthStart time.Time // when the last re-authentication began; zero: none yet
	reauth      bool      // the exchange under way is a re-authentication
}

func newAuthenticator(s *Server, l *listener) *authenticator {
	a := &authenticator{cfg: l.cfg.SASL, listener: l.cfg.Name}
	a.metrics, _ = s.metrics.(AuthMetrics)
	if a.metrics == nil {
		a.metrics = NopMetrics{}
	}
	for _, m := range a.cfg.Mechanisms {
		a.enabled = append(a.enabled, m.Name())
	}
	return a
}

// gates reports whether a request of key read now must be handled before
// another frame is read. Called by whoever reads the connection.
func (a *authenticator) gates(key int16) bool {
	return !a.open.Load() || key == int16(kmsg.SASLHandshake) || key == int16(kmsg.SASLAuthenticate)
}

// maxFrame is the largest request the connection may send now: socket's
// limit, or sasl.server.max.receive.size before authentication.
func (a *authenticator) maxFrame(socketMax int32) int32 {
	if a.open.Load() {
		return socketMax
	}
	return min(socketMax, a.cfg.MaxReceiveSize)
}

// errUnauthenticated closes a connection that sent a request its SASL
// state does not allow (Kafka's IllegalSaslStateException before
// authentication, and an expired session's close).
var errUnauthenticated = errors.New("SASL")

// admit decides whether a request of key may run now; an error closes the
// connection without an answer.
func (a *authenticator) admit(key int16, now time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch a.state {
	case authHandshake:
		switch key {
		case int16(kmsg.ApiVersions), int16(kmsg.SASLHandshake), int16(kmsg.SASLAuthenticate):
			return nil
		}
		a.failLocked()
		return fmt.Errorf("%w: unexpected %s request during SASL handshake: the connection has not authenticated", errUnauthenticated, NameForKey(key))
	case authAuthenticate:
		if key == int16(kmsg.SASLAuthenticate) {
			return nil
		}
		a.failLocked()
		return fmt.Errorf("%w: unexpected %s request during SASL %s", errUnauthenticated, NameForKey(key), a.whatLocked())
	case authComplete:
		if !a.expiry.IsZero() && !now.Before(a.expiry) && key != int16(kmsg.SASLHandshake) {
			return fmt.Errorf("%w: %s request after the authenticated session expired (connections.max.reauth.ms or the credential's lifetime) without re-authentication", errUnauthenticated, NameForKey(key))
		}
		return nil
	default:
		return fmt.Errorf("%w: authentication failed", errUnauthenticated)
	}
}

// failed reports whether the exchange failed: the request's answer is the
// connection's last.
func (a *authenticator) failed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state == authFailed
}

// principalOr is the authenticated principal, or def before there is one.
func (a *authenticator) principalOr(def string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.principal == "" {
		return def
	}
	return a.principal
}

// handshake answers SaslHandshake: the error code and the enabled
// mechanisms. On an authenticated connection whose session expires it
// begins a re-authentication (KafkaChannel.maybeBeginServerReauthentication);
// without an expiring session it is KafkaApis' ILLEGAL_SASL_STATE.
func (a *authenticator) handshake(version int16, mechanism string, now time.Time) (int16, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch a.state {
	case authHandshake:
	case authComplete:
		// A v0 client cannot re-authenticate: it never learns a lifetime.
		if version == 0 || a.expiry.IsZero() || (!a.reauthStart.IsZero() && now.Sub(a.reauthStart) < minReauthInterval) {
			return kerr.IllegalSaslState.Code, nil
		}
		a.reauthStart = now
		if mechanism != a.mech.Name() {
			// KIP-368: a re-authentication keeps the mechanism.
			a.reauth = true
			a.failLocked()
			return kerr.UnsupportedSaslMechanism.Code, []string{a.mech.Name()}
		}
		a.reauth = true
		a.open.Store(false)
		a.session = a.mech.NewSession()
		a.state = authAuthenticate
		return 0, a.enabled
	default:
		return kerr.IllegalSaslState.Code, nil
	}
	for _, m := range a.cfg.Mechanisms {
		if m.Name() == mechanism {
			a.mech, a.session, a.state = m, m.NewSession(), authAuthenticate
			a.raw.Store(version == 0)
			return 0, a.enabled
		}
	}
	a.failLocked()
	return kerr.UnsupportedSaslMechanism.Code, a.enabled
}

// authResult is SaslAuthenticate's answer.
type authResult struct {
	code     int16
	msg      string // error message; "" for none
	reply    []byte
	lifetime time.Duration // SessionLifetimeMs, v1+
}

// authenticate runs one SaslAuthenticate step.
func (a *authenticator) authenticate(token []byte, now time.Time) authResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch a.state {
	case authAuthenticate:
	case authComplete:
		// KafkaApis.handleSaslAuthenticateRequest: the connection stays.
		return authResult{code: kerr.IllegalSaslState.Code, msg: "SaslAuthenticate request received after successful authentication"}
	case authHandshake:
		// Kafka closes without an answer; the error says why first.
		a.failLocked()
		return authResult{code: kerr.IllegalSaslState.Code, msg: "SaslAuthenticate request received before SaslHandshake"}
	default:
		return authResult{code: kerr.IllegalSaslState.Code, msg: "authentication failed"}
	}
	return a.stepAndCompleteLocked(token, now)
}

// stepAndCompleteLocked runs one step of the exchange and, when it is
// done, completes the authentication.
func (a *authenticator) stepAndCompleteLocked(token []byte, now time.Time) authResult {
	reply, done, err := a.stepLocked(token)
	if err != nil {
		a.failLocked()
		code := kerr.SaslAuthenticationFailed.Code
		if errors.Is(err, sasl.ErrIllegalState) {
			code = kerr.IllegalSaslState.Code
		}
		return authResult{code: code, msg: a.failureMessage(err)}
	}
	if !done {
		return authResult{reply: reply}
	}
	principal := a.session.Principal()
	if a.reauth && principal != a.principal {
		a.failLocked()
		return authResult{code: kerr.SaslAuthenticationFailed.Code,
			msg: fmt.Sprintf("Cannot change principals during re-authentication from %s: %s", a.principal, principal)}
	}
	maxReauth := a.cfg.MaxReauth
	if d, ok := a.cfg.MaxReauthBy[a.mech.Name()]; ok {
		maxReauth = d
	}
	var lifetime time.Duration
	exp := a.session.Expiry()
	switch {
	case !exp.IsZero() && maxReauth > 0:
		lifetime = min(exp.Sub(now), maxReauth)
	case !exp.IsZero():
		lifetime = exp.Sub(now)
	default:
		lifetime = maxReauth
	}
	a.expiry = time.Time{}
	if lifetime != 0 || !exp.IsZero() {
		lifetime = max(lifetime, 0)
		a.expiry = now.Add(lifetime)
	}
	a.metrics.Authenticated(a.listener, a.mech.Name(), a.reauth)
	a.principal, a.state, a.reauth, a.session = principal, authComplete, false, nil
	a.raw.Store(false)
	a.open.Store(true)
	return authResult{reply: reply, lifetime: lifetime}
}

// rawStep runs one step of an exchange begun by SaslHandshake v0: token is
// a whole frame, and the reply goes back as one (SaslServerAuthenticator
// without its SaslAuthenticate headers). A failure closes the connection
// without an answer, as Kafka does for such a client.
func (a *authenticator) rawStep(token []byte, now time.Time) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state != authAuthenticate {
		a.failLocked()
		return nil, fmt.Errorf("%w: a raw SASL token outside an exchange", errUnauthenticated)
	}
	// The frame may be a pooled buffer, given back when the request
	// ends; a mechanism may keep what it was given (SCRAM's first message).
	res := a.stepAndCompleteLocked(bytes.Clone(token), now)
	if res.code != 0 {
		return nil, fmt.Errorf("%w: %s (SaslHandshake v0 exchange)", errUnauthenticated, res.msg)
	}
	return res.reply, nil
}

// stepLocked runs the mechanism; a panic in it fails the exchange, not the
// broker.
func (a *authenticator) stepLocked(token []byte) (reply []byte, done bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			reply, done, err = nil, false, fmt.Errorf("%w: %s mechanism failed: %v", sasl.ErrAuthenticationFailed, a.mech.Name(), p)
		}
	}()
	return a.session.Step(token)
}

// failureMessage is the error text for the client: the mechanism's, without
// the sentinel's prefix, or Kafka's generic text for an error that is
// neither sentinel (it could say too much).
func (a *authenticator) failureMessage(err error) string {
	msg := err.Error()
	for _, s := range []error{sasl.ErrAuthenticationFailed, sasl.ErrIllegalState} {
		if errors.Is(err, s) {
			if rest, ok := strings.CutPrefix(msg, s.Error()+": "); ok {
				return rest
			}
			return msg
		}
	}
	return fmt.Sprintf("Authentication failed during %s due to invalid credentials with SASL mechanism %s", a.whatLocked(), a.mech.Name())
}

func (a *authenticator) whatLocked() string {
	if a.reauth {
		return "re-authentication"
	}
	return "authentication"
}

// failLocked ends the exchange for good and counts it.
func (a *authenticator) failLocked() {
	if a.state == authFailed {
		return
	}
	name := ""
	if a.mech != nil {
		name = a.mech.Name()
	}
	a.metrics.AuthenticationFailed(a.listener, name, a.reauth)
	a.state = authFailed
	a.open.Store(false)
	a.raw.Store(false)
}

// frameRefused counts a request refused before it was read (larger than
// sasl.server.max.receive.size before authentication). Loop only.
func (a *authenticator) frameRefused() {
	a.mu.Lock()
	a.failLocked()
	a.mu.Unlock()
}

// authKey carries the connection's authenticator to the SASL handlers.
var authKey = &struct{ name string }{"wire.authenticator"}

func withAuth(ctx context.Context, a *authenticator) context.Context {
	return context.WithValue(ctx, authKey, a)
}

// authFrom is the request's connection's authenticator; nil on a listener
// without SASL.
func authFrom(ctx context.Context) *authenticator {
	a, _ := ctx.Value(authKey).(*authenticator)
	return a
}

// rawFrame frames a reply of a SaslHandshake v0 exchange: its size, then
// the mechanism's bytes, with no response header.
func rawFrame(pool *bufferPool, reply []byte) []byte {
	buf := pool.get(4 + len(reply))[:0]
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(reply)))
	return append(buf, reply...)
}

// delayFailure waits out connection.failed.authentication.delay.ms before
// a failed authentication's answer and close, or until the connection
// closes. On the request's goroutine; the connection reads nothing more
// meanwhile (it is gated, and failed).
func (a *authenticator) delayFailure(ctx context.Context) {
	if a.cfg.FailedAuthDelay <= 0 {
		return
	}
	t := time.NewTimer(a.cfg.FailedAuthDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
