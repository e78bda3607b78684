package oauthbearer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
)

// minRSABits is the smallest RSA key a signature may be verified with:
// RFC 7518 section 3.3 requires 2048 bits, and jose4j (so Kafka) refuses
// smaller keys.
const minRSABits = 2048

// verificationKey is one usable key of a JWKS (RFC 7517): an RSA or EC
// public key for signatures, with its key id and, if the JWK names one,
// the only algorithm it may verify.
type verificationKey struct {
	kid string
	alg string // "" when the JWK does not restrict it
	pub crypto.PublicKey
}

// jwkJSON is the members of a JWK that Strait reads.
type jwkJSON struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS parses a JWK Set document. A document that is not a JSON object
// with a "keys" array is an error; a key Strait cannot use (another use
// than "sig", an unsupported kty or curve, a malformed or too-small key) is
// skipped and named in skipped, as jose4j's JsonWebKeySet ignores a key it
// cannot process.
func parseJWKS(doc []byte) (keys []verificationKey, skipped []string, err error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, nil, fmt.Errorf("not a JWK Set: %v", err)
	}
	if set.Keys == nil {
		return nil, nil, errors.New(`not a JWK Set: no "keys" array`)
	}
	for i, raw := range set.Keys {
		var j jwkJSON
		if err := json.Unmarshal(raw, &j); err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d: %v", i, err))
			continue
		}
		k, err := j.verificationKey()
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d (kid %q): %v", i, j.Kid, err))
			continue
		}
		keys = append(keys, k)
	}
	return keys, skipped, nil
}

func (j jwkJSON) verificationKey() (verificationKey, error) {
	k := verificationKey{kid: j.Kid, alg: j.Alg}
	if j.Use != "" && j.Use != "sig" {
		return k, fmt.Errorf("use is %q, not sig", j.Use)
	}
	var err error
	switch j.Kty {
	case "RSA":
		k.pub, err = j.rsaKey()
	case "EC":
		k.pub, err = j.ecKey()
	default:
		err = fmt.Errorf("kty %q is not RSA or EC", j.Kty)
	}
	return k, err
}

func (j jwkJSON) rsaKey() (*rsa.PublicKey, error) {
	n, err := b64uint(j.N, "n")
	if err != nil {
		return nil, err
	}
	e, err := b64uint(j.E, "e")
	if err != nil {
		return nil, err
	}
	if n.BitLen() < minRSABits {
		return nil, fmt.Errorf("RSA key of %d bits is smaller than %d", n.BitLen(), minRSABits)
	}
	if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
		return nil, errors.New("RSA exponent e is not an odd number from 3 to 2^31-1")
	}
	return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
}

func (j jwkJSON) ecKey() (*ecdsa.PublicKey, error) {
	curve := curveByName(j.Crv)
	if curve == nil {
		return nil, fmt.Errorf("crv %q is not P-256, P-384 or P-521", j.Crv)
	}
	size := (curve.Params().BitSize + 7) / 8
	point := make([]byte, 1, 1+2*size)
	point[0] = 4 // SEC 1 uncompressed point
	for _, c := range []struct{ v, name string }{{j.X, "x"}, {j.Y, "y"}} {
		b, err := base64.RawURLEncoding.DecodeString(c.v)
		if err != nil || len(b) == 0 || len(b) > size {
			return nil, fmt.Errorf("EC coordinate %s is not base64url of at most %d bytes", c.name, size)
		}
		// RFC 7518 wants the full width; some issuers drop leading zeros.
		point = append(point, make([]byte, size-len(b))...)
		point = append(point, b...)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(curve, point)
	if err != nil {
		return nil, fmt.Errorf("EC point: %v", err)
	}
	return pub, nil
}

func curveByName(crv string) elliptic.Curve {
	switch crv {
	case "P-256":
		return elliptic.P256()
	case "P-384":
		return elliptic.P384()
	case "P-521":
		return elliptic.P521()
	}
	return nil
}

// b64uint decodes a JWK's base64url unsigned big-endian integer.
func b64uint(s, name string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("%s is not a base64url integer", name)
	}
	return new(big.Int).SetBytes(b), nil
}
