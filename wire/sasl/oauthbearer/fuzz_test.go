package oauthbearer

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

// staticKeys is a keyResolver over fixed keys.
type staticKeys []verificationKey

func (s staticKeys) keysWithID(kid string) []verificationKey {
	var out []verificationKey
	for _, k := range s {
		if kid == "" || k.kid == kid {
			out = append(out, k)
		}
	}
	return out
}

func (staticKeys) missing(string) {}

// FuzzStep feeds arbitrary client messages to a session: whatever comes,
// the mechanism answers or fails, and never panics. The seeds run with
// every `go test`; `go test -fuzz FuzzStep` explores further.
func FuzzStep(f *testing.F) {
	testKeys(f)
	keys, _, err := parseJWKS(jwksDoc(jwk("rsa", rsaA, nil), jwk("p256", ecP256, nil)))
	if err != nil {
		f.Fatal(err)
	}
	m := NewMechanism(&Validator{keys: staticKeys(keys), rules: testRules(), clock: clock.NewManual(testNow)}, quietLog())
	good := signJWT(f, map[string]any{"alg": "RS256", "kid": "rsa"}, goodClaims(), rsaA)
	f.Add(clientFirst("", good))
	f.Add(clientFirst("alice", signJWT(f, map[string]any{"alg": "ES256", "kid": "p256"}, goodClaims(), ecP256), "k=v"))
	f.Add(clientFirst("", "e30.e30.e30"))
	f.Add([]byte("n,,\x01auth=Bearer \x01\x01"))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, msg []byte) {
		s := m.NewSession()
		reply, done, err := s.Step(msg)
		if done && (err != nil || s.Principal() == "" || s.Expiry().Before(testNow)) {
			t.Fatalf("done with err %v, principal %q, expiry %v", err, s.Principal(), s.Expiry())
		}
		if err == nil && !done {
			if _, _, err := s.Step([]byte{1}); err == nil {
				t.Fatalf("reply %q then \\x01 did not fail", reply)
			}
		}
	})
}

func TestNewRefusesANonPositiveRefresh(t *testing.T) {
	testKeys(t)
	_, path := newFileMechanism(t, time.Hour, jwk("a", rsaA, nil))
	if _, err := New(testConfig("file://"+path, 0), quietLog(), clock.NewManual(testNow)); err == nil {
		t.Fatal("started with a zero refresh interval")
	}
}

// FuzzParseJWKS: a JWKS document, whatever it holds, parses or is refused
// without a panic, and every key kept is RSA of 2048 bits or more or EC.
func FuzzParseJWKS(f *testing.F) {
	testKeys(f)
	f.Add(jwksDoc(jwk("rsa", rsaA, nil), jwk("p521", ecP521, map[string]string{"alg": "ES512"})))
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"AQ","y":"Ag"},{"kty":"RSA","n":"AQ","e":"AQAB"}]}`))
	f.Add([]byte(`{"keys":null}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		keys, _, err := parseJWKS(doc)
		if err != nil && keys != nil {
			t.Fatal("keys with an error")
		}
		for _, k := range keys {
			switch pub := k.pub.(type) {
			case *rsa.PublicKey:
				if pub.N.BitLen() < minRSABits {
					t.Fatalf("kept a %d-bit RSA key", pub.N.BitLen())
				}
			case *ecdsa.PublicKey:
			default:
				t.Fatalf("kept a %T", pub)
			}
		}
	})
}
