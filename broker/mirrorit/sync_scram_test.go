package mirrorit

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker"
	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/wire/tlstest"
)

// TestSyncScramCredentials: a mirror from a Strait source serving only
// SSL with client certificates (the mirror connects with
// security.protocol=SSL and a client certificate) copies the source's
// SCRAM users to a PLAINTEXT destination once mirror.scram.sync.enable is
// set:
//   - with the sync disabled nothing is copied;
//   - enabled, the users appear with the source's very salts, keys and
//     iterations (DescribeUserScramCredentials shows them), and their
//     passwords log in on the destination (its SCRAM mechanism);
//   - a password change and a deletion on the source propagate;
//   - an excluded source user is not copied, and a destination-only user
//     the rules exclude is never touched;
//   - DescribeScramCredentialSecrets on the destination's PLAINTEXT
//     listener is refused with CLUSTER_AUTHORIZATION_FAILED.
func TestSyncScramCredentials(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "strait-scram-ca")
	operator := kgo.DialTLSConfig(tlstest.ClientConfig(ca, ca.Issue(t, "operator")))
	src := startOne(t, "source",
		brokertest.WithConfig(tlstest.AllSSLMutualConfig(t, t.TempDir(), ca)...),
		brokertest.WithClientOpts(operator))
	src.clientOpts = []kgo.Opt{operator}
	p := newPair(t, 60*time.Second, src, startOne(t, "destination", brokertest.WithMetrics()))
	srcAdm, dstAdm := p.src.admin(t), p.dst.admin(t)
	dstNode := p.dst.one.Node()

	upsert(t, p.ctx, srcAdm, "alice", kadm.ScramSha512, 8192, "alice-1")
	upsert(t, p.ctx, srcAdm, "alice", kadm.ScramSha256, 4096, "alice-256")
	upsert(t, p.ctx, srcAdm, "bob", kadm.ScramSha256, 4096, "bob-1")
	upsert(t, p.ctx, srcAdm, "skip.me", kadm.ScramSha512, 4096, "skip")
	upsert(t, p.ctx, dstAdm, "local", kadm.ScramSha512, 4096, "local-admin")

	mirrorCert := ca.Issue(t, "mirror")
	p.createMirror(syncInterval,
		"security.protocol=SSL",
		"ssl.truststore.certificates="+string(ca.PEM),
		"ssl.keystore.certificate.chain="+string(mirrorCert.CertPEM),
		"ssl.keystore.key="+string(mirrorCert.KeyPEM),
		"mirror.scram.users.exclude=local,skip\\..*",
	)
	// Disabled (the default): a few rounds copy nothing.
	p.waitSyncRounds(3)
	if got := describeUsers(t, p.ctx, dstAdm); got != "local:SCRAM-SHA-512/4096" {
		t.Fatalf("with the sync disabled the destination has %s", got)
	}

	alterMirrorConfig(t, p, raftmeta.MirrorScramSyncEnableConfig, "true")
	const want = "alice:SCRAM-SHA-256/4096 alice:SCRAM-SHA-512/8192 bob:SCRAM-SHA-256/4096 local:SCRAM-SHA-512/4096"
	p.waitFor(10*time.Second, "the source's users on the destination", func() string {
		if got := describeUsers(t, p.ctx, dstAdm); got != want {
			return "the destination has: " + got
		}
		return ""
	})
	sameCredentials(t, p.src.one.Node().Image(), dstNode.Image(), "alice", "bob")
	for _, l := range []struct {
		user, pass string
		mech       kadm.ScramMechanism
	}{{"alice", "alice-1", kadm.ScramSha512}, {"alice", "alice-256", kadm.ScramSha256}, {"bob", "bob-1", kadm.ScramSha256}, {"local", "local-admin", kadm.ScramSha512}} {
		if err := scramLogin(t, dstNode, l.mech, l.user, l.pass); err != nil {
			t.Errorf("%s (%s) cannot log in on the destination: %v", l.user, l.mech, err)
		}
	}

	// A password change and a deletion on the source.
	upsert(t, p.ctx, srcAdm, "alice", kadm.ScramSha512, 8192, "alice-2")
	del, err := srcAdm.AlterUserSCRAMs(p.ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha256}}, nil)
	if err != nil || del.AllFailed() || del.Error() != nil {
		t.Fatalf("delete bob on the source: %v %v", err, del)
	}
	p.waitFor(10*time.Second, "the password change and the deletion on the destination", func() string {
		if got := describeUsers(t, p.ctx, dstAdm); got != "alice:SCRAM-SHA-256/4096 alice:SCRAM-SHA-512/8192 local:SCRAM-SHA-512/4096" {
			return "the destination has: " + got
		}
		if scramLogin(t, dstNode, kadm.ScramSha512, "alice", "alice-2") != nil {
			return "alice's new password does not log in yet"
		}
		return ""
	})
	if scramLogin(t, dstNode, kadm.ScramSha512, "alice", "alice-1") == nil {
		t.Error("alice's old password still logs in on the destination")
	}
	sameCredentials(t, p.src.one.Node().Image(), dstNode.Image(), "alice")
	if err := scramLogin(t, dstNode, kadm.ScramSha512, "local", "local-admin"); err != nil {
		t.Errorf("the destination's own user was touched: %v", err)
	}

	// The export is refused on a PLAINTEXT listener.
	resp, err := mirrormsg.NewPtrDescribeScramCredentialSecretsRequest().RequestWith(p.ctx, p.dst.client(t, kgo.MaxVersions(mirrormsg.MaxVersions(nil))))
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(resp.Credentials) != 0 {
		t.Fatalf("DescribeScramCredentialSecrets on PLAINTEXT: %v", resp)
	}

	if ds, err := p.mirror.DescribeMirrors(p.ctx, mirrorName); err != nil || len(ds) != 1 || ds[0].ScramSyncError != "" {
		t.Errorf("DescribeMirrors: %+v %v, want no ScramSyncError", ds, err)
	}
	m := mirrorMetrics(t, p.ctx, p.dst.one.MetricsAddr())
	if n, ok := m["strait_mirror_scram_sync_errors_total"]; !ok || n != 0 {
		t.Errorf("strait_mirror_scram_sync_errors_total %v (exported %t), want 0", n, ok)
	}
	// alice twice, bob; bob's deletion.
	if up, del := m["strait_mirror_scram_credentials_upserted_total"], m["strait_mirror_scram_credentials_deleted_total"]; up != 4 || del != 1 {
		t.Errorf("credentials upserted %v, deleted %v; want 4 and 1", up, del)
	}
}

