package oauthbearer

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

// eventually polls ok for up to 20 s: generous, the machine is shared.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within 20 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func accepts(m *Mechanism, token string) bool {
	_, done, err := m.NewSession().Step(clientFirst("", token))
	return done && err == nil
}

func TestFileJWKSRefreshPicksUpRotatedKey(t *testing.T) {
	testKeys(t)
	m, path := newFileMechanism(t, 100*time.Millisecond, jwk("a", rsaA, nil))
	tokenA := signJWT(t, map[string]any{"alg": "RS256", "kid": "a"}, goodClaims(), rsaA)
	// Signed with B but naming kid a: only the periodic refresh, not the
	// unknown-kid one, can make it valid.
	tokenB := signJWT(t, map[string]any{"alg": "RS256", "kid": "a"}, goodClaims(), rsaB)
	if !accepts(m, tokenA) || accepts(m, tokenB) {
		t.Fatal("before the rotation, want A accepted and B refused")
	}
	writeFileAtomic(t, path, jwksDoc(jwk("a", rsaB, nil)))
	eventually(t, "accepting the rotated key", func() bool { return accepts(m, tokenB) })
	if accepts(m, tokenA) {
		t.Error("the key rotated out still verifies")
	}
}

func TestUnknownKidMakesTheJWKSBeReadAgain(t *testing.T) {
	testKeys(t)
	m, path := newFileMechanism(t, time.Hour, jwk("a", rsaA, nil))
	tokenB := signJWT(t, map[string]any{"alg": "ES256", "kid": "b"}, goodClaims(), ecP256)
	writeFileAtomic(t, path, jwksDoc(jwk("a", rsaA, nil), jwk("b", ecP256, nil)))
	// The first token with kid b is refused (as in Kafka, the read it
	// causes runs in the background); a later one is accepted.
	expectErrorFlow(t, m, tokenB)
	eventually(t, "accepting the new kid", func() bool { return accepts(m, tokenB) })
}

// jwksServer serves whatever JWKS is set, counting requests; a nil
// document answers 500.
type jwksServer struct {
	mu   sync.Mutex
	doc  []byte
	hits atomic.Int64
	*httptest.Server
}

func newJWKSServer(t *testing.T, doc []byte) *jwksServer {
	s := &jwksServer{doc: doc}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		doc := s.doc
		s.mu.Unlock()
		if doc == nil {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(doc []byte) {
	s.mu.Lock()
	s.doc = doc
	s.mu.Unlock()
}

func TestHTTPJWKSRotationAndOutage(t *testing.T) {
	testKeys(t)
	srv := newJWKSServer(t, jwksDoc(jwk("a", rsaA, nil)))
	m, err := New(testConfig(srv.URL+"/jwks", 100*time.Millisecond), quietLog(), clock.NewManual(testNow))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tokenA := signJWT(t, map[string]any{"alg": "RS256", "kid": "a"}, goodClaims(), rsaA)
	tokenB := signJWT(t, map[string]any{"alg": "RS256", "kid": "b"}, goodClaims(), rsaB)
	if !accepts(m, tokenA) {
		t.Fatal("token A refused")
	}
	// An outage keeps the last good keys.
	srv.set(nil)
	before := srv.hits.Load()
	eventually(t, "refreshes failing", func() bool { return srv.hits.Load() >= before+12 })
	if !accepts(m, tokenA) {
		t.Fatal("token A refused while the JWKS endpoint is down")
	}
	// A rotation once it is back is picked up.
	srv.set(jwksDoc(jwk("b", rsaB, nil)))
	eventually(t, "accepting the rotated key", func() bool { return accepts(m, tokenB) })
	if accepts(m, tokenA) {
		t.Error("the key rotated out still verifies")
	}
}

func TestUnknownKidsReadTheJWKSAtMostOnceInAWhile(t *testing.T) {
	testKeys(t)
	srv := newJWKSServer(t, jwksDoc(jwk("a", rsaA, nil)))
	clk := clock.NewManual(testNow)
	m, err := New(testConfig(srv.URL, time.Hour), quietLog(), clk)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	start := srv.hits.Load()
	for i := range 50 {
		kid := strings.Repeat("k", i+1)
		token := signJWT(t, map[string]any{"alg": "ES256", "kid": kid}, goodClaims(), ecP256)
		expectErrorFlow(t, m, token)
	}
	eventually(t, "the first read", func() bool { return srv.hits.Load() == start+1 })
	time.Sleep(200 * time.Millisecond)
	if n := srv.hits.Load() - start; n != 1 {
		t.Fatalf("50 tokens with unknown kids caused %d reads of the JWKS, want 1", n)
	}
	// Past the gap, the same kid may cause a read again only after its own
	// interval; another kid may.
	clk.Advance(missingKidGap)
	expectErrorFlow(t, m, signJWT(t, map[string]any{"alg": "ES256", "kid": "k"}, goodClaims(), ecP256))
	time.Sleep(200 * time.Millisecond)
	if n := srv.hits.Load() - start; n != 1 {
		t.Fatalf("the same kid within %v caused another read (%d)", missingKidInterval, n)
	}
	expectErrorFlow(t, m, signJWT(t, map[string]any{"alg": "ES256", "kid": "fresh"}, goodClaims(), ecP256))
	eventually(t, "a read for another kid", func() bool { return srv.hits.Load() == start+2 })
}

func TestJWKSThatCannotBeReadAtStartIsAnError(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	down := newJWKSServer(t, nil)
	for name, u := range map[string]string{
		"missing file":  "file://" + filepath.Join(dir, "missing.json"),
		"not a JWKS":    "file://" + garbage,
		"relative file": "file:jwks.json",
		"http 500":      down.URL,
		"nobody there":  "http://127.0.0.1:1/jwks",
	} {
		t.Run(name, func(t *testing.T) {
			m, err := New(testConfig(u, time.Hour), quietLog(), clock.NewManual(testNow))
			if err == nil {
				m.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), "sasl.oauthbearer.jwks.endpoint.url") {
				t.Errorf("the error does not name the key: %v", err)
			}
		})
	}
}

func TestJWKSKeysStraitCannotUseAreSkipped(t *testing.T) {
	testKeys(t)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	doc := jwksDoc(
		jwk("small", small, nil),
		map[string]string{"kty": "oct", "kid": "hmac", "k": b64([]byte("secret"))},
		map[string]string{"kty": "EC", "kid": "off-curve", "crv": "P-256", "x": b64([]byte{1}), "y": b64([]byte{2})},
		map[string]string{"kty": "OKP", "kid": "ed", "crv": "Ed25519", "x": b64(make([]byte, 32))},
		jwk("enc", rsaA, map[string]string{"use": "enc"}),
		jwk("good", rsaA, map[string]string{"use": ""}),
	)
	keys, skipped, err := parseJWKS(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].kid != "good" || len(skipped) != 5 {
		t.Fatalf("kept %v, skipped %q; want only good", keys, skipped)
	}
	m, _ := newFileMechanism(t, time.Hour, jwk("small", small, nil), jwk("good", rsaA, nil))
	expectErrorFlow(t, m, signJWT(t, map[string]any{"alg": "RS256", "kid": "small"}, goodClaims(), small))
}
