package oauthbearer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

// Keys are generated once per test binary: RSA generation is slow under
// -race.
var (
	keysOnce               sync.Once
	rsaA, rsaB             *rsa.PrivateKey
	ecP256, ecP384, ecP521 *ecdsa.PrivateKey
)

func testKeys(t testing.TB) {
	t.Helper()
	keysOnce.Do(func() {
		var err error
		must := func(e error) {
			if e != nil && err == nil {
				err = e
			}
		}
		rsaA, err = rsa.GenerateKey(rand.Reader, 2048)
		var e error
		rsaB, e = rsa.GenerateKey(rand.Reader, 2048)
		must(e)
		ecP256, e = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(e)
		ecP384, e = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		must(e)
		ecP521, e = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
		must(e)
		if err != nil {
			panic(err)
		}
	})
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwk is the public JWK of priv (an *rsa.PrivateKey or *ecdsa.PrivateKey).
func jwk(kid string, priv crypto.Signer, extra map[string]string) map[string]string {
	m := map[string]string{"kid": kid, "use": "sig"}
	switch k := priv.(type) {
	case *rsa.PrivateKey:
		m["kty"] = "RSA"
		m["n"] = b64(k.N.Bytes())
		m["e"] = b64(big.NewInt(int64(k.E)).Bytes())
	case *ecdsa.PrivateKey:
		size := (k.Curve.Params().BitSize + 7) / 8
		pub, err := k.PublicKey.Bytes() // 0x04 || X || Y
		if err != nil {
			panic(err)
		}
		m["kty"] = "EC"
		m["crv"] = k.Curve.Params().Name
		m["x"] = b64(pub[1 : 1+size])
		m["y"] = b64(pub[1+size:])
	}
	for k, v := range extra {
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

func jwksDoc(keys ...map[string]string) []byte {
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		panic(err)
	}
	return b
}

// writeFileAtomic replaces path's contents in one rename, so a refresh
// never reads half a file.
func writeFileAtomic(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// signJWT signs claims as a compact JWS with alg: the test's own signer.
// key is a private key for RS/PS/ES, a []byte secret for HS, nil for none.
func signJWT(t testing.TB, header map[string]any, claims map[string]any, key any) string {
	t.Helper()
	hb, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	input := b64(hb) + "." + b64(cb)
	alg, _ := header["alg"].(string)
	var sig []byte
	hashOf := map[byte]crypto.Hash{'2': crypto.SHA256, '3': crypto.SHA384, '5': crypto.SHA512}
	if alg != "none" {
		hash := hashOf[alg[2]]
		h := hash.New()
		h.Write([]byte(input))
		digest := h.Sum(nil)
		switch alg[:2] {
		case "RS":
			sig, err = rsa.SignPKCS1v15(rand.Reader, key.(*rsa.PrivateKey), hash, digest)
		case "PS":
			sig, err = rsa.SignPSS(rand.Reader, key.(*rsa.PrivateKey), hash, digest, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		case "ES":
			k := key.(*ecdsa.PrivateKey)
			var r, s *big.Int
			r, s, err = ecdsa.Sign(rand.Reader, k, digest)
			size := (k.Curve.Params().BitSize + 7) / 8
			sig = make([]byte, 2*size)
			r.FillBytes(sig[:size])
			s.FillBytes(sig[size:])
		case "HS":
			m := hmac.New(hash.New, key.([]byte))
			m.Write([]byte(input))
			sig = m.Sum(nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return input + "." + b64(sig)
}

// goodClaims are claims every test validator accepts at testNow.
func goodClaims() map[string]any {
	return map[string]any{
		"sub":   "alice",
		"iss":   "https://idp.example",
		"aud":   "strait",
		"iat":   testNow.Unix() - 60,
		"exp":   testNow.Unix() + 3600,
		"scope": "kafka",
	}
}

var testNow = time.Unix(1_800_000_000, 0)

func testRules() ClaimRules {
	return ClaimRules{
		ExpectedAudience: []string{"other", "strait"},
		ExpectedIssuer:   "https://idp.example",
		SubClaim:         "sub",
		ScopeClaim:       "scope",
		ClockSkew:        30 * time.Second,
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testConfig is a Config for a JWKS file at path.
func testConfig(jwksURL string, refresh time.Duration) Config {
	return Config{
		JWKSURL:             jwksURL,
		JWKSRefresh:         refresh,
		JWKSRetryBackoff:    10 * time.Millisecond,
		JWKSRetryBackoffMax: 50 * time.Millisecond,
		Claims:              testRules(),
	}
}

// newFileMechanism writes a JWKS of keys to a temporary file and starts a
// mechanism on it, its clock at testNow.
func newFileMechanism(t testing.TB, refresh time.Duration, keys ...map[string]string) (*Mechanism, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jwks.json")
	writeFileAtomic(t, path, jwksDoc(keys...))
	m, err := New(testConfig("file://"+path, refresh), quietLog(), clock.NewManual(testNow))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, path
}

// clientFirst is the client's first message of RFC 7628 section 3.1.
func clientFirst(authzid, token string, ext ...string) []byte {
	msg := "n,"
	if authzid != "" {
		msg += "a=" + authzid
	}
	msg += ",\x01auth=Bearer " + token + "\x01"
	for _, kv := range ext {
		msg += kv + "\x01"
	}
	return []byte(msg + "\x01")
}
