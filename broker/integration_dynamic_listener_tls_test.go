package broker_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/wire/tlstest"
)

// servedLeaf is the certificate a new TLS connection to addr is served.
func servedLeaf(t *testing.T, addr string, cfg *tls.Config) []byte {
	t.Helper()
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatalf("TLS dial %s: %v", addr, err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].Raw
}

// TestDynamicListenerKeystore: a listener's certificate rotates without a
// restart, as Kafka's dynamic SSL update: IncrementalAlterConfigs sets
// listener.name.ssl.ssl.keystore.location on broker 1 to a new keystore;
// a new TLS connection is served the new certificate while a client
// connected before keeps producing on its connection. A keystore that does
// not load is refused with INVALID_CONFIG naming the key and the reason,
// and the listener keeps its certificate. After a restart the listener
// serves the rotated certificate from the start.
func TestDynamicListenerKeystore(t *testing.T) {
	ca := tlstest.NewCA(t, "strait-test-ca")
	dir := t.TempDir()
	first := ca.Issue(t, "broker-first")
	sets := append(tlstest.BrokerSSLConfig(t, dir, ca, first),
		"listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT")
	b := brokertest.Start(t, brokertest.WithConfig(sets...))
	adm := b.Admin(t)
	ctx := testCtx(t, 90*time.Second)
	sslAddr := b.Node().Addrs()["SSL"]
	clientCfg := tlstest.ClientConfig(ca, nil)
	if got := servedLeaf(t, sslAddr, clientCfg); !bytes.Equal(got, first.TLS.Certificate[0]) {
		t.Fatal("the SSL listener does not serve the static keystore's certificate")
	}
	createTopic(t, adm, "rotate", 1)
	old := b.Client(t, kgo.SeedBrokers(sslAddr), kgo.DialTLSConfig(clientCfg), kgo.DefaultProduceTopic("rotate"))
	produceSync(t, old, &kgo.Record{Value: []byte("before")})

	second := ca.Issue(t, "broker-second")
	path := tlstest.WriteKeystore(t, dir, "rotated.pem", second)
	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("listener.name.ssl.ssl.keystore.location", path)}, 1)
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("rotate the SSL listener's keystore: %v", err)
	}
	if got := describedConfig(t, adm, true, "1", "listener.name.ssl.ssl.keystore.location"); got != path+" (DYNAMIC_BROKER_CONFIG)" {
		t.Fatalf("listener.name.ssl.ssl.keystore.location described as %s", got)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !bytes.Equal(servedLeaf(t, sslAddr, clientCfg), second.TLS.Certificate[0]) {
		if time.Now().After(deadline) {
			t.Fatal("a new TLS connection is still served the old certificate 20 s after the rotation")
		}
		time.Sleep(50 * time.Millisecond)
	}
	produceSync(t, old, &kgo.Record{Value: []byte("after")}) // its connection kept its session
	if logs := b.Logs(); strings.Contains(logs, "keys=listener.name.ssl.ssl.keystore.location") {
		t.Fatalf("the applied keystore was logged as ignored:\n%s", logs)
	}

	for _, bad := range []struct{ key, value, reason string }{
		{"listener.name.ssl.ssl.keystore.location", dir + "/missing.pem", "no such file"},
		{"listener.name.ssl.ssl.keystore.location", tlstest.WriteFile(t, dir, "ca-only.pem", ca.PEM), "no PEM PRIVATE KEY"},
		{"listener.name.ssl.ssl.key.password", "secret", "not encrypted"},
	} {
		rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set(bad.key, bad.value)}, 1)
		err = alterErr(t, rs, err)
		if !errors.Is(err, kerr.InvalidConfig) || !strings.Contains(rs[0].ErrMessage, bad.key) || !strings.Contains(rs[0].ErrMessage, bad.reason) {
			t.Errorf("%s=%s: %v %q, want INVALID_CONFIG naming the key and %q", bad.key, bad.value, err, rs[0].ErrMessage, bad.reason)
		}
	}
	if got := describedConfig(t, adm, true, "1", "listener.name.ssl.ssl.keystore.location"); got != path+" (DYNAMIC_BROKER_CONFIG)" {
		t.Fatalf("after refused alterations the keystore is described as %s", got)
	}
	if !bytes.Equal(servedLeaf(t, sslAddr, clientCfg), second.TLS.Certificate[0]) {
		t.Fatal("a refused keystore changed the served certificate")
	}

	// A restart on the same directory and ports (brokertest's Restart
	// would keep only its own listeners').
	addrs := b.Node().Addrs()
	b.Stop(t)
	b = brokertest.Start(t, brokertest.WithDir(b.Dir()), brokertest.WithConfig(append(sets,
		"listeners=PLAINTEXT://"+addrs["PLAINTEXT"]+",SSL://"+sslAddr+",CONTROLLER://"+b.ControllerAddr())...))
	if !bytes.Equal(servedLeaf(t, b.Node().Addrs()["SSL"], clientCfg), second.TLS.Certificate[0]) {
		t.Fatal("after a restart the SSL listener serves the static certificate, not the rotated one")
	}
}
