package broker_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/wire/tlstest"
)

// jwtIssuer signs ES256 tokens with one key and publishes it as a JWKS,
// as an identity provider does.
type jwtIssuer struct {
	kid string
	key *ecdsa.PrivateKey
}

func newJWTIssuer(t *testing.T, kid string) *jwtIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &jwtIssuer{kid: kid, key: key}
}

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwks is the issuer's public key as a JWKS document.
func (i *jwtIssuer) jwks(t *testing.T) []byte {
	t.Helper()
	pad := func(b []byte) []byte { return append(make([]byte, 32-len(b)), b...) }
	doc, err := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "kid": i.kid, "use": "sig", "alg": "ES256",
		"x": b64url(pad(i.key.X.Bytes())), "y": b64url(pad(i.key.Y.Bytes())),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// writeJWKS writes the issuer's JWKS to dir and returns its path.
func (i *jwtIssuer) writeJWKS(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(p, i.jwks(t), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// token is a signed JWT for sub that expires at exp.
func (i *jwtIssuer) token(t *testing.T, sub string, exp time.Time) string {
	t.Helper()
	header, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT", "kid": i.kid})
	claims, _ := json.Marshal(map[string]any{"sub": sub, "iat": time.Now().Add(-time.Minute).Unix(), "exp": exp.Unix()})
	signing := b64url(header) + "." + b64url(claims)
	sum := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, i.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signing + "." + b64url(sig)
}

func oauthLogin(token string) kgo.Opt {
	return kgo.SASL(oauth.Oauth(func(context.Context) (oauth.Auth, error) { return oauth.Auth{Token: token}, nil }))
}

// loginFails expects a client logging in with m to be refused with
// SASL_AUTHENTICATION_FAILED.
func loginFails(t *testing.T, addr string, m sasl.Mechanism, what string, opts ...kgo.Opt) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.SASL(m), kgo.RequestRetries(0),
		kgo.RetryTimeout(time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("%s: %v, want SASL_AUTHENTICATION_FAILED", what, err)
	}
}

// TestSASLScramAndOAuthBearer: a SASL_SSL listener enabling SCRAM-SHA-256
// and SCRAM-SHA-512 over the credentials of the metadata log, and one
// enabling OAUTHBEARER over a JWKS file. A user created with
// AlterUserScramCredentials logs in with franz-go's SCRAM client for the
// hash it was created for (and not the other), produces and consumes; a
// wrong password and an unknown user are refused; a deleted credential
// stops working. A signed JWT logs in as its subject; an expired one,
// one signed by another key and one for an unknown key id are refused.
func TestSASLScramAndOAuthBearer(t *testing.T) {
	ca := tlstest.NewCA(t, "strait-test-ca")
	dir := t.TempDir()
	idp := newJWTIssuer(t, "idp-1")
	jwks := idp.writeJWKS(t, dir)
	sets := append(tlstest.BrokerSSLConfig(t, dir, ca, ca.Issue(t, "broker", "localhost", "127.0.0.1")),
		"listeners=PLAINTEXT://127.0.0.1:0,SCRAM://127.0.0.1:0,OAUTH://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SCRAM:SASL_SSL,OAUTH:SASL_SSL,CONTROLLER:PLAINTEXT",
		"listener.name.scram.sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER",
		"listener.name.oauth.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;",
		"listener.name.oauth.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"sasl.oauthbearer.jwks.endpoint.url=file://"+jwks,
	)
	b := brokertest.Start(t, brokertest.WithConfig(sets...))
	addrs := b.Node().Addrs()
	adm := b.Admin(t)
	ctx := testCtx(t, time.Minute)
	createTopic(t, adm, "secure", 1)
	tlsOpt := kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil))

	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 8192, Password: "alice-secret"},
		{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "bob-secret"},
	})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("create SCRAM credentials: %v", err)
	}

	alice512 := scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()
	cl := b.Client(t, kgo.SeedBrokers(addrs["SCRAM"]), tlsOpt, kgo.SASL(alice512), kgo.DefaultProduceTopic("secure"))
	var rs []*kgo.Record
	for i := range 50 {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "scram-%02d", i)})
	}
	produceSync(t, cl, rs...)
	bob := b.Client(t, kgo.SeedBrokers(addrs["SCRAM"]), tlsOpt, kgo.SASL(scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha256Mechanism()))
	if err := bob.Ping(ctx); err != nil {
		t.Fatalf("bob with SCRAM-SHA-256: %v", err)
	}
	loginFails(t, addrs["SCRAM"], scram.Auth{User: "alice", Pass: "wrong"}.AsSha512Mechanism(), "alice with a wrong password", tlsOpt)
	loginFails(t, addrs["SCRAM"], scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism(), "alice with SCRAM-SHA-256 (her credential is SHA-512)", tlsOpt)
	loginFails(t, addrs["SCRAM"], scram.Auth{User: "mallory", Pass: "alice-secret"}.AsSha512Mechanism(), "an unknown user", tlsOpt)

	// OAUTHBEARER: a token from the JWKS's key logs in and reads.
	good := idp.token(t, "carol", time.Now().Add(time.Hour))
	got := consumeN(t, b, 50, []string{"secure"}, kgo.SeedBrokers(addrs["OAUTH"]), tlsOpt, oauthLogin(good))
	for i, r := range got {
		if want := fmt.Sprintf("scram-%02d", i); string(r.Value) != want {
			t.Fatalf("record %d over OAUTHBEARER: %q, want %q", i, r.Value, want)
		}
	}
	other := newJWTIssuer(t, "idp-1") // same kid, another key
	unknownKid := newJWTIssuer(t, "idp-2")
	for what, token := range map[string]string{
		"an expired token":              idp.token(t, "carol", time.Now().Add(-time.Hour)),
		"a token signed by another key": other.token(t, "carol", time.Now().Add(time.Hour)),
		"a token of an unknown key id":  unknownKid.token(t, "carol", time.Now().Add(time.Hour)),
		"garbage":                       "not.a.jwt",
	} {
		loginFails(t, addrs["OAUTH"], oauth.Oauth(func(context.Context) (oauth.Auth, error) { return oauth.Auth{Token: token}, nil }), what, tlsOpt)
	}

	// A deleted credential no longer logs in.
	del, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "alice", Mechanism: kadm.ScramSha512}}, nil)
	if err == nil {
		err = del.Error()
	}
	if err != nil {
		t.Fatalf("delete alice's credential: %v", err)
	}
	loginFails(t, addrs["SCRAM"], alice512, "alice after her credential was deleted", tlsOpt)
}

