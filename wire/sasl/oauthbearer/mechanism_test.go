package oauthbearer

import (
	"context"
	"crypto"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/strait-io/strait/wire/sasl"
)

const errorJSON = `{"status":"invalid_token"}`

// allKeysMechanism serves one key per algorithm family and curve.
func allKeysMechanism(t *testing.T) *Mechanism {
	t.Helper()
	testKeys(t)
	m, _ := newFileMechanism(t, time.Hour,
		jwk("rsa", rsaA, nil),
		jwk("p256", ecP256, nil),
		jwk("p384", ecP384, nil),
		jwk("p521", ecP521, nil),
		jwk("rsa-enc", rsaB, map[string]string{"use": "enc"}),
		jwk("rsa-rs512-only", rsaB, map[string]string{"alg": "RS512"}),
	)
	return m
}

func TestValidTokenAuthenticatesWithEachAlgorithm(t *testing.T) {
	m := allKeysMechanism(t)
	for _, tc := range []struct {
		alg, kid string
		key      crypto.Signer
	}{
		{"RS256", "rsa", rsaA}, {"RS384", "rsa", rsaA}, {"RS512", "rsa", rsaA},
		{"PS256", "rsa", rsaA}, {"PS384", "rsa", rsaA}, {"PS512", "rsa", rsaA},
		{"ES256", "p256", ecP256}, {"ES384", "p384", ecP384}, {"ES512", "p521", ecP521},
		{"RS512", "rsa-rs512-only", rsaB},
		{"RS256", "", rsaA}, // no kid: any fitting key may verify
	} {
		t.Run(tc.alg+"/"+tc.kid, func(t *testing.T) {
			header := map[string]any{"alg": tc.alg, "typ": "JWT"}
			if tc.kid != "" {
				header["kid"] = tc.kid
			}
			claims := goodClaims()
			token := signJWT(t, header, claims, tc.key)
			s := m.NewSession()
			reply, done, err := s.Step(clientFirst("", token))
			if err != nil || !done || len(reply) != 0 {
				t.Fatalf("Step = %q, %v, %v; want an empty reply, done", reply, done, err)
			}
			if got := s.Principal(); got != "User:alice" {
				t.Errorf("Principal = %q, want User:alice", got)
			}
			if want := time.Unix(claims["exp"].(int64), 0); !s.Expiry().Equal(want) {
				t.Errorf("Expiry = %v, want %v", s.Expiry(), want)
			}
			if _, _, err := s.Step([]byte{1}); !errors.Is(err, sasl.ErrIllegalState) {
				t.Errorf("Step after done: %v, want ErrIllegalState", err)
			}
		})
	}
}

// expectErrorFlow runs RFC 7628's failure: the error JSON, the client's
// \x01, then SASL_AUTHENTICATION_FAILED with the JSON as the message.
func expectErrorFlow(t *testing.T, m *Mechanism, token string) {
	t.Helper()
	s := m.NewSession()
	reply, done, err := s.Step(clientFirst("", token))
	if err != nil || done || string(reply) != errorJSON {
		t.Fatalf("Step = %q, %v, %v; want the error JSON, not done, no error", reply, done, err)
	}
	reply, done, err = s.Step([]byte{1})
	if !errors.Is(err, sasl.ErrAuthenticationFailed) || done || reply != nil || !strings.Contains(err.Error(), errorJSON) {
		t.Fatalf("Step(\\x01) = %q, %v, %v; want ErrAuthenticationFailed with the JSON", reply, done, err)
	}
	if s.Principal() != "" {
		t.Errorf("a refused session has principal %q", s.Principal())
	}
}

