package mirrorit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/wire/tlstest"
)

// TestMirrorFromSecuredSource mirrors from a source that takes only
// SASL_SSL (TLS, then SCRAM-SHA-512; franz-go's kfake) to a destination
// whose every listener is SSL with client certificates required, as a
// mirror from a managed Kafka to a secured Strait runs:
//   - the mirror's source connection is made from its stored configs
//     (security.protocol, sasl.mechanism, sasl.jaas.config, the source's CA
//     in ssl.truststore.certificates), and the copy is byte-identical;
//   - the secret is never echoed: DescribeConfigs on the mirror resource
//     answers sasl.jaas.config with a null value marked sensitive, and
//     nothing DescribeConfigs or DescribeMirrors says holds the password;
//   - the topic fails over (stop) and takes writes on the destination.
func TestMirrorFromSecuredSource(t *testing.T) {
	t.Parallel()
	const password = "mirror-Secret-4711"
	fake := func(t *testing.T) (*tlstest.CA, *side) {
		ca := tlstest.NewCA(t, "strait-mirror-ca")
		src := startFake(t, "source", 1,
			kfake.TLS(tlstest.ServerConfig(ca.Issue(t, "source", "localhost", "127.0.0.1"), nil)),
			kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "mirror", password))
		src.clientOpts = []kgo.Opt{
			kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil)),
			kgo.SASL(scram.Auth{User: "mirror", Pass: password}.AsSha512Mechanism()),
		}
		return ca, src
	}
	t.Run("kfake", func(t *testing.T) {
		t.Parallel()
		ca, src := fake(t)
		testMirrorFromSecuredSource(t, ca, src, password, false)
	})
	t.Run("kfake to three nodes", func(t *testing.T) {
		t.Parallel()
		ca, src := fake(t)
		testMirrorFromSecuredSource(t, ca, src, password, true)
	})
	// A Strait source whose only client listener is SASL_SSL with PLAIN
	// (its own inter-broker login and the test's admin) and SCRAM-SHA-512
	// (the mirror's user, created with AlterUserScramCredentials).
	t.Run("strait", func(t *testing.T) {
		t.Parallel()
		ca := tlstest.NewCA(t, "strait-mirror-ca")
		admin := []kgo.Opt{
			kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil)),
			kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism()),
		}
		src := startOne(t, "source", brokertest.WithClientOpts(admin...), brokertest.WithConfig(append(
			tlstest.BrokerSSLConfig(t, t.TempDir(), ca, ca.Issue(t, "source", "localhost", "127.0.0.1")),
			"listener.security.protocol.map=PLAINTEXT:SASL_SSL,CONTROLLER:PLAINTEXT",
			"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512",
			"sasl.mechanism.inter.broker.protocol=PLAIN",
			`listener.name.plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";`,
		)...))
		src.clientOpts = admin
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := src.admin(t).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "mirror", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: password}})
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			t.Fatalf("create the mirror's SCRAM user on the source: %v", err)
		}
		testMirrorFromSecuredSource(t, ca, src, password, false)
	})
}

// testMirrorFromSecuredSource mirrors from src, which takes SASL_SSL with
// SCRAM-SHA-512 for the user "mirror" and a certificate issued by ca, to
// an all-SSL destination of one node or three (whose test network dials
// every link, the mirror's TLS over it).
func testMirrorFromSecuredSource(t *testing.T, ca *tlstest.CA, src *side, password string, threeNodes bool) {
	dir := t.TempDir()
	operator := kgo.DialTLSConfig(tlstest.ClientConfig(ca, ca.Issue(t, "operator")))
	start := startOne
	if threeNodes {
		start = startThree
	}
	dst := start(t, "destination",
		brokertest.WithConfig(tlstest.AllSSLMutualConfig(t, dir, ca)...),
		brokertest.WithClientOpts(operator))
	dst.clientOpts = []kgo.Opt{operator}

	p := newPair(t, 2*time.Minute, src, dst)
	const topic, partitions = "secured", 3
	p.src.createTopic(t, p.ctx, topic, partitions)
	prod := produceInBackground(t, p.ctx, p.src, topic, partitions, producerKinds()[2], "secured")
	p.createMirror(
		"security.protocol=SASL_SSL",
		"sasl.mechanism=SCRAM-SHA-512",
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="mirror" password="`+password+`";`,
		"ssl.truststore.certificates="+string(ca.PEM),
	)

	// The stored configs are described without the secret.
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = admin.MirrorConfigResource, mirrorName
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(p.ctx, p.dst.client(t))
	if err != nil {
		t.Fatalf("describe the mirror's configs: %v", err)
	}
	if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("describe the mirror's configs: %+v", resp.Resources)
	}
	described := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range resp.Resources[0].Configs {
		described[c.Name] = c
	}
	if c, ok := described["sasl.jaas.config"]; !ok || c.Value != nil || !c.IsSensitive {
		t.Errorf("sasl.jaas.config described as %+v (present %v), want a null value marked sensitive", c, ok)
	}
	if c := described["security.protocol"]; c.Value == nil || *c.Value != "SASL_SSL" || c.IsSensitive {
		t.Errorf("security.protocol described as %+v, want SASL_SSL", c)
	}
	if s := fmt.Sprintf("%+v", resp); strings.Contains(s, password) {
		t.Errorf("DescribeConfigs on the mirror echoes the password")
	}

	p.start(topic)
	p.waitFor(30*time.Second, "the destination copies", func() string {
		if n := sum(p.dst.endOffsets(t, p.ctx, topic)); n < 300 {
			return fmt.Sprintf("destination holds %d records", n)
		}
		return ""
	})
	acked := prod.stop()
	p.waitMirroring(topic, partitions, 30*time.Second)
	r := p.checkIdentity(topic, int64(len(acked)))
	ds, err := p.mirror.DescribeMirrors(p.ctx, mirrorName)
	if err != nil {
		t.Fatalf("describe mirrors: %v", err)
	}
	if s := fmt.Sprintf("%+v", ds); strings.Contains(s, password) {
		t.Errorf("DescribeMirrors echoes the password")
	}

	p.stop(topic)
	p.waitState(topic, "STOPPED", partitions, 30*time.Second)
	dprod := p.dst.client(t, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err := dprod.ProduceSync(p.ctx, &kgo.Record{Value: []byte("after failover")}).FirstErr(); err != nil {
		t.Fatalf("produce on the destination after the stop: %v", err)
	}
	t.Logf("counts: source acked=%d; identity %v", len(acked), r)
}
