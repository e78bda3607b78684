package config

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strait-io/strait/wire/tlstest"
)

// sslBase is a configuration with an SSL listener named SSL.
func sslBase(extra map[string]string) map[string]string {
	m := map[string]string{
		"listeners":                      "PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9094,CONTROLLER://127.0.0.1:9093",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT",
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func TestSSLKeystoreAndTruststore(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	leaf := ca.Issue(t, "broker")
	dir := t.TempDir()
	ks := tlstest.WriteKeystore(t, dir, "ks.pem", leaf)
	ts := tlstest.WriteFile(t, dir, "ca.pem", ca.PEM)

	// From files, client auth as a listener override.
	c, err := New(sslBase(map[string]string{
		"ssl.keystore.type": "PEM", "ssl.keystore.location": ks,
		"ssl.truststore.type": "PEM", "ssl.truststore.location": ts,
		"ssl.client.auth":                   "none",
		"listener.name.ssl.ssl.client.auth": "required",
		"ssl.enabled.protocols":             "TLSv1.3",
	}))
	if err != nil {
		t.Fatal(err)
	}
	tc := c.TLS["SSL"]
	if tc == nil || len(c.TLS) != 1 {
		t.Fatalf("TLS %v", c.TLS)
	}
	if tc.Server.ClientAuth != tls.RequireAndVerifyClientCert || tc.Server.MinVersion != tls.VersionTLS13 || !tc.VerifyHostname {
		t.Fatalf("server config: auth %v min %x verify host %v", tc.Server.ClientAuth, tc.Server.MinVersion, tc.VerifyHostname)
	}
	if len(tc.Server.Certificates[0].Certificate) != 2 {
		t.Fatalf("chain of %d certificates, want 2", len(tc.Server.Certificates[0].Certificate))
	}
	if slices.ContainsFunc(c.Ignored, func(k string) bool { return strings.HasPrefix(k, "ssl.") || strings.Contains(k, ".ssl.") }) {
		t.Fatalf("ssl keys read but listed as ignored: %q", c.Ignored)
	}

	// Inline PEM, no host name verification.
	c, err = New(sslBase(map[string]string{
		"ssl.keystore.type": "PEM", "ssl.keystore.key": string(leaf.KeyPEM), "ssl.keystore.certificate.chain": string(leaf.CertPEM),
		"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.PEM),
		"ssl.endpoint.identification.algorithm": "",
	}))
	if err != nil {
		t.Fatal(err)
	}
	// requested: a certificate is optional, but verified when given.
	if c2, err := New(sslBase(map[string]string{
		"ssl.keystore.type": "PEM", "ssl.keystore.location": ks,
		"ssl.truststore.type": "PEM", "ssl.truststore.location": ts,
		"ssl.client.auth": "requested",
	})); err != nil || c2.TLS["SSL"].Server.ClientAuth != tls.VerifyClientCertIfGiven {
		t.Fatalf("ssl.client.auth=requested: %v", err)
	}
	if tc := c.TLS["SSL"]; tc.VerifyHostname || !tc.Client.InsecureSkipVerify || tc.Client.VerifyConnection == nil || tc.Server.ClientAuth != tls.NoClientCert {
		t.Fatalf("empty ssl.endpoint.identification.algorithm: %+v", tc)
	}
}

func TestSSLConfigErrors(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	leaf := ca.Issue(t, "broker")
	dir := t.TempDir()
	ks := tlstest.WriteKeystore(t, dir, "ks.pem", leaf)
	other := tlstest.WriteKeystore(t, dir, "other.pem", &tlstest.Leaf{KeyPEM: ca.Issue(t, "x").KeyPEM, CertPEM: leaf.CertPEM})
	pemKS := map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": ks}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range pemKS {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		set  map[string]string
		want string
	}{
		{"no keystore", map[string]string{}, "needs a keystore"},
		{"JKS", map[string]string{"ssl.keystore.location": ks}, "ssl.keystore.type=JKS is not supported"},
		{"PKCS12 override", with("listener.name.ssl.ssl.keystore.type", "PKCS12"), "listener.name.ssl.ssl.keystore.type=PKCS12 is not supported"},
		{"keystore password", with("ssl.keystore.password", "x"), "ssl.keystore.password cannot be specified with PEM format"},
		{"key password, key not encrypted", with("ssl.key.password", "x"), "ssl.key.password is set but the private key"},
		{"key of another certificate", with("ssl.keystore.location", other), "does not match"},
		{"missing file", with("ssl.keystore.location", filepath.Join(dir, "nope.pem")), "ssl.keystore.location"},
		{"TLSv1.1", with("ssl.enabled.protocols", "TLSv1.2,TLSv1.1"), `ssl.enabled.protocols: "TLSv1.1" is not supported`},
		{"bad client auth", with("ssl.client.auth", "sometimes"), "ssl.client.auth: invalid value"},
		{"client auth without truststore", with("ssl.client.auth", "required"), "needs a truststore"},
		{"JKS truststore", with("ssl.truststore.location", ks), "ssl.truststore.type=JKS is not supported"},
		{"bad cipher", with("ssl.cipher.suites", "TLS_RSA_WITH_RC4_128_SHA"), "ssl.cipher.suites"},
	} {
		_, err := New(sslBase(tc.set))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// Without an SSL listener the keys are ignored, as before.
	c, err := New(map[string]string{"ssl.keystore.location": ks})
	if err != nil || !slices.Contains(c.Ignored, "ssl.keystore.location") || c.TLS != nil {
		t.Fatalf("no SSL listener: %v, ignored %q", err, c.Ignored)
	}
}

// TestSSLEncryptedKey: a PKCS#8 key encrypted with PBES2 opens with
// ssl.key.password, and a wrong password is refused; both for a key
// encrypted here and, when openssl is installed, by openssl.
func TestSSLEncryptedKey(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	leaf := ca.Issue(t, "broker")
	dir := t.TempDir()
	keys := map[string][]byte{"go": encryptPKCS8(t, leaf.KeyPEM, "s3cret")}
	if _, err := exec.LookPath("openssl"); err == nil {
		plain := tlstest.WriteFile(t, dir, "plain.pem", leaf.KeyPEM)
		out, err := exec.Command("openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", plain, "-passout", "pass:s3cret").Output()
		if err != nil {
			t.Fatalf("openssl: %v", err)
		}
		keys["openssl"] = out
	}
	for name, key := range keys {
		if !strings.Contains(string(key), "ENCRYPTED PRIVATE KEY") {
			t.Fatalf("%s: not an encrypted PKCS#8 key:\n%s", name, key)
		}
		ks := tlstest.WriteFile(t, dir, name+".pem", append(append([]byte(nil), key...), leaf.CertPEM...))
		base := map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": ks}
		if _, err := New(sslBase(base)); err == nil || !strings.Contains(err.Error(), "set ssl.key.password") {
			t.Errorf("%s without a password: %v", name, err)
		}
		base["ssl.key.password"] = "wrong"
		if _, err := New(sslBase(base)); err == nil || !strings.Contains(err.Error(), "wrong password") {
			t.Errorf("%s with a wrong password: %v", name, err)
		}
		base["ssl.key.password"] = "s3cret"
		c, err := New(sslBase(base))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !publicKeysEqual(c.TLS["SSL"].Server.Certificates[0].Leaf.PublicKey, leaf.TLS.Leaf.PublicKey) {
			t.Fatalf("%s: another key", name)
		}
	}
}

// encryptPKCS8 encrypts a PKCS#8 PEM key with PBES2 (PBKDF2-HMAC-SHA256,
// AES-256-CBC), as openssl pkcs8 -topk8 -v2 aes-256-cbc does.
func encryptPKCS8(t *testing.T, keyPEM []byte, password string) []byte {
	t.Helper()
	b, _ := pem.Decode(keyPEM)
	salt, iv := make([]byte, 16), make([]byte, 16)
	rand.Read(salt)
	rand.Read(iv)
	key, err := pbkdf2.Key(sha256.New, password, salt, 2048, 32)
	if err != nil {
		t.Fatal(err)
	}
	pad := 16 - len(b.Bytes)%16
	data := append(append([]byte(nil), b.Bytes...), []byte(strings.Repeat(string(rune(pad)), pad))...)
	block, _ := aes.NewCipher(key)
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(data, data)
	raw := func(v any) asn1.RawValue {
		der, err := asn1.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return asn1.RawValue{FullBytes: der}
	}
	kdf := pbkdf2Params{Salt: salt, Iterations: 2048, PRF: pkix.AlgorithmIdentifier{Algorithm: oidHMACSHA256, Parameters: asn1.NullRawValue}}
	params := pbes2Params{
		KDF:    pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: raw(kdf)},
		Cipher: pkix.AlgorithmIdentifier{Algorithm: oidAES256CBC, Parameters: raw(iv)},
	}
	der, err := asn1.Marshal(encryptedPrivateKeyInfo{Algo: pkix.AlgorithmIdentifier{Algorithm: oidPBES2, Parameters: raw(params)}, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x509.ParsePKCS8PrivateKey(b.Bytes); err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: der})
}
