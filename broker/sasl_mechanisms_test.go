package broker

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/jaas"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/wire/sasl/oauthbearer"
)

// TestListenerMechanisms: every mechanism of sasl.enabled.mechanisms is
// built, in order (PLAIN from the listener's JAAS users, SCRAM over the
// metadata image, OAUTHBEARER over its JWKS, which must be closed); a
// PLAIN listener without users and an OAUTHBEARER one without its
// configuration refuse to start with an error that says why.
func TestListenerMechanisms(t *testing.T) {
	users, err := jaas.Parse(`org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";`)
	if err != nil {
		t.Fatal(err)
	}
	noUsers, err := jaas.Parse(`org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";`)
	if err != nil {
		t.Fatal(err)
	}
	key := "sasl.enabled.mechanisms"
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwks, []byte(`{"keys":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	oauth, err := oauthbearer.ParseConfig("SASL", map[string]string{
		"listener.name.sasl.oauthbearer.sasl.server.callback.handler.class": oauthbearer.ValidatorCallbackHandler,
		"listener.name.sasl.oauthbearer.sasl.jaas.config":                   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;",
		"sasl.oauthbearer.jwks.endpoint.url":                                "file://" + jwks,
	})
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"}
	deps := saslDeps{image: func() *raftmeta.Image { return nil }, logger: slog.New(slog.DiscardHandler), clock: clock.Real{}}
	ms, closers, err := listenerMechanisms("SASL", &config.SASL{Mechanisms: all, MechanismsKey: key, JAAS: map[string]jaas.Config{"PLAIN": users}, OAuth: &oauth}, deps)
	if err != nil || len(ms) != len(all) || len(closers) != 1 {
		t.Fatalf("%v: %v, %d closers, %v", all, ms, len(closers), err)
	}
	for i, m := range ms {
		if m.Name() != all[i] {
			t.Errorf("mechanism %d is %s, want %s", i, m.Name(), all[i])
		}
	}
	if err := closers[0].Close(); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		name string
		s    config.SASL
		want string
	}{
		{"no JAAS", config.SASL{Mechanisms: []string{"PLAIN"}}, "listener.name.sasl.plain.sasl.jaas.config is not set"},
		{"no users", config.SASL{Mechanisms: []string{"PLAIN"}, JAAS: map[string]jaas.Config{"PLAIN": noUsers}}, "has no user_<name>"},
		{"OAUTHBEARER", config.SASL{Mechanisms: []string{"OAUTHBEARER"}}, "enables OAUTHBEARER without its sasl.oauthbearer.* configuration"},
	} {
		tc.s.MechanismsKey = key
		if _, _, err := listenerMechanisms("SASL", &tc.s, deps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