func TestRefusedTokensGetTheErrorJSONThenFail(t *testing.T) {
	m := allKeysMechanism(t)
	rs := func(claims map[string]any) string {
		return signJWT(t, map[string]any{"alg": "RS256", "kid": "rsa"}, claims, rsaA)
	}
	with := func(k string, v any) map[string]any {
		c := goodClaims()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	now := testNow.Unix()
	good := rs(goodClaims())
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + b64([]byte(`{"sub":"mallory","iss":"https://idp.example","aud":"strait","iat":1,"exp":9999999999}`)) + "." + parts[2]
	goodES := signJWT(t, map[string]any{"alg": "ES256", "kid": "p256"}, goodClaims(), ecP256)
	esParts := strings.Split(goodES, ".")
	tamperedES := esParts[0] + "." + strings.Split(tampered, ".")[1] + "." + esParts[2] // another payload under the ES256 signature
	rsaPubDER := rsaA.PublicKey.N.Bytes()                                               // what a confused verifier would use as an HMAC secret

	for name, token := range map[string]string{
		"expired":               rs(with("exp", now-31)),
		"expired at exp":        rs(with("exp", now-30)),
		"not yet valid":         rs(with("nbf", now+31)),
		"wrong audience":        rs(with("aud", "someone-else")),
		"wrong audience array":  rs(with("aud", []string{"a", "b"})),
		"no audience":           rs(with("aud", nil)),
		"wrong issuer":          rs(with("iss", "https://evil.example")),
		"no issuer":             rs(with("iss", nil)),
		"missing sub":           rs(with("sub", nil)),
		"blank sub":             rs(with("sub", "  ")),
		"numeric sub":           rs(with("sub", 42)),
		"missing exp":           rs(with("exp", nil)),
		"string exp":            rs(with("exp", "tomorrow")),
		"missing iat":           rs(with("iat", nil)),
		"duplicate scope":       rs(with("scope", []string{"a", "a"})),
		"unknown kid":           signJWT(t, map[string]any{"alg": "RS256", "kid": "nope"}, goodClaims(), rsaA),
		"signed by another key": signJWT(t, map[string]any{"alg": "RS256", "kid": "rsa"}, goodClaims(), rsaB),
		"tampered payload":      tampered,
		"tampered ES256":        tamperedES,
		"ES256 of another key":  signJWT(t, map[string]any{"alg": "ES256", "kid": "p256"}, goodClaims(), ecP384),
		"alg none":              signJWT(t, map[string]any{"alg": "none", "kid": "rsa"}, goodClaims(), nil),
		"HS256":                 signJWT(t, map[string]any{"alg": "HS256", "kid": "rsa"}, goodClaims(), rsaPubDER),
		"unknown alg":           strings.Replace(good, parts[0], b64([]byte(`{"alg":"RS1","kid":"rsa"}`)), 1),
		"crit header":           signJWT(t, map[string]any{"alg": "RS256", "kid": "rsa", "crit": []string{"exp"}}, goodClaims(), rsaA),
		"key for enc only":      signJWT(t, map[string]any{"alg": "RS256", "kid": "rsa-enc"}, goodClaims(), rsaB),
		"key for another alg":   signJWT(t, map[string]any{"alg": "RS256", "kid": "rsa-rs512-only"}, goodClaims(), rsaB),
		"EC key of other curve": signJWT(t, map[string]any{"alg": "ES256", "kid": "p384"}, goodClaims(), ecP384),
		"RSA alg on EC key":     signJWT(t, map[string]any{"alg": "RS256", "kid": "p256"}, goodClaims(), rsaA),
		"two sections":          parts[0] + "." + parts[1],
		"four sections":         good + ".x",
		"padded signature":      good + "==",
		"payload not JSON":      parts[0] + "." + b64([]byte("hello")) + "." + parts[2],
		"header not JSON":       b64([]byte("{")) + "." + parts[1] + "." + parts[2],
		"empty signature":       parts[0] + "." + parts[1] + ".",
	} {
		t.Run(name, func(t *testing.T) { expectErrorFlow(t, m, token) })
	}
}

func TestClockSkewAllowsSlightlyOffTokens(t *testing.T) {
	m := allKeysMechanism(t)
	now := testNow.Unix()
	for name, tweak := range map[string]func(map[string]any){
		"expired 29 s ago":     func(c map[string]any) { c["exp"] = now - 29 },
		"valid in 29 s":        func(c map[string]any) { c["nbf"] = now + 29 },
		"issued in the future": func(c map[string]any) { c["iat"] = now + 600 },
		"fractional dates":     func(c map[string]any) { c["exp"] = float64(now) + 100.5; c["iat"] = float64(now) - 0.5 },
		"scope array":          func(c map[string]any) { c["scope"] = []string{"read", "write"} },
		"scope a number":       func(c map[string]any) { c["scope"] = 7 },
		"no scope":             func(c map[string]any) { delete(c, "scope") },
		"audience in array":    func(c map[string]any) { c["aud"] = []string{"x", "strait"} },
	} {
		t.Run(name, func(t *testing.T) {
			c := goodClaims()
			tweak(c)
			token := signJWT(t, map[string]any{"alg": "ES256", "kid": "p256"}, c, ecP256)
			if _, done, err := m.NewSession().Step(clientFirst("", token)); !done || err != nil {
				t.Fatalf("refused: done=%v err=%v", done, err)
			}
		})
	}
}

func TestMalformedClientMessagesFail(t *testing.T) {
	m := allKeysMechanism(t)
	token := signJWT(t, map[string]any{"alg": "RS256", "kid": "rsa"}, goodClaims(), rsaA)
	for name, msg := range map[string]string{
		"empty":                "",
		"lone ctrl-A":          "\x01",
		"channel binding y":    "y,,\x01auth=Bearer " + token + "\x01\x01",
		"no GS2 header":        "\x01auth=Bearer " + token + "\x01\x01",
		"GS2 header unended":   "n,a=alice\x01auth=Bearer " + token + "\x01\x01",
		"GS2 other field":      "n,x=alice,\x01auth=Bearer " + token + "\x01\x01",
		"bad authzid escape":   "n,a=al=41ice,\x01auth=Bearer " + token + "\x01\x01",
		"no auth":              "n,,\x01host=broker\x01\x01",
		"not bearer":           "n,,\x01auth=Basic " + token + "\x01\x01",
		"no token":             "n,,\x01auth=Bearer \x01\x01",
		"token with space":     "n,,\x01auth=Bearer a b\x01\x01",
		"token with bad chars": "n,,\x01auth=Bearer a!b\x01\x01",
		"missing final ctrl-A": "n,,\x01auth=Bearer " + token + "\x01",
		"key with digit":       "n,,\x01auth=Bearer " + token + "\x01k1=v\x01\x01",
		"empty value":          "n,,\x01auth=Bearer " + token + "\x01k=\x01\x01",
		"pair without =":       "n,,\x01auth=Bearer " + token + "\x01kv\x01\x01",
		"auth twice":           "n,,\x01auth=Bearer " + token + "\x01auth=Bearer x\x01\x01",
		"non-ASCII value":      "n,,\x01auth=Bearer " + token + "\x01k=é\x01\x01",
	} {
		t.Run(name, func(t *testing.T) {
			reply, done, err := m.NewSession().Step([]byte(msg))
			if !errors.Is(err, sasl.ErrAuthenticationFailed) || done || reply != nil {
				t.Fatalf("Step = %q, %v, %v; want ErrAuthenticationFailed", reply, done, err)
			}
		})
	}
}

func TestAuthzidMustBeTheTokensPrincipal(t *testing.T) {
	m := allKeysMechanism(t)
	c := goodClaims()
	c["sub"] = "svc,a=b"
	token := signJWT(t, map[string]any{"alg": "RS256", "kid": "rsa"}, c, rsaA)

	s := m.NewSession()
	if _, done, err := s.Step(clientFirst("svc=2Ca=3Db", token)); !done || err != nil {
		t.Fatalf("matching escaped authzid refused: %v", err)
	}
	if s.Principal() != "User:svc,a=b" {
		t.Errorf("Principal = %q", s.Principal())
	}
	_, done, err := m.NewSession().Step(clientFirst("admin", token))
	if !errors.Is(err, sasl.ErrAuthenticationFailed) || done || !strings.Contains(err.Error(), "authorization id (admin)") {
		t.Fatalf("other authzid: done=%v err=%v; want ErrAuthenticationFailed", done, err)
	}
}

func TestExtensionsAreAcceptedAndIgnored(t *testing.T) {
	m := allKeysMechanism(t)
	token := signJWT(t, map[string]any{"alg": "RS256", "kid": "rsa"}, goodClaims(), rsaA)
	s := m.NewSession()
	if _, done, err := s.Step(clientFirst("", token, "logicalCluster=lkc-1", "identityPoolId=pool 1")); !done || err != nil {
		t.Fatalf("with extensions: done=%v err=%v", done, err)
	}
}

func TestAfterTheErrorOnlyCtrlAIsAccepted(t *testing.T) {
	m := allKeysMechanism(t)
	expired := goodClaims()
	expired["exp"] = testNow.Unix() - 3600
	bad := signJWT(t, map[string]any{"alg": "RS256", "kid": "rsa"}, expired, rsaA)
	good := signJWT(t, map[string]any{"alg": "RS256", "kid": "rsa"}, goodClaims(), rsaA)
	s := m.NewSession()
	if reply, _, err := s.Step(clientFirst("", bad)); err != nil || string(reply) != errorJSON {
		t.Fatalf("Step = %q, %v", reply, err)
	}
	if _, done, err := s.Step(clientFirst("", good)); !errors.Is(err, sasl.ErrIllegalState) || done {
		t.Fatalf("a second first message after the error: done=%v err=%v; want ErrIllegalState", done, err)
	}
	if _, _, err := s.Step([]byte{1}); !errors.Is(err, sasl.ErrIllegalState) {
		t.Fatalf("Step after failure: %v, want ErrIllegalState", err)
	}
}

// TestFranzGoClientInterop drives the mechanism with franz-go's own
// OAUTHBEARER client, both ways: accepted, and refused through the error
// JSON and the client's \x01.
func TestFranzGoClientInterop(t *testing.T) {
	m := allKeysMechanism(t)
	good := signJWT(t, map[string]any{"alg": "PS256", "kid": "rsa"}, goodClaims(), rsaA)
	expired := goodClaims()
	expired["exp"] = testNow.Unix() - 3600
	bad := signJWT(t, map[string]any{"alg": "PS256", "kid": "rsa"}, expired, rsaA)

	run := func(auth oauth.Auth) (sasl.Session, error) {
		client, first, err := auth.AsMechanism().Authenticate(context.Background(), "broker:9092")
		if err != nil {
			t.Fatal(err)
		}
		server := m.NewSession()
		msg := first
		for range 4 {
			reply, serverDone, err := server.Step(msg)
			if err != nil {
				return server, err
			}
			clientDone, next, cerr := client.Challenge(reply)
			if serverDone {
				if !clientDone || cerr != nil {
					t.Fatalf("server done but client: done=%v err=%v", clientDone, cerr)
				}
				return server, nil
			}
			if cerr != nil {
				t.Fatalf("client gave up before the server failed: %v", cerr)
			}
			msg = next
		}
		t.Fatal("the exchange did not end")
		return nil, nil
	}

	s, err := run(oauth.Auth{Token: good, Zid: "alice", Extensions: map[string]string{"traceId": "abc"}})
	if err != nil || s.Principal() != "User:alice" {
		t.Fatalf("franz-go with a good token: principal %q, err %v", s.Principal(), err)
	}
	if _, err := run(oauth.Auth{Token: bad}); !errors.Is(err, sasl.ErrAuthenticationFailed) || !strings.Contains(err.Error(), errorJSON) {
		t.Fatalf("franz-go with an expired token: %v; want ErrAuthenticationFailed with the JSON", err)
	}
}
