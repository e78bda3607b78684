package oauthbearer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// ClaimRules are the checks of a token's claims beyond its signature
// (Kafka's ValidatorAccessTokenValidator with its jose4j JwtConsumer).
type ClaimRules struct {
	// ExpectedAudience, when not empty, must hold one of the token's aud
	// values (sasl.oauthbearer.expected.audience). When it is empty, a
	// token that carries aud is refused, as jose4j's default audience
	// check refuses it for Kafka.
	ExpectedAudience []string
	// ExpectedIssuer, when set, must equal the token's iss
	// (sasl.oauthbearer.expected.issuer).
	ExpectedIssuer string
	// SubClaim names the claim that holds the principal
	// (sasl.oauthbearer.sub.claim.name, "sub").
	SubClaim string
	// ScopeClaim names the claim that holds the scopes
	// (sasl.oauthbearer.scope.claim.name, "scope").
	ScopeClaim string
	// ClockSkew is the leeway for exp and nbf between the identity
	// provider's clock and the broker's
	// (sasl.oauthbearer.clock.skew.seconds, 30).
	ClockSkew time.Duration
}

// Token is what a valid access token says about its bearer.
type Token struct {
	// Subject is the principal's name: the sub claim (or the claim
	// SubClaim names), trimmed.
	Subject string
	// Expiry is the exp claim.
	Expiry time.Time
	// IssuedAt is the iat claim.
	IssuedAt time.Time
	// Scopes are the scope claim's values; a string is one scope, as in
	// Kafka's validator.
	Scopes []string
}

// maxNumericDate bounds a NumericDate so that time.Unix stays meaningful:
// the end of year 9999.
const maxNumericDate = 253402300799

// checkClaims checks the JWT claims set of a token whose signature is
// already verified, at now, and returns its Token.
func checkClaims(payload []byte, rules ClaimRules, now time.Time) (Token, error) {
	var tok Token
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(payload, &claims); err != nil || claims == nil {
		return tok, errors.New("malformed JWT: the payload is not a JSON object")
	}
	nowSec := now.Unix()
	skew := int64(rules.ClockSkew / time.Second)

	exp, ok, err := numericDate(claims, "exp")
	switch {
	case err != nil:
		return tok, err
	case !ok:
		return tok, errors.New("no expiration time (exp) claim present")
	case nowSec-skew >= exp:
		return tok, fmt.Errorf("the JWT expired: now (%d) is on or after exp (%d) even with %d seconds of clock skew", nowSec, exp, skew)
	}
	tok.Expiry = time.Unix(exp, 0)

	iat, ok, err := numericDate(claims, "iat")
	switch {
	case err != nil:
		return tok, err
	case !ok:
		return tok, errors.New("no issued at (iat) claim present")
	}
	tok.IssuedAt = time.Unix(iat, 0)

	nbf, ok, err := numericDate(claims, "nbf")
	switch {
	case err != nil:
		return tok, err
	case ok && nowSec+skew < nbf:
		return tok, fmt.Errorf("the JWT is not yet valid: now (%d) is before nbf (%d) even with %d seconds of clock skew", nowSec, nbf, skew)
	}

	if err := checkAudience(claims, rules.ExpectedAudience); err != nil {
		return tok, err
	}
	if err := checkIssuer(claims, rules.ExpectedIssuer); err != nil {
		return tok, err
	}
	if tok.Subject, err = subject(claims, rules.SubClaim); err != nil {
		return tok, err
	}
	if tok.Scopes, err = scopes(claims, rules.ScopeClaim); err != nil {
		return tok, err
	}
	return tok, nil
}

// numericDate reads a NumericDate claim (RFC 7519 section 2: seconds since
// the epoch, fractions allowed and dropped, as jose4j does). ok is false
// when the claim is absent.
func numericDate(claims map[string]json.RawMessage, name string) (secs int64, ok bool, err error) {
	raw, ok := claims[name]
	if !ok || string(raw) == "null" {
		return 0, false, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, false, fmt.Errorf("the %s claim is not a number", name)
	}
	if f < 0 {
		return 0, false, fmt.Errorf("the %s claim must not be negative", name)
	}
	return int64(math.Min(math.Floor(f), maxNumericDate)), true, nil
}

// checkAudience follows jose4j's AudValidator: aud is a string or an
// array of strings; with expected audiences it must be present and hold
// one of them; without, it must be absent.
func checkAudience(claims map[string]json.RawMessage, expected []string) error {
	raw, present := claims["aud"]
	if !present || string(raw) == "null" {
		if len(expected) > 0 {
			return errors.New("no audience (aud) claim present")
		}
		return nil
	}
	auds, err := stringOrStrings(raw)
	if err != nil {
		return fmt.Errorf("the aud claim %v", err)
	}
	if len(expected) == 0 {
		return fmt.Errorf("the audience (aud) claim %q is present but sasl.oauthbearer.expected.audience is not set", auds)
	}
	for _, a := range auds {
		if slices.Contains(expected, a) {
			return nil
		}
	}
	return fmt.Errorf("the audience (aud) claim %q holds none of %q", auds, expected)
}

func checkIssuer(claims map[string]json.RawMessage, expected string) error {
	if expected == "" {
		return nil
	}
	raw, ok := claims["iss"]
	if !ok || string(raw) == "null" {
		return fmt.Errorf("no issuer (iss) claim present; expected %q", expected)
	}
	var iss string
	if err := json.Unmarshal(raw, &iss); err != nil {
		return errors.New("the iss claim is not a string")
	}
	if iss != expected {
		return fmt.Errorf("the issuer (iss) claim %q is not %q", iss, expected)
	}
	return nil
}

// subject reads the principal's claim as Kafka's
// ClaimValidationUtils.validateSubject: a string, not empty once trimmed.
func subject(claims map[string]json.RawMessage, name string) (string, error) {
	raw, ok := claims[name]
	if !ok || string(raw) == "null" {
		return "", fmt.Errorf("no %s claim present", name)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("the %s claim is not a string", name)
	}
	if s = strings.TrimSpace(s); s == "" {
		return "", fmt.Errorf("the %s claim is empty", name)
	}
	return s, nil
}

// scopes reads the scope claim as Kafka's validator: a string is one
// scope, an array of strings is the scopes (each trimmed, none empty, no
// duplicates), and anything else, or no claim, is no scope.
func scopes(claims map[string]json.RawMessage, name string) ([]string, error) {
	raw, ok := claims[name]
	if !ok || len(raw) == 0 || (raw[0] != '"' && raw[0] != '[') {
		return nil, nil
	}
	vals, err := stringOrStrings(raw)
	if err != nil {
		return nil, fmt.Errorf("the %s claim %v", name, err)
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if v = strings.TrimSpace(v); v == "" {
			return nil, fmt.Errorf("the %s claim holds an empty scope", name)
		}
		if slices.Contains(out, v) {
			return nil, fmt.Errorf("the %s claim holds %q twice", name, v)
		}
		out = append(out, v)
	}
	return out, nil
}

func stringOrStrings(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, errors.New("is not a string or an array of strings")
	}
	return many, nil
}
