package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/strait-io/strait/wire/tlstest"
)

// TestSASLBinaryKcatAndFranzGo starts the strait binary with its client
// and inter-broker listener on SASL_SSL with PLAIN (users from the
// listener's JAAS config, the broker logging in to itself as admin) and
// has librdkafka (kcat) and franz-go produce and consume over it; a wrong
// password gets SASL_AUTHENTICATION_FAILED from both, the broker keeps
// serving, and no password shows in its output.
func TestSASLBinaryKcatAndFranzGo(t *testing.T) {
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) { testSASLBinary(t, mech) })
	}
}

// testSASLBinary is TestSASLBinaryKcatAndFranzGo for one mechanism. PLAIN
// takes its users from the listener's JAAS config; SCRAM-SHA-512 from the
// metadata log, where `strait serve --add-scram` puts the broker's own
// credential (it logs in to itself with it, as the inter-broker client)
// and alice's on the first start.
func testSASLBinary(t *testing.T, mech string) {
	kcatBin(t)
	ca := tlstest.NewCA(t, "strait-e2e-ca")
	dir := t.TempDir()
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`
	login := kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())
	wrong := kgo.SASL(plain.Auth{User: "alice", Pass: "wrong"}.AsMechanism())
	if mech == "SCRAM-SHA-512" {
		jaas = `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";`
		login = kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism())
		wrong = kgo.SASL(scram.Auth{User: "alice", Pass: "wrong"}.AsSha512Mechanism())
	}
	n := newNode(t,
		"listener.security.protocol.map=PLAINTEXT:SASL_SSL,CONTROLLER:PLAINTEXT",
		"ssl.keystore.type=PEM",
		"ssl.keystore.location="+tlstest.WriteKeystore(t, dir, "broker.pem", ca.Issue(t, "broker", "localhost", "127.0.0.1")),
		"sasl.enabled.mechanisms="+mech,
		"sasl.mechanism.inter.broker.protocol="+mech,
		"listener.name.plaintext."+strings.ToLower(mech)+".sasl.jaas.config="+jaas,
	)
	if mech == "SCRAM-SHA-512" {
		n.flags = []string{"--add-scram", "SCRAM-SHA-512=[name=admin,password=admin-secret]",
			"--add-scram", "SCRAM-SHA-512=[name=alice,password=alice-secret]"}
	}
	p := n.start()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	caFile := tlstest.WriteFile(t, dir, "client-ca.pem", ca.PEM)
	saslArgs := func(pass string) []string {
		return []string{"-b", n.kafkaAddr(), "-X", "security.protocol=sasl_ssl", "-X", "ssl.ca.location=" + caFile,
			"-X", "sasl.mechanisms=" + mech, "-X", "sasl.username=alice", "-X", "sasl.password=" + pass}
	}

	tlsOpt := kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil))
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.kafkaAddr()), tlsOpt, login)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "sasl-e2e"); err != nil {
		t.Fatalf("create topic over SASL_SSL: %v", err)
	}

	kcat(t, ctx, keyedLines("sasl", 0, 500), append([]string{"-P", "-t", "sasl-e2e", "-K:", "-X", "acks=all"}, saslArgs("alice-secret")...)...)
	msgs := decodeKcatMessages(t, kcat(t, ctx, "", append([]string{"-C", "-t", "sasl-e2e", "-o", "beginning", "-e", "-q", "-J"}, saslArgs("alice-secret")...)...))
	if len(msgs) != 500 {
		t.Fatalf("kcat consumed %d messages over SASL_SSL, want 500", len(msgs))
	}
	out, err := exec.CommandContext(ctx, kcatBin(t), append([]string{"-L", "-m", "2"}, saslArgs("wrong")...)...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Authentication failed") {
		t.Fatalf("kcat with a wrong password: %v\n%s", err, out)
	}

	bad, err := kgo.NewClient(kgo.SeedBrokers(n.kafkaAddr()), tlsOpt, kgo.RequestRetries(0), wrong)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if err := bad.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("franz-go with a wrong password: %v", err)
	}

	var rs []*kgo.Record
	for i := range 100 {
		rs = append(rs, &kgo.Record{Topic: "sasl-e2e", Value: fmt.Appendf(nil, "franz-%d", i)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("franz-go produce over SASL_SSL: %v", err)
	}
	offs, err := adm.ListEndOffsets(ctx, "sasl-e2e")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	offs.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != 600 {
		t.Fatalf("end offsets sum to %d, want 600", total)
	}
	if all := p.stderr() + p.stdoutString(); strings.Contains(all, "alice-secret") || strings.Contains(all, "admin-secret") {
		t.Fatal("a password shows in the broker's output")
	}
}
