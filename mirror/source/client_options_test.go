package source_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/storage"
)

// TestClientOptions: each security.protocol gives the options it needs,
// and unusable values fail without echoing secrets.
func TestClientOptions(t *testing.T) {
	t.Parallel()
	jaas := `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="s3cret";`
	for _, tc := range []struct {
		name    string
		configs map[string]string
		opts    int
		err     string
	}{
		{"default plaintext", map[string]string{"bootstrap.servers": "a:1"}, 0, ""},
		{"plaintext", map[string]string{"security.protocol": "plaintext"}, 0, ""},
		{"ssl", map[string]string{"security.protocol": "SSL", "ssl.enabled.protocols": "TLSv1.3"}, 1, ""},
		{"sasl scram", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas}, 1, ""},
		{"sasl_ssl plain", map[string]string{"security.protocol": "SASL_SSL", "sasl.jaas.config": strings.ReplaceAll(jaas,
			"scram.ScramLoginModule", "plain.PlainLoginModule")}, 2, ""},
		{"unknown protocol", map[string]string{"security.protocol": "KERBEROS"}, 0, "security.protocol"},
		{"no jaas", map[string]string{"security.protocol": "SASL_PLAINTEXT"}, 0, "sasl.jaas.config is missing"},
		{"bad mechanism", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI", "sasl.jaas.config": jaas}, 0, "sasl.mechanism"},
		{"bad jaas", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": `x required password="s3cret";`}, 0, "sasl.jaas.config"},
		{"bad truststore", map[string]string{"security.protocol": "SSL", "ssl.truststore.certificates": "not pem"}, 0, "ssl.truststore.certificates"},
		{"bad key pair", map[string]string{"security.protocol": "SSL", "ssl.keystore.key": "s3cret", "ssl.keystore.certificate.chain": "x"}, 0, "key pair"},
		{"bad protocol", map[string]string{"security.protocol": "SSL", "ssl.protocol": "TLSv1.2", "ssl.enabled.protocols": "TLSv1.3"}, 0, "ssl.protocol"},
		{"bad suite", map[string]string{"security.protocol": "SSL", "ssl.cipher.suites": "NOPE"}, 0, "ssl.cipher.suites"},
	} {
		opts, err := source.ClientOptions(tc.configs, nil)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.err)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("%s: error %v quotes the secret", tc.name, err)
		case err == nil && len(opts) != tc.opts:
			t.Errorf("%s: %d options, want %d", tc.name, len(opts), tc.opts)
		}
	}
	if got := source.BootstrapServers(map[string]string{"bootstrap.servers": " a:1, ,b:2 "}); strings.Join(got, "|") != "a:1|b:2" {
		t.Fatalf("BootstrapServers %q", got)
	}
}

// TestLastMirroredEpochNonStraitSource: kfake does not have
// ReadMirrorStates, so the LME is -1, with the source's log start offset.
func TestLastMirroredEpochNonStraitSource(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	kc := startKfake(t)
	kfakeTopic(t, kc, "lme", 2)
	produce(t, ctx, kc.ListenAddrs(), "lme", 2, 20)
	src, _ := newSource(t, kc.ListenAddrs())
	for p := range int32(2) {
		lme, start, err := src.LastMirroredEpoch(ctx, "lme", p)
		if err != nil || lme != -1 || start != 0 {
			t.Fatalf("partition %d: lme %d, log start %d, err %v; want -1, 0, nil", p, lme, start, err)
		}
	}
	if _, _, err := src.LastMirroredEpoch(ctx, "missing", 0); err == nil || !source.IsFatal(err) {
		t.Fatalf("missing topic: err %v, want a fatal source error", err)
	}
	if _, ok := src.Status(storage.TopicPartition{Topic: "lme", Partition: 0}); !ok {
		t.Fatalf("no status recorded for the partition asked")
	}
}
