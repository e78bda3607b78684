package scram

import (
	"context"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	kscram "github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/strait-io/strait/raftmeta/scramcred"
	"github.com/strait-io/strait/wire/sasl"
)

// store is an in-memory sasl.ScramCredentials.
type store map[[2]string]sasl.ScramCredential

func (s store) ScramCredential(mechanism, user string) (sasl.ScramCredential, bool) {
	c, ok := s[[2]string{mechanism, user}]
	return c, ok
}

func (s store) add(t *testing.T, mechanism, user, password string, iterations int) {
	t.Helper()
	// 24 bytes, as kadm and the broker's unknown-user salt.
	salt := []byte(fmt.Sprintf("%-24.24s", "salt-of-"+user))
	sp, err := scramcred.SaltedPassword(mechanism, password, salt, iterations)
	if err != nil {
		t.Fatal(err)
	}
	stored, server, err := scramcred.Keys(mechanism, sp)
	if err != nil {
		t.Fatal(err)
	}
	s[[2]string{mechanism, user}] = sasl.ScramCredential{Salt: salt, StoredKey: stored, ServerKey: server, Iterations: iterations}
}

func newMech(t *testing.T, name string, creds store) *Mechanism {
	t.Helper()
	m, err := NewMechanism(name, creds, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// clientFor is franz-go's SCRAM client for user/pass on mechanism name.
func clientFor(name, user, pass, zid string) interface {
	Authenticate(context.Context, string) (kclientSession, []byte, error)
} {
	a := kscram.Auth{User: user, Pass: pass, Zid: zid}
	if name == scramcred.SHA256 {
		return wrap{a.AsSha256Mechanism()}
	}
	return wrap{a.AsSha512Mechanism()}
}

// exchange drives a franz-go client session against a server session until
// one side fails or both are done. It returns the server's error, the
// server-first message it sent, and the client's error.
func exchange(t *testing.T, m *Mechanism, user, pass, zid string) (srv sasl.Session, serverErr error, serverFirst string, clientErr error) {
	t.Helper()
	sess, tok, err := clientFor(m.Name(), user, pass, zid).Authenticate(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	srv = m.NewSession()
	for round := 0; ; round++ {
		reply, done, err := srv.Step(tok)
		if err != nil {
			return srv, err, serverFirst, nil
		}
		if round == 0 {
			serverFirst = string(reply)
		}
		cdone, next, cerr := sess.Challenge(reply)
		if cerr != nil {
			return srv, nil, serverFirst, cerr
		}
		if done || cdone {
			if done != cdone {
				t.Fatalf("server done %t, client done %t", done, cdone)
			}
			return srv, nil, serverFirst, nil
		}
		tok = next
	}
}

func TestScramFranzClient(t *testing.T) {
	for _, name := range []string{scramcred.SHA256, scramcred.SHA512} {
		t.Run(name, func(t *testing.T) {
			creds := store{}
			creds.add(t, name, "alice", "alice-secret", 4096)
			creds.add(t, name, "b,o=b", "bob-secret", 8192)
			m := newMech(t, name, creds)

			srv, serr, first, cerr := exchange(t, m, "alice", "alice-secret", "")
			if serr != nil || cerr != nil {
				t.Fatalf("good password: server %v, client %v", serr, cerr)
			}
			if p := srv.Principal(); p != "User:alice" {
				t.Errorf("principal %q", p)
			}
			if !srv.Expiry().IsZero() {
				t.Errorf("expiry %v", srv.Expiry())
			}
			if !strings.Contains(first, ",i=4096") {
				t.Errorf("server-first %q", first)
			}
			// A further token after the exchange is out of order.
			if _, _, err := srv.Step([]byte("n,,n=alice,r=abc")); !errors.Is(err, sasl.ErrIllegalState) {
				t.Errorf("token after completion: %v", err)
			}

			// A name with ',' and '=' travels escaped (=2C, =3D).
			srv, serr, _, cerr = exchange(t, m, "b,o=b", "bob-secret", "")
			if serr != nil || cerr != nil || srv.Principal() != "User:b,o=b" {
				t.Fatalf("escaped name: server %v, client %v, principal %q", serr, cerr, srv.Principal())
			}
			// An authorization id equal to the user is accepted.
			if _, serr, _, cerr = exchange(t, m, "alice", "alice-secret", "alice"); serr != nil || cerr != nil {
				t.Fatalf("authzid = user: server %v, client %v", serr, cerr)
			}
		})
	}
}

func TestScramRefusals(t *testing.T) {
	for _, name := range []string{scramcred.SHA256, scramcred.SHA512} {
		t.Run(name, func(t *testing.T) {
			creds := store{}
			creds.add(t, name, "alice", "alice-secret", 4096)
			m := newMech(t, name, creds)
			want := "Authentication failed during authentication due to invalid credentials with SASL mechanism " + name

			_, wrongErr, wrongFirst, _ := exchange(t, m, "alice", "wrong", "")
			if !errors.Is(wrongErr, sasl.ErrAuthenticationFailed) || wrongErr.Error() != want {
				t.Fatalf("wrong password: %v", wrongErr)
			}
			// An unknown user gets a server-first message of the same shape
			// and fails at the same step with the same text.
			_, unkErr, unkFirst, _ := exchange(t, m, "mallory", "x", "")
			if !errors.Is(unkErr, sasl.ErrAuthenticationFailed) || unkErr.Error() != want {
				t.Fatalf("unknown user: %v", unkErr)
			}
			if shape(wrongFirst) != shape(unkFirst) {
				t.Errorf("server-first of a known user %q, of an unknown %q", wrongFirst, unkFirst)
			}
			// The made-up salt is stable: probing twice does not tell.
			_, _, again, _ := exchange(t, m, "mallory", "y", "")
			if saltOf(again) != saltOf(unkFirst) {
				t.Errorf("unknown user's salt changed: %q then %q", saltOf(unkFirst), saltOf(again))
			}
			if _, _, other, _ := exchange(t, m, "trudy", "y", ""); saltOf(other) == saltOf(unkFirst) {
				t.Errorf("two unknown users share the salt %q", saltOf(other))
			}

			_, err, _, _ := exchange(t, m, "alice", "alice-secret", "bob")
			if !errors.Is(err, sasl.ErrAuthenticationFailed) || !strings.Contains(err.Error(), "authorization id") {
				t.Errorf("authzid of another user: %v", err)
			}
		})
	}
}

// shape blanks the values of a server-first message: r=,s=,i=.
func shape(serverFirst string) string {
	var out []string
	for _, kv := range strings.Split(serverFirst, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if k == "s" {
			b, _ := base64.StdEncoding.DecodeString(v)
			k += "/" + string(rune('0'+len(b)/10)) + string(rune('0'+len(b)%10))
		}
		if k == "i" {
			k += "/" + v
		}
		out = append(out, k)
	}
	return strings.Join(out, ",")
}

func saltOf(serverFirst string) string {
	for _, kv := range strings.Split(serverFirst, ",") {
		if v, ok := strings.CutPrefix(kv, "s="); ok {
			return v
		}
	}
	return ""
}

// TestScramNonceReplay replays a client-final message of a finished
// exchange into a new one, and changes the nonce of a fresh one: both fail.
func TestScramNonceReplay(t *testing.T) {
	creds := store{}
	creds.add(t, scramcred.SHA512, "alice", "alice-secret", 4096)
	m := newMech(t, scramcred.SHA512, creds)

	sess, first, err := clientFor(scramcred.SHA512, "alice", "alice-secret", "").Authenticate(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	s1 := m.NewSession()
	sf, _, err := s1.Step(first)
	if err != nil {
		t.Fatal(err)
	}
	_, final, err := sess.Challenge(sf)
	if err != nil {
		t.Fatal(err)
	}
	if _, done, err := s1.Step(final); err != nil || !done {
		t.Fatalf("first exchange: done %t, %v", done, err)
	}

	// The same client-first (same client nonce) starts a new exchange; the
	// recorded client-final carries the old server nonce.
	s2 := m.NewSession()
	if _, _, err := s2.Step(first); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s2.Step(final); !errors.Is(err, sasl.ErrAuthenticationFailed) {
		t.Fatalf("replayed client-final: %v", err)
	}

	// A client-final whose nonce was changed (a valid proof otherwise).
	sess, first, _ = clientFor(scramcred.SHA512, "alice", "alice-secret", "").Authenticate(context.Background(), "")
	s3 := m.NewSession()
	sf, _, err = s3.Step(first)
	if err != nil {
		t.Fatal(err)
	}
	_, final, _ = sess.Challenge(sf)
	changed := strings.Replace(string(final), ",r=", ",r=x", 1)
	if _, _, err := s3.Step([]byte(changed)); !errors.Is(err, sasl.ErrAuthenticationFailed) {
		t.Fatalf("changed nonce: %v", err)
	}
	// A failed exchange takes no more tokens.
	if _, _, err := s3.Step(final); !errors.Is(err, sasl.ErrIllegalState) {
		t.Fatalf("token after failure: %v", err)
	}
}

func TestScramMalformed(t *testing.T) {
	creds := store{}
	creds.add(t, scramcred.SHA256, "alice", "alice-secret", 4096)
	m := newMech(t, scramcred.SHA256, creds)
	for _, first := range []string{
		"",
		"n,,",
		"n,,n=alice",
		"n,,n=alice,r=",
		"n,,r=abc,n=alice",
		"n,,n=,r=abc",
		"n,,n=al=ice,r=abc",
		"n,,n=alice,r=a b",
		"n,,m=ext,n=alice,r=abc",
		"y,,n=alice,r=abc",
		"p=tls-unique,,n=alice,r=abc",
		"n,x=alice,n=alice,r=abc",
		"n,,n=alice,r=abc,=x",
		"n,,n=alice,r=abc,tokenauth=true",
		"n,,n=al\x00ice,r=abc",
		"n,,n=\xff,r=abc",
		"\x00\x01\x02",
	} {
		_, _, err := m.NewSession().Step([]byte(first))
		if !errors.Is(err, sasl.ErrAuthenticationFailed) {
			t.Errorf("client-first %q: %v", first, err)
		}
	}
	for _, final := range []func(nonce string) string{
		func(string) string { return "" },
		func(n string) string { return "c=biws,r=" + n },
		func(n string) string { return "c=biws,r=" + n + ",p=" },
		func(n string) string { return "c=biws,r=" + n + ",p=!!!" },
		func(n string) string { return "c=biws,r=" + n + ",p=AAAA" },
		func(n string) string { return "r=" + n + ",p=AAAA" },
		func(n string) string { return "c=eSws,r=" + n + ",p=AAAA" }, // "y,," binding
		func(n string) string { return ",p=AAAA" },
	} {
		s := m.NewSession()
		sf, _, err := s.Step([]byte("n,,n=alice,r=abc"))
		if err != nil {
			t.Fatal(err)
		}
		nonce := strings.TrimPrefix(strings.Split(string(sf), ",")[0], "r=")
		if _, _, err := s.Step([]byte(final(nonce))); !errors.Is(err, sasl.ErrAuthenticationFailed) {
			t.Errorf("client-final %q: %v", final(nonce), err)
		}
	}
}

// TestScramRFC7677Example replays the SCRAM-SHA-256 exchange of RFC 7677
// section 3 (user "user", password "pencil").
func TestScramRFC7677Example(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	sp, err := scramcred.SaltedPassword(scramcred.SHA256, "pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	stored, server, _ := scramcred.Keys(scramcred.SHA256, sp)
	creds := store{{scramcred.SHA256, "user"}: {Salt: salt, StoredKey: stored, ServerKey: server, Iterations: 4096}}
	m := newMech(t, scramcred.SHA256, creds)
	m.serverNonce = func() (string, error) { return "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", nil }
	s := m.NewSession()
	sf, _, err := s.Step([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"; string(sf) != want {
		t.Fatalf("server-first %q, want %q", sf, want)
	}
	final, done, err := s.Step([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	if err != nil || !done {
		t.Fatalf("client-final: done %t, %v", done, err)
	}
	if want := "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="; string(final) != want {
		t.Fatalf("server-final %q, want %q", final, want)
	}
	if s.Principal() != "User:user" {
		t.Errorf("principal %q", s.Principal())
	}
}

// TestScramLibrdkafkaNonce: librdkafka (kcat, confluent-kafka-*) sends its
// own nonce again in front of the server's in its client-final message;
// Kafka's server accepts that (the nonce need only end with the server
// first message's), and so must Strait, while its proof holds.
func TestScramLibrdkafkaNonce(t *testing.T) {
	creds := store{}
	creds.add(t, scramcred.SHA512, "alice", "alice-secret", 4096)
	m := newMech(t, scramcred.SHA512, creds)
	s := m.NewSession()
	const cnonce = `v/OBBhduL_|0]N:.NK\iJ`
	sf, _, err := s.Step([]byte("n,,n=alice,r=" + cnonce))
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]string{}
	for _, kv := range strings.Split(string(sf), ",") {
		attrs[kv[:1]] = kv[2:]
	}
	salt, err := base64.StdEncoding.DecodeString(attrs["s"])
	if err != nil {
		t.Fatal(err)
	}
	iterations, err := strconv.Atoi(attrs["i"])
	if err != nil {
		t.Fatal(err)
	}
	salted, err := scramcred.SaltedPassword(scramcred.SHA512, "alice-secret", salt, iterations)
	if err != nil {
		t.Fatal(err)
	}
	clientKey := scramcred.HMAC(sha512.New, salted, []byte("Client Key"))
	withoutProof := "c=biws,r=" + cnonce + attrs["r"]
	signature := scramcred.HMAC(sha512.New, scramcred.H(sha512.New, clientKey), []byte("n=alice,r="+cnonce+","+string(sf)+","+withoutProof))
	proof := make([]byte, len(signature))
	subtle.XORBytes(proof, clientKey, signature)
	if _, done, err := s.Step([]byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof))); err != nil || !done {
		t.Fatalf("librdkafka's client-final: done %t, %v", done, err)
	}
}
