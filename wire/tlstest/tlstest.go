// Package tlstest makes certificate authorities and certificates for
// tests of TLS listeners: everything in memory, generated at test time,
// ECDSA P-256 so that generating is fast.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

var serial atomic.Int64

// CA is a self-signed certificate authority.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate in PEM, as a truststore holds it.
	PEM []byte
}

// Leaf is a certificate issued by a CA, with its key.
type Leaf struct {
	// CertPEM is the certificate followed by the CA's (the chain);
	// KeyPEM the unencrypted PKCS#8 private key.
	CertPEM, KeyPEM []byte
	TLS             tls.Certificate
}

// newKeyAndTemplate is a fresh key and a certificate template for cn,
// valid from an hour ago for a day.
func newKeyAndTemplate(t testing.TB, cn string) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key, &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"Strait tests"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

// NewCA makes a CA named cn.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	key, tmpl := newKeyAndTemplate(t, cn)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage |= x509.KeyUsageCertSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &CA{Cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Pool is a cert pool holding the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Issue makes a certificate for cn, good for serving (hosts: DNS names or
// IP addresses; none: localhost and 127.0.0.1) and for client auth.
func (ca *CA) Issue(t testing.TB, cn string, hosts ...string) *Leaf {
	t.Helper()
	if len(hosts) == 0 {
		hosts = []string{"localhost", "127.0.0.1"}
	}
	key, tmpl := newKeyAndTemplate(t, cn)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	l := &Leaf{
		CertPEM: append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca.PEM...),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}),
	}
	if l.TLS, err = tls.X509KeyPair(l.CertPEM, l.KeyPEM); err != nil {
		t.Fatal(err)
	}
	return l
}

// ServerConfig serves leaf; with clientCAs set, client certificates are
// required and verified against them.
func ServerConfig(leaf *Leaf, clientCAs *x509.CertPool) *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{leaf.TLS}, MinVersion: tls.VersionTLS12}
	if clientCAs != nil {
		c.ClientCAs, c.ClientAuth = clientCAs, tls.RequireAndVerifyClientCert
	}
	return c
}

// ClientConfig trusts ca and presents leaf when not nil, whatever CAs
// the server asks for (as librdkafka and the JDK with one key do; Go's
// default would send nothing when the issuer is not among them).
func ClientConfig(ca *CA, leaf *Leaf) *tls.Config {
	c := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	if leaf != nil {
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &leaf.TLS, nil }
	}
	return c
}

// WriteKeystore writes leaf's key and chain to one PEM file in dir, as
// Kafka's ssl.keystore.location (type PEM) holds them, and returns its
// path.
func WriteKeystore(t testing.TB, dir, name string, leaf *Leaf) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, append(append([]byte(nil), leaf.KeyPEM...), leaf.CertPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// WriteFile writes data to dir/name and returns its path.
func WriteFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// BrokerSSLConfig is the ssl.* server.properties of a Strait node serving
// leaf, with ca as its truststore (PEM files written to dir), for tests
// that put the node's listeners on SSL.
func BrokerSSLConfig(t testing.TB, dir string, ca *CA, leaf *Leaf) []string {
	t.Helper()
	return []string{
		"ssl.keystore.type=PEM",
		"ssl.keystore.location=" + WriteKeystore(t, dir, "broker.pem", leaf),
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + WriteFile(t, dir, "ca.pem", ca.PEM),
	}
}

// AllSSLMutualConfig is the configuration of a Strait node whose client
// and controller listeners are both SSL with client certificates
// required, serving a certificate for localhost and 127.0.0.1 issued by
// ca: the setting of the tests that run a whole cluster over mutual TLS.
func AllSSLMutualConfig(t testing.TB, dir string, ca *CA) []string {
	t.Helper()
	return append([]string{"listener.security.protocol.map=PLAINTEXT:SSL,CONTROLLER:SSL", "ssl.client.auth=required"},
		BrokerSSLConfig(t, dir, ca, ca.Issue(t, "broker", "localhost", "127.0.0.1"))...)
}
