package broker_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/wire/tlstest"
)

// produceOverTLSFails expects a client with cfg to get nothing from addr.
func produceOverTLSFails(t *testing.T, addr string, cfg *tls.Config) error {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTLSConfig(cfg), kgo.RequestRetries(0),
		kgo.RetryTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err = cl.Ping(ctx)
	if err == nil {
		t.Fatalf("a client with %d certificates got an answer over SSL", len(cfg.Certificates))
	}
	return err
}

// TestSSLListenerMutualTLS: a broker with a PLAINTEXT listener and an SSL
// listener requiring client certificates (ssl.client.auth=required set as
// a listener override, listener.name.ssl.ssl.client.auth). franz-go with
// a trusted client certificate produces and consumes over SSL; without a
// certificate, or with one from another CA, the handshake fails; the
// broker keeps serving both listeners.
func TestSSLListenerMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "strait-test-ca")
	dir := t.TempDir()
	sets := append(tlstest.BrokerSSLConfig(t, dir, ca, ca.Issue(t, "broker")),
		"listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT",
		"listener.name.ssl.ssl.client.auth=required")
	b := brokertest.Start(t, brokertest.WithConfig(sets...))
	sslAddr := b.Node().Addrs()["SSL"]
	if sslAddr == "" {
		t.Fatalf("no SSL listener: %v", b.Node().Addrs())
	}

	createTopic(t, b.Admin(t), "secure", 1)
	clientCfg := tlstest.ClientConfig(ca, ca.Issue(t, "client"))
	cl := b.Client(t, kgo.SeedBrokers(sslAddr), kgo.DialTLSConfig(clientCfg), kgo.DefaultProduceTopic("secure"))
	var rs []*kgo.Record
	for i := range 100 {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "v%03d", i)})
	}
	produceSync(t, cl, rs...)

	// The alerts Go's TLS server sends: certificate_required (TLS 1.3)
	// without a certificate, unknown_ca for one from another CA.
	if err := produceOverTLSFails(t, sslAddr, tlstest.ClientConfig(ca, nil)); !strings.Contains(err.Error(), "certificate required") {
		t.Errorf("no client certificate: %v, want the certificate_required alert", err)
	}
	other := tlstest.NewCA(t, "other-ca")
	if err := produceOverTLSFails(t, sslAddr, tlstest.ClientConfig(ca, other.Issue(t, "mallory"))); !strings.Contains(err.Error(), "unknown certificate authority") {
		t.Errorf("untrusted client certificate: %v, want the unknown_ca alert", err)
	}
	var certErr *tls.CertificateVerificationError
	if err := produceOverTLSFails(t, sslAddr, tlstest.ClientConfig(other, ca.Issue(t, "client"))); !errors.As(err, &certErr) {
		t.Errorf("a client not trusting the broker's CA: %v, want a certificate verification error", err)
	}

	got := consumeN(t, b, 100, []string{"secure"}, kgo.SeedBrokers(sslAddr), kgo.DialTLSConfig(clientCfg))
	for i, r := range got {
		if want := fmt.Sprintf("v%03d", i); string(r.Value) != want {
			t.Fatalf("record %d: %q, want %q", i, r.Value, want)
		}
	}
	// The plaintext listener is unaffected.
	produceSync(t, b.Client(t, kgo.DefaultProduceTopic("secure")), &kgo.Record{Value: []byte("plain")})
}

// TestSSLClusterAcksAll: three nodes whose client, inter-broker and
// controller listeners are all SSL with required client certificates:
// raft, the controller channel and the follower fetchers dial TLS with
// the node's own keystore and truststore (host names verified), and an
// acks=all producer's records are all read back.
func TestSSLClusterAcksAll(t *testing.T) {
	ca := tlstest.NewCA(t, "strait-test-ca")
	dir := t.TempDir()
	sets := append(tlstest.BrokerSSLConfig(t, dir, ca, ca.Issue(t, "broker", "localhost", "127.0.0.1")),
		"listener.security.protocol.map=PLAINTEXT:SSL,CONTROLLER:SSL",
		"ssl.client.auth=required")
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig(sets...))
	clientCfg := tlstest.ClientConfig(ca, ca.Issue(t, "client"))
	tlsOpt := kgo.DialTLSConfig(clientCfg)

	createReplicatedTopic(t, c.Admin(t, tlsOpt), "replicated", 3, 3, "min.insync.replicas", "2")
	c.WaitForISR(t, "replicated", 3, 30*time.Second)
	// A bounded delivery timeout, which kgo honours only without
	// idempotence: with followers that cannot fetch, the ISR shrinks
	// below min.insync.replicas and kgo would retry for ever.
	cl := c.Client(t, tlsOpt, kgo.DefaultProduceTopic("replicated"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(), kgo.RecordDeliveryTimeout(20*time.Second))
	const n = 300
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%7), Value: fmt.Appendf(nil, "v%d", i)})
	}
	produceSync(t, cl, rs...)

	cons := c.Client(t, tlsOpt, kgo.ConsumeTopics("replicated"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := pollN(testCtx(t, 30*time.Second), t, cons, n)
	seen := map[string]bool{}
	for _, r := range got {
		seen[string(r.Value)] = true
	}
	if len(seen) != n {
		t.Fatalf("read %d distinct records of %d", len(seen), n)
	}
}
