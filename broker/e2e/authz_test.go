package e2e

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/wire/tlstest"
)

// TestACLBinary starts the strait binary as a user would, with
// StandardAuthorizer enforcing ACLs on an SSL listener that requires
// client certificates. The admin (a super user) creates a topic; alice,
// with no ACL, is refused a produce with TOPIC_AUTHORIZATION_FAILED and
// kcat (librdkafka) as alice sees the topic as not authorized; an ALLOW
// WRITE ACL lets her franz-go producer through, and READ her kcat
// consumer.
func TestACLBinary(t *testing.T) {
	ca := tlstest.NewCA(t, "strait-e2e-ca")
	dir := t.TempDir()
	adminCert, aliceCert := ca.Issue(t, "admin"), ca.Issue(t, "alice")
	const alice = "User:CN=alice,O=Strait tests"
	n := newNode(t, append(tlstest.AllSSLMutualConfig(t, dir, ca),
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:CN=broker,O=Strait tests;User:CN=admin,O=Strait tests")...)
	n.start()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	client := func(leaf *tlstest.Leaf, opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(n.kafkaAddr()), kgo.DialTLSConfig(tlstest.ClientConfig(ca, leaf))}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	adm := kadm.NewClient(client(adminCert))
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "secured"); err != nil {
		t.Fatalf("the super user creating a topic: %v", err)
	}

	producer := client(aliceCert, kgo.DefaultProduceTopic("secured"), kgo.DisableIdempotentWrite(),
		kgo.RecordDeliveryTimeout(10*time.Second))
	err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte("denied")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice producing without an ACL: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	kcatArgs := []string{"-b", n.kafkaAddr(), "-X", "security.protocol=ssl",
		"-X", "ssl.ca.location=" + tlstest.WriteFile(t, dir, "client-ca.pem", ca.PEM),
		"-X", "ssl.certificate.location=" + tlstest.WriteFile(t, dir, "alice.pem", aliceCert.CertPEM),
		"-X", "ssl.key.location=" + tlstest.WriteFile(t, dir, "alice.key", aliceCert.KeyPEM)}
	_, kcatErr := exec.LookPath("kcat")
	if kcatErr == nil {
		out, _ := exec.CommandContext(ctx, "kcat", append([]string{"-L", "-t", "secured"}, kcatArgs...)...).CombinedOutput()
		if !strings.Contains(string(out), "Topic authorization failed") {
			t.Fatalf("kcat as alice listing the topic without an ACL:\n%s", out)
		}
	} else {
		t.Log("*** kcat is not installed: the librdkafka part is SKIPPED ***")
	}

	acls := kadm.NewACLs().Allow(alice).ResourcePatternType(kadm.ACLPatternLiteral).Topics("secured").
		Operations(kadm.OpWrite, kadm.OpRead)
	results, err := adm.CreateACLs(ctx, acls)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("CreateAcls: %v", r.Err)
		}
	}
	// The ACL is in the node's metadata once CreateAcls is answered on a
	// single node; kgo has the topic's error cached, so retry briefly.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err = producer.ProduceSync(ctx, &kgo.Record{Value: []byte("allowed")}).FirstErr()
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("alice producing with WRITE: %v", err)
	}
	if kcatErr == nil {
		msgs := decodeKcatMessages(t, kcat(t, ctx, "", append([]string{"-C", "-t", "secured", "-o", "beginning", "-e", "-q", "-J"}, kcatArgs...)...))
		if len(msgs) != 1 || msgs[0].Payload != "allowed" {
			t.Fatalf("kcat as alice with READ consumed %+v, want the one record", msgs)
		}
	}
}
