package config

import (
	"slices"
	"strings"
	"testing"
)

const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

// saslBase is a configuration with a SASL_PLAINTEXT listener named SASL.
func saslBase(extra map[string]string) map[string]string {
	m := map[string]string{
		"listeners":                      "PLAINTEXT://127.0.0.1:9092,SASL://127.0.0.1:9094,CONTROLLER://127.0.0.1:9093",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func TestSASLListenerConfig(t *testing.T) {
	c, err := New(saslBase(map[string]string{
		"sasl.enabled.mechanisms":                            "GSSAPI",
		"listener.name.sasl.sasl.enabled.mechanisms":         "plain",
		"listener.name.sasl.plain.sasl.jaas.config":          plainJAAS,
		"sasl.server.max.receive.size":                       "1000",
		"connections.max.reauth.ms":                          "1500",
		"connection.failed.authentication.delay.ms":          "50",
		"listener.name.sasl.plain.connections.max.reauth.ms": "3000",
	}))
	if err != nil {
		t.Fatal(err)
	}
	s := c.SASL["SASL"]
	if s == nil || len(c.SASL) != 1 || !slices.Equal(s.Mechanisms, []string{"PLAIN"}) || s.MaxReceiveSize != 1000 || s.MaxReauthMs != 1500 || s.FailedAuthDelayMs != 50 {
		t.Fatalf("SASL %+v", s)
	}
	if s.MaxReauthMsBy["PLAIN"] != 3000 {
		t.Fatalf("per-mechanism connections.max.reauth.ms %v", s.MaxReauthMsBy)
	}
	if s.JAAS["PLAIN"].Options["user_alice"] != "alice-secret" {
		t.Fatalf("JAAS %v", s.JAAS)
	}
	for _, k := range []string{"listener.name.sasl.plain.sasl.jaas.config", "sasl.server.max.receive.size", "connections.max.reauth.ms",
		"sasl.enabled.mechanisms", "listener.name.sasl.plain.connections.max.reauth.ms", "connection.failed.authentication.delay.ms"} {
		if slices.Contains(c.Ignored, k) {
			t.Errorf("%s is listed as ignored", k)
		}
	}
	if c.InterBrokerSASL != nil {
		t.Fatalf("inter-broker SASL %v on a PLAINTEXT inter-broker listener", c.InterBrokerSASL)
	}
	// Defaults: Kafka's 524288 and no re-authentication.
	c, err = New(saslBase(map[string]string{"sasl.enabled.mechanisms": "PLAIN", "listener.name.sasl.plain.sasl.jaas.config": plainJAAS}))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.SASL["SASL"]; s.MaxReceiveSize != 524288 || s.MaxReauthMs != 0 || s.FailedAuthDelayMs != 100 {
		t.Fatalf("defaults %+v", s)
	}
}

func TestSASLInterBroker(t *testing.T) {
	base := map[string]string{
		"inter.broker.listener.name":                "SASL",
		"sasl.enabled.mechanisms":                   "PLAIN",
		"listener.name.sasl.plain.sasl.jaas.config": plainJAAS,
		"sasl.mechanism.inter.broker.protocol":      "PLAIN",
	}
	c, err := New(saslBase(base))
	if err != nil {
		t.Fatal(err)
	}
	if ib := c.InterBrokerSASL; ib == nil || *ib != (InterBrokerSASL{Mechanism: "PLAIN", Username: "admin", Password: "admin-secret"}) {
		t.Fatalf("inter-broker SASL %v", c.InterBrokerSASL)
	}
	if s := c.InterBrokerSASL.String(); strings.Contains(s, "secret") {
		t.Fatalf("String shows the password: %s", s)
	}
	noUser := saslBase(base)
	noUser["listener.name.sasl.plain.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";`
	if _, err := New(noUser); err == nil || !strings.Contains(err.Error(), "needs username and password") {
		t.Fatalf("no inter-broker credentials: %v", err)
	}
	gssapi := saslBase(base)
	delete(gssapi, "sasl.mechanism.inter.broker.protocol") // Kafka's default GSSAPI
	if _, err := New(gssapi); err == nil || !strings.Contains(err.Error(), "sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms") {
		t.Fatalf("inter-broker GSSAPI: %v", err)
	}
}

func TestSASLConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra map[string]string
		want  string
	}{
		{"default GSSAPI", map[string]string{}, "sasl.enabled.mechanisms includes GSSAPI (Kafka's default when the key is not set), but Strait has no Kerberos"},
		{"listener GSSAPI", map[string]string{"listener.name.sasl.sasl.enabled.mechanisms": "PLAIN,GSSAPI"}, "listener.name.sasl.sasl.enabled.mechanisms includes GSSAPI"},
		{"unknown", map[string]string{"sasl.enabled.mechanisms": "PLAIN,DIGEST-MD5"}, "unknown SASL mechanism DIGEST-MD5"},
		{"empty", map[string]string{"sasl.enabled.mechanisms": " , "}, "enables no SASL mechanism"},
		{"bad JAAS", map[string]string{"sasl.enabled.mechanisms": "PLAIN", "listener.name.sasl.plain.sasl.jaas.config": `Module required user_a="secret-value"`}, "listener.name.sasl.plain.sasl.jaas.config"},
		{"max receive", map[string]string{"sasl.enabled.mechanisms": "PLAIN", "sasl.server.max.receive.size": "-1"}, "sasl.server.max.receive.size"},
		{"failed delay", map[string]string{"sasl.enabled.mechanisms": "PLAIN", "connection.failed.authentication.delay.ms": "5000",
			"connections.max.idle.ms": "5000"}, "should always be less than connections.max.idle.ms"},
		{"controller SASL", map[string]string{"sasl.enabled.mechanisms": "PLAIN",
			"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT,CONTROLLER:SASL_SSL"}, "use SSL with ssl.client.auth=required on the controller listener"},
	} {
		_, err := New(saslBase(tc.extra))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows a secret: %v", tc.name, err)
		}
	}
}