// TestSASLPrincipalsAreAuthorized: with the StandardAuthorizer on, the
// principal a SASL login gives (User:<name> for SCRAM, User:<sub> for
// OAUTHBEARER) is what the ACLs are checked against: alice (SCRAM-SHA-512)
// and carol (a JWT) are refused a produce with TOPIC_AUTHORIZATION_FAILED
// until an ACL lets each write; the brokers' own PLAIN login (admin) is a
// super user.
func TestSASLPrincipalsAreAuthorized(t *testing.T) {
	ca := tlstest.NewCA(t, "strait-test-ca")
	dir := t.TempDir()
	idp := newJWTIssuer(t, "idp-1")
	jwks := idp.writeJWKS(t, dir)
	tlsOpt := kgo.DialTLSConfig(tlstest.ClientConfig(ca, nil))
	admin := []kgo.Opt{tlsOpt, plainLogin("admin", "admin-secret")}
	b := brokertest.Start(t, brokertest.WithClientOpts(admin...), brokertest.WithConfig(append(
		tlstest.BrokerSSLConfig(t, dir, ca, ca.Issue(t, "broker", "localhost", "127.0.0.1")),
		"listener.security.protocol.map=PLAINTEXT:SASL_SSL,CONTROLLER:PLAINTEXT",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512,OAUTHBEARER",
		"sasl.mechanism.inter.broker.protocol=PLAIN",
		"listener.name.plaintext.plain.sasl.jaas.config="+plainUsers,
		"listener.name.plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;",
		"listener.name.plaintext.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"sasl.oauthbearer.jwks.endpoint.url=file://"+jwks,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin",
	)...))
	adm := b.Admin(t)
	ctx := testCtx(t, time.Minute)
	createTopic(t, adm, "guarded", 1)
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "alice-secret"}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("create alice's credential: %v", err)
	}

	logins := map[string]kgo.Opt{
		"User:alice": kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()),
		"User:carol": oauthLogin(idp.token(t, "carol", time.Now().Add(time.Hour))),
	}
	produce := func(login kgo.Opt) error {
		// Not b.Client: its options log in as admin.
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), tlsOpt, login, kgo.DefaultProduceTopic("guarded"),
			kgo.RecordRetries(0), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		return cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr()
	}
	for principal, login := range logins {
		if err := produce(login); !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Fatalf("%s without an ACL: %v, want TOPIC_AUTHORIZATION_FAILED", principal, err)
		}
		acl := kadm.NewACLs().Allow(principal).AllowHosts("*").Topics("guarded").
			Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral)
		created, err := adm.CreateACLs(ctx, acl)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range created {
			if r.Err != nil {
				t.Fatalf("create the ACL of %s: %v", principal, r.Err)
			}
		}
		if err := produce(login); err != nil {
			t.Fatalf("%s with WRITE allowed: %v", principal, err)
		}
	}
}
