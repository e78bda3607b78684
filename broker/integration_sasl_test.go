package broker_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/wire/tlstest"
)

// plainUsers is a PLAIN listener's JAAS config: the broker's own
// credentials (admin) and its users.
const plainUsers = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

func plainLogin(user, pass string) kgo.Opt {
	return kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism())
}

// saslFails expects a client logging in with PLAIN as user to be refused
// with SASL_AUTHENTICATION_FAILED.
func saslFails(t *testing.T, addr, user, pass string, opts ...kgo.Opt) {
	t.Helper()
	loginFails(t, addr, plain.Auth{User: user, Pass: pass}.AsMechanism(), fmt.Sprintf("%s with password %q", user, pass), opts...)
}

// TestSASLPlainListeners: one broker with a PLAINTEXT, a SASL_PLAINTEXT
// and a SASL_SSL listener enabling PLAIN from their JAAS configs. franz-go
// produces and consumes over both SASL listeners; a wrong password and an
// unknown user get SASL_AUTHENTICATION_FAILED, counted, and the broker
// keeps serving; the JAAS configs are sensitive in DescribeConfigs.
func TestSASLPlainListeners(t *testing.T) {
	ca := tlstest.NewCA(t, "strait-test-ca")
	dir := t.TempDir()
	sets := append(tlstest.BrokerSSLConfig(t, dir, ca, ca.Issue(t, "broker")),
		"listeners=PLAINTEXT://127.0.0.1:0,SASL://127.0.0.1:0,SASLSSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT,SASLSSL:SASL_SSL,CONTROLLER:PLAINTEXT",
		"sasl.enabled.mechanisms=PLAIN",
		"listener.name.sasl.plain.sasl.jaas.config="+plainUsers,
		"listener.name.saslssl.plain.sasl.jaas.config="+plainUsers)
	b := brokertest.Start(t, brokertest.WithConfig(sets...), brokertest.WithMetrics())
	addrs := b.Node().Addrs()
	createTopic(t, b.Admin(t), "secure", 1)

	tlsOpt := kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil))
	for _, l := range []struct {
		name string
		opts []kgo.Opt
	}{{"SASL", nil}, {"SASLSSL", []kgo.Opt{tlsOpt}}} {
		login := append([]kgo.Opt{kgo.SeedBrokers(addrs[l.name]), plainLogin("alice", "alice-secret")}, l.opts...)
		cl := b.Client(t, append(login, kgo.DefaultProduceTopic("secure"))...)
		var rs []*kgo.Record
		for i := range 50 {
			rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "%s-%02d", l.name, i)})
		}
		produceSync(t, cl, rs...)

		saslFails(t, addrs[l.name], "alice", "wrong", l.opts...)
		saslFails(t, addrs[l.name], "mallory", "alice-secret", l.opts...)
	}
	// Over SASL_SSL, and over SASL_PLAINTEXT, where Fetch may go out with
	// sendfile once the connection has authenticated.
	for _, opts := range [][]kgo.Opt{
		{kgo.SeedBrokers(addrs["SASLSSL"]), plainLogin("alice", "alice-secret"), tlsOpt},
		{kgo.SeedBrokers(addrs["SASL"]), plainLogin("alice", "alice-secret")},
	} {
		got := consumeN(t, b, 100, []string{"secure"}, opts...)
		for i, r := range got {
			want := fmt.Sprintf("SASL-%02d", i)
			if i >= 50 {
				want = fmt.Sprintf("SASLSSL-%02d", i-50)
			}
			if string(r.Value) != want {
				t.Fatalf("record %d: %q, want %q", i, r.Value, want)
			}
		}
	}
	body := scrape(t, b)
	for series, want := range map[string]float64{
		`strait_failed_authentication_total{listener="SASL",mechanism="PLAIN"}`:    2,
		`strait_failed_authentication_total{listener="SASLSSL",mechanism="PLAIN"}`: 2,
	} {
		if v, _ := metricValue(t, body, series); v != want {
			t.Errorf("%s = %v, want %v", series, v, want)
		}
	}
	if v, _ := metricValue(t, body, `strait_successful_authentication_total{listener="SASLSSL",mechanism="PLAIN"}`); v < 1 {
		t.Errorf("no successful authentication counted on SASLSSL")
	}

	// sasl.jaas.config is a password: DescribeConfigs gives no value.
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, fmt.Sprint(b.Node().ControllerID()) // a single combined node
	req.Resources = append(req.Resources, res)
	req.IncludeSynonyms = true
	resp, err := req.RequestWith(testCtx(t, 10*time.Second), b.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range resp.Resources {
		for _, c := range r.Configs {
			if c.Name != "listener.name.sasl.plain.sasl.jaas.config" {
				continue
			}
			found = true
			if c.Value != nil || !c.IsSensitive {
				t.Fatalf("%s: value %v sensitive %v", c.Name, c.Value, c.IsSensitive)
			}
			for _, s := range c.ConfigSynonyms {
				if s.Value != nil {
					t.Fatalf("%s: synonym %s shows a value", c.Name, s.Name)
				}
			}
		}
	}
	if !found {
		t.Fatal("DescribeConfigs does not list listener.name.sasl.plain.sasl.jaas.config")
	}
	if logs := b.Logs(); strings.Contains(logs, "alice-secret") || strings.Contains(logs, "admin-secret") {
		t.Fatal("a password shows in the broker's log")
	}
}