// TestSyncScramFromKafkaSource: an Apache Kafka source (kfake) has no API
// that exports SCRAM credentials; the mirror says so once, in its logs and
// its error counter, and does not ask again every round; DescribeMirrors
// shows it.
func TestSyncScramFromKafkaSource(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "strait-scram-ca")
	src := startFake(t, "source", 1, kfake.TLS(tlstest.ServerConfig(ca.Issue(t, "source", "localhost", "127.0.0.1"), nil)))
	src.clientOpts = []kgo.Opt{kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil))}
	p := newPair(t, 60*time.Second, src, startOne(t, "destination", brokertest.WithMetrics()))
	p.createMirror(syncInterval, "security.protocol=SSL", "ssl.truststore.certificates="+string(ca.PEM),
		raftmeta.MirrorScramSyncEnableConfig+"=true")
	const msg = "the source cannot export SCRAM credentials"
	p.waitFor(10*time.Second, "five sync rounds", func() string {
		if n := mirrorMetrics(t, p.ctx, p.dst.one.MetricsAddr())["strait_mirror_sync_rounds_total"]; n < 5 {
			return fmt.Sprintf("%v rounds", n)
		}
		return ""
	})
	if n := strings.Count(p.dst.one.Logs(), msg); n != 1 {
		t.Errorf("%q logged %d times, want once", msg, n)
	}
	if n := mirrorMetrics(t, p.ctx, p.dst.one.MetricsAddr())["strait_mirror_scram_sync_errors_total"]; n != 1 {
		t.Errorf("strait_mirror_scram_sync_errors_total %v, want 1", n)
	}
	ds, err := p.mirror.DescribeMirrors(p.ctx, mirrorName)
	if err != nil || len(ds) != 1 || !strings.Contains(ds[0].ScramSyncError, msg) {
		t.Errorf("DescribeMirrors: %+v %v, want ScramSyncError %q", ds, err, msg)
	}
}

func upsert(t *testing.T, ctx context.Context, adm *kadm.Client, user string, mech kadm.ScramMechanism, iterations int32, pass string) {
	t.Helper()
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: mech, Iterations: iterations, Password: pass}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("upsert %s %s: %v", user, mech, err)
	}
}

// describeUsers is DescribeUserScramCredentials: "user:MECH/iterations",
// sorted.
func describeUsers(t *testing.T, ctx context.Context, adm *kadm.Client) string {
	t.Helper()
	described, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for user, d := range described {
		for _, ci := range d.CredInfos {
			out = append(out, fmt.Sprintf("%s:%s/%d", user, ci.Mechanism, ci.Iterations))
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// sameCredentials fails unless both images hold the users' credentials
// with the same salt, keys and iterations.
func sameCredentials(t *testing.T, src, dst *raftmeta.Image, users ...string) {
	t.Helper()
	for mech, byUser := range src.Scram {
		for _, u := range users {
			s, ok := byUser[u]
			if !ok {
				continue
			}
			d, ok := dst.ScramCredential(mech, u)
			if !ok || !bytes.Equal(s.Salt, d.Salt) || !bytes.Equal(s.StoredKey, d.StoredKey) || !bytes.Equal(s.ServerKey, d.ServerKey) || s.Iterations != d.Iterations {
				t.Errorf("%s's mechanism %d credential differs on the destination (present %t)", u, mech, ok)
			}
		}
	}
}

// alterMirrorConfig sets one config of the mirror (IncrementalAlterConfigs
// on the MIRROR resource).
func alterMirrorConfig(t *testing.T, p *pair, key, value string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = admin.MirrorConfigResource, mirrorName
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value, c.Op = key, kmsg.StringPtr(value), kmsg.IncrementalAlterConfigOpSet
	r.Configs = append(r.Configs, c)
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(p.ctx, p.dst.client(t))
	if err == nil && (len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0) {
		err = fmt.Errorf("%+v", resp.Resources)
	}
	if err != nil {
		t.Fatalf("set %s=%s on the mirror: %v", key, value, err)
	}
}

// scramLogin logs in on the node's SCRAM mechanism (what its SASL
// listener would check) and returns the exchange's error.
func scramLogin(t *testing.T, n *broker.Node, mech kadm.ScramMechanism, user, pass string) error {
	t.Helper()
	_, err := brokertest.ScramLogin(n, mech, user, pass)
	return err
}
