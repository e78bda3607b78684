package config

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// parsePrivateKey parses a PEM private key block's DER: PKCS#8 ("PRIVATE
// KEY", what Kafka's PEM keystore takes), and also PKCS#1 RSA and SEC 1 EC
// keys as openssl writes them.
func parsePrivateKey(pemType string, der []byte) (crypto.PrivateKey, error) {
	switch pemType {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(der)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(der)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parsing the private key (PKCS#8): %w", err)
	}
	return k, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	e, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && e.Equal(b)
}

// The ASN.1 of an encrypted PKCS#8 key (RFC 5208 EncryptedPrivateKeyInfo)
// with PBES2 (RFC 8018): PBKDF2 for the key, AES-CBC or DES-EDE3-CBC for
// the cipher — what `openssl pkcs8 -topk8 -v2 ...` and Java's keytool
// write, and what Kafka's ssl.key.password decrypts.
type encryptedPrivateKeyInfo struct {
	Algo pkix.AlgorithmIdentifier
	Data []byte
}

type pbes2Params struct {
	KDF    pkix.AlgorithmIdentifier
	Cipher pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                      `asn1:"optional"`
	PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
}

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

// decryptPKCS8 decrypts an ENCRYPTED PRIVATE KEY to its PKCS#8 DER.
// Only PBES2 is read; the PKCS#12 PBE schemes (PBE-SHA1-3DES, openssl's
// -v1) are refused by name.
func decryptPKCS8(der, password []byte) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("not an encrypted PKCS#8 key: %w", err)
	}
	if !info.Algo.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("encryption scheme %v is not supported: use PBES2 (openssl pkcs8 -topk8 -v2 aes-256-cbc)", info.Algo.Algorithm)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algo.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("PBES2 parameters: %w", err)
	}
	if !params.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("key derivation %v is not supported: use PBKDF2", params.KDF.Algorithm)
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("PBKDF2 parameters: %w", err)
	}
	var prf func() hash.Hash
	switch alg := kdf.PRF.Algorithm; {
	case len(alg) == 0 || alg.Equal(oidHMACSHA1):
		prf = sha1.New
	case alg.Equal(oidHMACSHA256):
		prf = sha256.New
	case alg.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("PBKDF2 PRF %v is not supported", alg)
	}
	var keyLen int
	var newBlock func([]byte) (cipher.Block, error)
	switch alg := params.Cipher.Algorithm; {
	case alg.Equal(oidAES128CBC):
		keyLen, newBlock = 16, aes.NewCipher
	case alg.Equal(oidAES192CBC):
		keyLen, newBlock = 24, aes.NewCipher
	case alg.Equal(oidAES256CBC):
		keyLen, newBlock = 32, aes.NewCipher
	case alg.Equal(oidDESEDE3CBC):
		keyLen, newBlock = 24, des.NewTripleDESCipher
	default:
		return nil, fmt.Errorf("cipher %v is not supported: use AES-CBC", alg)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.Cipher.Parameters.FullBytes, &iv); err != nil {
		return nil, fmt.Errorf("cipher IV: %w", err)
	}
	key, err := pbkdf2.Key(prf, string(password), kdf.Salt, kdf.Iterations, keyLen)
	if err != nil {
		return nil, err
	}
	block, err := newBlock(key)
	if err != nil {
		return nil, err
	}
	if len(iv) != block.BlockSize() || len(info.Data) == 0 || len(info.Data)%block.BlockSize() != 0 {
		return nil, errors.New("malformed ciphertext")
	}
	out := make([]byte, len(info.Data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, info.Data)
	// PKCS#7 padding; a wrong password shows here (or in the parse).
	pad := int(out[len(out)-1])
	if pad == 0 || pad > block.BlockSize() {
		return nil, errors.New("wrong password or corrupt key")
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, errors.New("wrong password or corrupt key")
		}
	}
	out = out[:len(out)-pad]
	if _, err := x509.ParsePKCS8PrivateKey(out); err != nil {
		return nil, errors.New("wrong password or corrupt key")
	}
	return out, nil
}
