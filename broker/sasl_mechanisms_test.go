package broker

import (
	"strings"
	"testing"

	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/wire/sasl/jaas"
)

// TestListenerMechanisms: PLAIN is built from the listener's JAAS users;
// a PLAIN listener without users, and the mechanisms that land separately,
// refuse to start with an error that says why.
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
	ms, err := listenerMechanisms("SASL", &config.SASL{Mechanisms: []string{"PLAIN"}, MechanismsKey: key, JAAS: map[string]jaas.Config{"PLAIN": users}})
	if err != nil || len(ms) != 1 || ms[0].Name() != "PLAIN" {
		t.Fatalf("PLAIN: %v %v", ms, err)
	}
	for _, tc := range []struct {
		name string
		s    config.SASL
		want string
	}{
		{"no JAAS", config.SASL{Mechanisms: []string{"PLAIN"}}, "listener.name.sasl.plain.sasl.jaas.config is not set"},
		{"no users", config.SASL{Mechanisms: []string{"PLAIN"}, JAAS: map[string]jaas.Config{"PLAIN": noUsers}}, "has no user_<name>"},
		{"SCRAM", config.SASL{Mechanisms: []string{"PLAIN", "SCRAM-SHA-512"}, JAAS: map[string]jaas.Config{"PLAIN": users}}, "enables SCRAM-SHA-512, which this build of Strait does not serve yet"},
		{"OAUTHBEARER", config.SASL{Mechanisms: []string{"OAUTHBEARER"}}, "enables OAUTHBEARER, which this build of Strait does not serve yet"},
	} {
		tc.s.MechanismsKey = key
		if _, err := listenerMechanisms("SASL", &tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
