package broker

import (
	"fmt"
	"strings"
	"time"

	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/wire"
	"github.com/strait-io/strait/wire/sasl"
	"github.com/strait-io/strait/wire/sasl/plain"
)

// listenerSASL builds a SASL listener's wire settings from its config:
// the mechanisms of sasl.enabled.mechanisms (listenerMechanisms),
// sasl.server.max.receive.size, connections.max.reauth.ms (and its
// per-mechanism overrides) and connection.failed.authentication.delay.ms.
func listenerSASL(listener string, s *config.SASL) (*wire.SASL, error) {
	mechs, err := listenerMechanisms(listener, s)
	if err != nil {
		return nil, err
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
	return out, nil
}

// listenerMechanisms is the one place a listener's SASL mechanisms are
// built from its sasl.enabled.mechanisms, in order: each from what it
// needs of the broker (PLAIN: the users of the listener's JAAS config).
//
// SCRAM-SHA-256/512 (wire/sasl/scram, over the metadata image's
// credentials as sasl.ScramCredentials) and OAUTHBEARER
// (wire/sasl/oauthbearer) are built elsewhere and plugged in here; until
// they are, a listener enabling them refuses to start with an error that
// says so.
func listenerMechanisms(listener string, s *config.SASL) ([]sasl.Mechanism, error) {
	var out []sasl.Mechanism
	for _, name := range s.Mechanisms {
		switch name {
		case plain.Name:
			m, err := plainMechanism(listener, s)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		case "SCRAM-SHA-256", "SCRAM-SHA-512":
			return nil, fmt.Errorf("listener %s: %s enables %s, which this build of Strait does not serve yet (SCRAM lands separately); enable PLAIN for now", listener, s.MechanismsKey, name)
		case "OAUTHBEARER":
			return nil, fmt.Errorf("listener %s: %s enables OAUTHBEARER, which this build of Strait does not serve yet (it lands separately); enable PLAIN for now", listener, s.MechanismsKey)
		default:
			return nil, fmt.Errorf("listener %s: %s: unknown SASL mechanism %s", listener, s.MechanismsKey, name)
		}
	}
	return out, nil
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
