// Package scramcred is what a stored SCRAM credential is (Kafka's
// ScramMechanism and ScramFormatter): the mechanism type codes the
// metadata records and the protocol carry, the iteration bounds, and the
// key derivation of RFC 5802 that the controller's ScramControlManager, the
// bootstrap credentials and the SASL server (wire/sasl/scram) share. It is
// a leaf of raftmeta's with no dependency outside the standard library, so
// that the controller does not import the wire layer above it (DESIGN.md
// §2).
package scramcred

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
)

// The mechanisms' IANA names.
const (
	SHA256 = "SCRAM-SHA-256"
	SHA512 = "SCRAM-SHA-512"
)

// Iteration bounds of a stored credential: Kafka's ScramMechanism
// minIterations (4096 for both hashes, RFC 7677's minimum) and the
// controller's ScramControlManager.MAX_ITERATIONS.
const (
	MinIterations = 4096
	MaxIterations = 16384
)

// DefaultIterations is what kafka-storage format --add-scram and
// kafka-configs use when no iterations= is given.
const DefaultIterations = 4096

// The mechanism type codes of the protocol and the metadata records
// (org.apache.kafka.clients.admin.ScramMechanism): 0 is UNKNOWN.
const (
	TypeUnknown int8 = 0
	TypeSHA256  int8 = 1
	TypeSHA512  int8 = 2
)

// MechanismName is the name of a type code, or "" for an unknown one.
func MechanismName(t int8) string {
	switch t {
	case TypeSHA256:
		return SHA256
	case TypeSHA512:
		return SHA512
	}
	return ""
}

// MechanismType is the type code of a mechanism name, or TypeUnknown.
func MechanismType(name string) int8 {
	switch name {
	case SHA256:
		return TypeSHA256
	case SHA512:
		return TypeSHA512
	}
	return TypeUnknown
}

// HashFor is the hash function of a mechanism name.
func HashFor(mechanism string) (func() hash.Hash, error) {
	switch mechanism {
	case SHA256:
		return sha256.New, nil
	case SHA512:
		return sha512.New, nil
	}
	return nil, fmt.Errorf("scram: unknown mechanism %q", mechanism)
}

// SaltedPassword is Hi(Normalize(password), salt, i) of RFC 5802 section
// 2.2: PBKDF2 with HMAC of the mechanism's hash. Like Kafka (and franz-go)
// the password is used as given, without SASLprep.
func SaltedPassword(mechanism, password string, salt []byte, iterations int) ([]byte, error) {
	h, err := HashFor(mechanism)
	if err != nil {
		return nil, err
	}
	return pbkdf2.Key(h, password, salt, iterations, h().Size())
}

// Keys derives what the server stores of a salted password (RFC 5802
// section 3): StoredKey = H(HMAC(SaltedPassword, "Client Key")) and
// ServerKey = HMAC(SaltedPassword, "Server Key"), as Kafka's
// ScramControlManager does for an AlterUserScramCredentials upsertion.
func Keys(mechanism string, saltedPassword []byte) (storedKey, serverKey []byte, err error) {
	h, err := HashFor(mechanism)
	if err != nil {
		return nil, nil, err
	}
	clientKey := HMAC(h, saltedPassword, []byte("Client Key"))
	return H(h, clientKey), HMAC(h, saltedPassword, []byte("Server Key")), nil
}

// HMAC is HMAC(key, msg) of RFC 5802 with hash h.
func HMAC(h func() hash.Hash, key, msg []byte) []byte {
	m := hmac.New(h, key)
	m.Write(msg)
	return m.Sum(nil)
}

// H is H(b) of RFC 5802: hash h of b.
func H(h func() hash.Hash, b []byte) []byte {
	d := h()
	d.Write(b)
	return d.Sum(nil)
}
