package oauthbearer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	_ "crypto/sha256" // SHA-256 for RS256, PS256, ES256
	_ "crypto/sha512" // SHA-384 and SHA-512
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// signatureAlg is a JWS algorithm of RFC 7518 section 3 that Strait
// verifies: RSASSA-PKCS1-v1_5, RSASSA-PSS or ECDSA, each with its hash.
type signatureAlg struct {
	hash  crypto.Hash
	pss   bool           // RSASSA-PSS rather than PKCS #1 v1.5
	curve elliptic.Curve // ECDSA's curve; nil for RSA
}

var signatureAlgs = map[string]signatureAlg{
	"RS256": {hash: crypto.SHA256},
	"RS384": {hash: crypto.SHA384},
	"RS512": {hash: crypto.SHA512},
	"PS256": {hash: crypto.SHA256, pss: true},
	"PS384": {hash: crypto.SHA384, pss: true},
	"PS512": {hash: crypto.SHA512, pss: true},
	"ES256": {hash: crypto.SHA256, curve: elliptic.P256()},
	"ES384": {hash: crypto.SHA384, curve: elliptic.P384()},
	"ES512": {hash: crypto.SHA512, curve: elliptic.P521()},
}

// signedToken is a JWS in compact serialization (RFC 7515 section 7.1),
// split and decoded but not yet verified.
type signedToken struct {
	alg          string
	kid          string
	signingInput string // BASE64URL(header) "." BASE64URL(payload)
	payload      []byte
	signature    []byte
}

// parseJWS splits and decodes a compact JWS. It refuses what Strait will
// not verify before any key is looked up: "none", HMAC and any algorithm
// not in signatureAlgs, and a "crit" header (RFC 7515 section 4.1.11: no
// extension is understood here, so none may be critical).
func parseJWS(token string) (signedToken, error) {
	var t signedToken
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return t, fmt.Errorf("malformed JWT: %d sections, expected three (header, payload, signature)", len(parts))
	}
	header, err := base64.RawURLEncoding.Strict().DecodeString(parts[0])
	if err != nil {
		return t, errors.New("malformed JWT: the header is not base64url")
	}
	if t.payload, err = base64.RawURLEncoding.Strict().DecodeString(parts[1]); err != nil {
		return t, errors.New("malformed JWT: the payload is not base64url")
	}
	if t.signature, err = base64.RawURLEncoding.Strict().DecodeString(parts[2]); err != nil {
		return t, errors.New("malformed JWT: the signature is not base64url")
	}
	var h struct {
		Alg  *string         `json:"alg"`
		Kid  *string         `json:"kid"`
		Crit json.RawMessage `json:"crit"`
	}
	if err := json.Unmarshal(header, &h); err != nil {
		return t, fmt.Errorf("malformed JWT: the header is not a JSON object with string alg and kid: %v", err)
	}
	if h.Alg == nil {
		return t, errors.New("malformed JWT: the header has no alg")
	}
	t.alg = *h.Alg
	if h.Kid != nil {
		t.kid = *h.Kid
	}
	switch {
	case t.alg == "none":
		return t, errors.New(`the JWT is unsigned ("alg":"none")`)
	case strings.HasPrefix(t.alg, "HS"):
		return t, fmt.Errorf("the JWT is signed with %s: HMAC needs a shared secret, and the broker verifies only public-key signatures", t.alg)
	}
	if _, ok := signatureAlgs[t.alg]; !ok {
		return t, fmt.Errorf("the JWT's algorithm %q is not one of RS256/384/512, PS256/384/512, ES256/384/512", t.alg)
	}
	if h.Crit != nil {
		return t, errors.New(`the JWT's header has "crit" extensions, which the broker does not understand`)
	}
	t.signingInput = parts[0] + "." + parts[1]
	return t, nil
}

// fits tells whether k may verify t: the JWK's own alg, if any, must be
// t's, and its key type (and curve) must be the algorithm's.
func (t signedToken) fits(k verificationKey) bool {
	if k.alg != "" && k.alg != t.alg {
		return false
	}
	a := signatureAlgs[t.alg]
	switch pub := k.pub.(type) {
	case *rsa.PublicKey:
		return a.curve == nil
	case *ecdsa.PublicKey:
		return a.curve != nil && pub.Curve == a.curve
	}
	return false
}

// verify checks t's signature with k, which must fit t.
func (t signedToken) verify(k verificationKey) bool {
	a := signatureAlgs[t.alg]
	h := a.hash.New()
	h.Write([]byte(t.signingInput))
	digest := h.Sum(nil)
	switch pub := k.pub.(type) {
	case *rsa.PublicKey:
		if a.pss {
			// RFC 7518 section 3.5: the salt is as long as the hash.
			opts := &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: a.hash}
			return rsa.VerifyPSS(pub, a.hash, digest, t.signature, opts) == nil
		}
		return rsa.VerifyPKCS1v15(pub, a.hash, digest, t.signature) == nil
	case *ecdsa.PublicKey:
		// RFC 7518 section 3.4: R and S, each the curve's width, big-endian.
		size := (pub.Curve.Params().BitSize + 7) / 8
		if len(t.signature) != 2*size {
			return false
		}
		r := new(big.Int).SetBytes(t.signature[:size])
		s := new(big.Int).SetBytes(t.signature[size:])
		return ecdsa.Verify(pub, digest, r, s)
	}
	return false
}
