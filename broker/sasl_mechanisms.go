package broker

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/wire"
	"github.com/strait-io/strait/wire/sasl"
	"github.com/strait-io/strait/wire/sasl/oauthbearer"
	"github.com/strait-io/strait/wire/sasl/plain"
)

// saslDeps is what a listener's SASL mechanisms take from the node.
type saslDeps struct {
	// image is the node's newest metadata image (SCRAM credentials).
	image  func() *raftmeta.Image
	logger *slog.Logger
	clock  clock.Clock
	// check builds nothing that runs: OAUTHBEARER's config is checked but
	// its JWKS is not read (Start checks every listener before opening
	// anything).
	check bool
}

// listenerSASL builds a SASL listener's wire settings from its config:
// the mechanisms of sasl.enabled.mechanisms (listenerMechanisms),
// sasl.server.max.receive.size, connections.max.reauth.ms (and its
// per-mechanism overrides) and connection.failed.authentication.delay.ms.
// closers are what must be closed when the node stops (OAUTHBEARER's JWKS
// refreshing).
func listenerSASL(listener string, s *config.SASL, deps saslDeps) (_ *wire.SASL, closers []io.Closer, _ error) {
	mechs, closers, err := listenerMechanisms(listener, s, deps)
	if err != nil {
		return nil, nil, err
	}
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	out := &wire.SASL{
		Mechanisms:      mechs,
		MaxReceiveSize:  s.MaxReceiveSize,
		MaxReauth:       ms(s.MaxReauthMs),
		FailedAuthDelay: ms(s.FailedAuthDelayMs),
	}
	for m, n := range s.MaxReauthMsBy {
		if out.MaxReauthBy == nil {
			out.MaxReauthBy = map[string]time.Duration{}
		}
		out.MaxReauthBy[m] = ms(n)
	}
	return out, closers, nil
}

// listenerMechanisms is the one place a listener's SASL mechanisms are
// built from its sasl.enabled.mechanisms, in order, each from what it
// needs of the broker: PLAIN the users of the listener's JAAS config,
// SCRAM-SHA-256/512 the credentials of the metadata image
// (UserScramCredentialRecord), OAUTHBEARER the listener's JWKS.
func listenerMechanisms(listener string, s *config.SASL, deps saslDeps) (out []sasl.Mechanism, closers []io.Closer, err error) {
	defer func() {
		if err != nil {
			for _, c := range closers {
				_ = c.Close()
			}
			out, closers = nil, nil
		}
	}()
	for _, name := range s.Mechanisms {
		var m sasl.Mechanism
		switch name {
		case plain.Name:
			m, err = plainMechanism(listener, s)
		case "SCRAM-SHA-256", "SCRAM-SHA-512":
			m, err = scramMechanism(name, deps.image)
		case oauthbearer.Name:
			if s.OAuth == nil {
				return nil, nil, fmt.Errorf("listener %s enables OAUTHBEARER without its sasl.oauthbearer.* configuration", listener)
			}
			if deps.check {
				continue
			}
			var om *oauthbearer.Mechanism
			if om, err = oauthbearer.New(*s.OAuth, deps.logger.With("listener", listener, "sasl", name), deps.clock); err == nil {
				m = om
				closers = append(closers, om)
			}
		default:
			err = fmt.Errorf("listener %s: %s: unknown SASL mechanism %s", listener, s.MechanismsKey, name)
		}
		if err != nil {
			return nil, nil, err
		}
		out = append(out, m)
	}
	return out, closers, nil
}

// plainMechanism is PLAIN over the user_<name> options of the listener's
// listener.name.<l>.plain.sasl.jaas.config (Kafka's
// PlainServerCallbackHandler).
func plainMechanism(listener string, s *config.SASL) (sasl.Mechanism, error) {
	key := "listener.name." + strings.ToLower(listener) + ".plain.sasl.jaas.config"
	jc, ok := s.JAAS[plain.Name]
	if !ok {
		return nil, fmt.Errorf("listener %s enables PLAIN but %s is not set: its %s entry lists the users as user_<name>=\"<password>\" options", listener, key, plain.LoginModule)
	}
	users, err := plain.UsersFromJAAS(jc)
	if err != nil {
		return nil, fmt.Errorf("listener %s: %s: %w", listener, key, err)
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("listener %s: %s has no user_<name>=\"<password>\" option: no client could log in with PLAIN", listener, key)
	}
	return plain.New(users), nil
}