// TestSASLReauthenticationWhileProducing (KIP-368): with
// connections.max.reauth.ms=2500 a franz-go producer that runs for five
// seconds re-authenticates on its connection (counted by the broker, about
// every 1.5 s) and none of its records fails. (At 1500 franz-go, which
// renews at least a second early, re-authenticates half a second after
// each login, and Kafka's one-re-authentication-a-second rule, kept here,
// refuses every second one: the client then reconnects and logs in anew,
// still without losing a record.)
func TestSASLReauthenticationWhileProducing(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithMetrics(), brokertest.WithConfig(
		"listeners=PLAINTEXT://127.0.0.1:0,SASL://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
		"sasl.enabled.mechanisms=PLAIN",
		"listener.name.sasl.plain.sasl.jaas.config="+plainUsers,
		"connections.max.reauth.ms=2500"))
	createTopic(t, b.Admin(t), "reauth", 1)
	cl := b.Client(t, kgo.SeedBrokers(b.Node().Addrs()["SASL"]), plainLogin("alice", "alice-secret"),
		kgo.DefaultProduceTopic("reauth"))
	var produced, failed atomic.Int64
	var firstErr atomic.Value
	stop := time.Now().Add(5 * time.Second)
	for time.Now().Before(stop) {
		cl.Produce(context.Background(), &kgo.Record{Value: []byte("v")}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			produced.Add(1)
		})
		time.Sleep(5 * time.Millisecond)
	}
	if err := cl.Flush(testCtx(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	if failed.Load() != 0 {
		t.Fatalf("%d records failed (first: %v)", failed.Load(), firstErr.Load())
	}
	body := scrape(t, b)
	reauth, _ := metricValue(t, body, `strait_successful_reauthentication_total{listener="SASL",mechanism="PLAIN"}`)
	bad, _ := metricValue(t, body, `strait_failed_reauthentication_total{listener="SASL",mechanism="PLAIN"}`)
	if reauth < 2 || bad != 0 {
		t.Fatalf("%v re-authentications, %v failed; want at least 2 and none", reauth, bad)
	}
	auths, _ := metricValue(t, body, `strait_successful_authentication_total{listener="SASL",mechanism="PLAIN"}`)
	t.Logf("%d records in 5 s, %v authentications, %v re-authentications", produced.Load(), auths, reauth)
}

// TestSASLClusterAcksAll: three nodes whose inter-broker listener is
// SASL_SSL with PLAIN (sasl.mechanism.inter.broker.protocol=PLAIN, the
// broker logging in with its JAAS username and password): the follower
// fetchers and the intra-cluster clients authenticate, an acks=all
// producer's records are all read back, and a transaction across the
// nodes commits. The controller listener is SSL with required client
// certificates.
func TestSASLClusterAcksAll(t *testing.T) {
	ca := tlstest.NewCA(t, "strait-test-ca")
	dir := t.TempDir()
	sets := append(tlstest.BrokerSSLConfig(t, dir, ca, ca.Issue(t, "broker", "localhost", "127.0.0.1")),
		"listener.security.protocol.map=PLAINTEXT:SASL_SSL,CONTROLLER:SSL",
		"listener.name.controller.ssl.client.auth=required",
		"sasl.enabled.mechanisms=PLAIN",
		"sasl.mechanism.inter.broker.protocol=PLAIN",
		"listener.name.plaintext.plain.sasl.jaas.config="+plainUsers,
		"connections.max.reauth.ms=2000")
	login := []kgo.Opt{kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil)), plainLogin("alice", "alice-secret")}
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig(sets...), brokertest.WithClientOpts(login...))

	createReplicatedTopic(t, c.Admin(t), "replicated", 3, 3, "min.insync.replicas", "2")
	c.WaitForISR(t, "replicated", 3, 30*time.Second)
	cl := c.Client(t, kgo.DefaultProduceTopic("replicated"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(), kgo.RecordDeliveryTimeout(20*time.Second))
	const n = 300
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%7), Value: fmt.Appendf(nil, "v%d", i)})
	}
	produceSync(t, cl, rs[:n/2]...)
	// Past the 2 s session: the fetchers re-authenticated or were cut
	// off; either way acks=all must still complete.
	time.Sleep(2500 * time.Millisecond)
	produceSync(t, cl, rs[n/2:]...)

	cons := c.Client(t, kgo.ConsumeTopics("replicated"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := pollN(testCtx(t, 30*time.Second), t, cons, n)
	seen := map[string]bool{}
	for _, r := range got {
		seen[string(r.Value)] = true
	}
	if len(seen) != n {
		t.Fatalf("read %d distinct records of %d", len(seen), n)
	}

	// A transaction over the three partitions: the coordinator sends
	// WriteTxnMarkers to the other leaders with the intra-cluster kgo
	// client (peers), which must log in too, or read_committed sees
	// nothing.
	txn := c.Client(t, kgo.TransactionalID("sasl-txn"), kgo.DefaultProduceTopic("replicated"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(10*time.Second))
	ctx := testCtx(t, 30*time.Second)
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := txn.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 3), Value: fmt.Appendf(nil, "txn%d", i)}).FirstErr(); err != nil {
			t.Fatalf("transactional produce: %v", err)
		}
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit: %v", err)
	}
	committed := c.Client(t, kgo.ConsumeTopics("replicated"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	txnSeen := 0
	for _, r := range pollN(ctx, t, committed, n+30) {
		if strings.HasPrefix(string(r.Value), "txn") {
			txnSeen++
		}
	}
	if txnSeen != 30 {
		t.Fatalf("read_committed saw %d transactional records, want 30", txnSeen)
	}
}
