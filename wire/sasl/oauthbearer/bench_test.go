package oauthbearer

import (
	"testing"

	"github.com/strait-io/strait/storage/clock"
)

// BenchmarkValidate measures one token's validation (signature and claims),
// the broker's cost of one OAUTHBEARER authentication.
func BenchmarkValidate(b *testing.B) {
	testKeys(b)
	keys, _, err := parseJWKS(jwksDoc(jwk("rsa", rsaA, nil), jwk("p256", ecP256, nil), jwk("p521", ecP521, nil)))
	if err != nil {
		b.Fatal(err)
	}
	v := &Validator{keys: staticKeys(keys), rules: testRules(), clock: clock.NewManual(testNow)}
	for _, tc := range []struct {
		alg, kid string
		key      any
	}{{"RS256", "rsa", rsaA}, {"PS256", "rsa", rsaA}, {"ES256", "p256", ecP256}, {"ES512", "p521", ecP521}} {
		token := signJWT(b, map[string]any{"alg": tc.alg, "kid": tc.kid}, goodClaims(), tc.key)
		b.Run(tc.alg, func(b *testing.B) {
			for b.Loop() {
				if _, err := v.Validate(token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
