package ctl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
	"github.com/strait-io/strait/wire/tlstest"
)

func TestMain(m *testing.M) { os.Exit(ctltest.Main(m)) }

// TestMirrorTakesTheClientConnection: `strait mirror` reaches a
// destination whose only client listener is SASL_SSL (PLAIN) through the
// connection every client command takes: the current profile (tls.ca,
// user, pass), -X over it, --command-config with Kafka's property names
// and --bootstrap-server as an alias of --brokers. A wrong password and a
// plaintext connection each fail with one line and exit 1.
func TestMirrorTakesTheClientConnection(t *testing.T) {
	ca := tlstest.NewCA(t, "strait-cli-ca")
	dir := t.TempDir()
	b := brokertest.Start(t,
		brokertest.WithClientOpts(kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil)), kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism())),
		brokertest.WithConfig(append(tlstest.BrokerSSLConfig(t, dir, ca, ca.Issue(t, "broker", "localhost", "127.0.0.1")),
			"listener.security.protocol.map=PLAINTEXT:SASL_SSL,CONTROLLER:PLAINTEXT",
			"sasl.enabled.mechanisms=PLAIN",
			"sasl.mechanism.inter.broker.protocol=PLAIN",
			`listener.name.plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";`,
		)...))
	caFile := tlstest.WriteFile(t, dir, "client-ca.pem", ca.PEM)
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir()}
	run := func(args ...string) ctltest.Result {
		t.Helper()
		return ctltest.RunEnv(t, env, "", args...)
	}
	must := func(args ...string) ctltest.Result {
		t.Helper()
		r := run(args...)
		if r.Code != 0 {
			t.Fatalf("%s", r)
		}
		return r
	}
	failsWith := func(want string, args ...string) {
		t.Helper()
		r := run(args...)
		if r.Code != 1 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(r.Stderr, "strait mirror list: ") || !strings.Contains(r.Stderr, want) {
			t.Fatalf("want exit 1 and one line containing %q\n%s", want, r)
		}
	}

	must("profile", "create", "secure", "--brokers", b.Addr(), "-X", "tls.ca="+caFile,
		"-X", "sasl.mechanism=PLAIN", "-X", "user=admin", "-X", "pass=admin-secret", "--use")
	if r := must("mirror", "create", "m1", "--source-bootstrap", "127.0.0.1:1"); !strings.Contains(r.Stdout, "m1") {
		t.Fatalf("create: %s", r)
	}
	if r := must("mirror", "list"); !strings.Contains(r.Stdout, "m1") {
		t.Fatalf("list with the current profile: %s", r)
	}
	// The connection flags go after the command too, and override the
	// profile (-X over it, as every client command).
	failsWith("SASL_AUTHENTICATION_FAILED", "mirror", "list", "-X", "pass=wrong")
	failsWith("SASL_AUTHENTICATION_FAILED", "mirror", "-X", "pass=wrong", "list")

	// Kafka's tools' way: --command-config with Kafka's property names, no
	// profile file, --bootstrap-server.
	props := filepath.Join(dir, "client.properties")
	if err := os.WriteFile(props, []byte("security.protocol=SASL_SSL\nssl.truststore.location="+caFile+
		"\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"admin-secret\";\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(dir, "none.yaml")
	if r := must("mirror", "--bootstrap-server", b.Addr(), "--command-config", props, "--config-file", none, "list", "--json"); !strings.Contains(r.Stdout, `"m1"`) {
		t.Fatalf("list --command-config: %s", r)
	}
	// Without the profile, plaintext to a TLS listener gets no answer.
	failsWith("", "mirror", "list", "--bootstrap-server", b.Addr(), "--config-file", none, "--timeout", "3s")
}
