package oauthbearer

import (
	"fmt"

	"github.com/strait-io/strait/storage/clock"
)

// keyResolver gives the validator the JWKS's keys.
type keyResolver interface {
	// keysWithID returns the keys whose kid is kid; with kid "" (a token
	// that names no key), every key.
	keysWithID(kid string) []verificationKey
	// missing reports that a token named kid and no key fitted it: the
	// JWKS may have been rotated, so it is read again soon.
	missing(kid string)
}

// Validator checks a JWT access token as Kafka's
// ValidatorAccessTokenValidator: the signature against the JWKS, then the
// claims. It is safe for concurrent use.
type Validator struct {
	keys  keyResolver
	rules ClaimRules
	clock clock.Clock
}

// Validate returns the token's claims, or why the token is refused.
func (v *Validator) Validate(token string) (Token, error) {
	t, err := parseJWS(token)
	if err != nil {
		return Token{}, err
	}
	var fitting []verificationKey
	for _, k := range v.keys.keysWithID(t.kid) {
		if t.fits(k) {
			fitting = append(fitting, k)
		}
	}
	if len(fitting) == 0 {
		v.keys.missing(t.kid)
		return Token{}, fmt.Errorf("the JWKS has no %s key with kid %q", t.alg, t.kid)
	}
	verified := false
	for _, k := range fitting {
		if t.verify(k) {
			verified = true
			break
		}
	}
	if !verified {
		return Token{}, fmt.Errorf("the JWT's %s signature does not verify with the JWKS key of kid %q", t.alg, t.kid)
	}
	return checkClaims(t.payload, v.rules, v.clock.Now())
}
