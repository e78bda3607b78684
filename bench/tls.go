package bench

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// tlsMaterial is the throwaway PKI of a --tls run: a CA made when the run
// starts and a server certificate it signs for the brokers' hosts, written
// as PEM (Kafka's ssl.keystore.type=PEM) into a temporary directory that
// close removes. Nothing is checked in and nothing outlives the run; the
// clients trust the CA and nothing else.
type tlsMaterial struct {
	dir string
	// keystore holds the server's PKCS#8 key and its chain (Kafka's PEM
	// keystore), truststore the CA certificate.
	keystore, truststore string
	// client is the clients' configuration: the CA as the only root.
	client *tls.Config
}

// Keystore and truststore file names inside tlsMaterial.dir.
const (
	tlsKeystoreFile   = "broker-keystore.pem"
	tlsTruststoreFile = "ca.pem"
)

// newTLSMaterial makes a CA and a server certificate valid for hosts (DNS
// names or IP addresses) plus localhost and the loopback addresses. Keys
// are ECDSA P-256: quick to make, and the handshake is not what the
// benchmark measures; the record cipher (AES-GCM, negotiated the same way
// whatever the key) is.
func newTLSMaterial(hosts []string) (m *tlsMaterial, err error) {
	caKey, caTmpl, err := newCertKey("strait-bench CA", 1)
	if err != nil {
		return nil, err
	}
	caTmpl.IsCA, caTmpl.BasicConstraintsValid = true, true
	caTmpl.KeyUsage |= x509.KeyUsageCertSign
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("bench: tls: make the CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("bench: tls: %w", err)
	}

	key, tmpl, err := newCertKey("strait-bench broker", 2)
	if err != nil {
		return nil, err
	}
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	for _, h := range append([]string{"localhost", "127.0.0.1", "::1"}, hosts...) {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("bench: tls: make the broker certificate: %w", err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("bench: tls: %w", err)
	}

	dir, err := os.MkdirTemp("", "strait-bench-tls-")
	if err != nil {
		return nil, fmt.Errorf("bench: tls: %w", err)
	}
	m = &tlsMaterial{
		dir:        dir,
		keystore:   filepath.Join(dir, tlsKeystoreFile),
		truststore: filepath.Join(dir, tlsTruststoreFile),
	}
	defer func() {
		if err != nil {
			_ = m.close()
		}
	}()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	keystore := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})
	keystore = append(keystore, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	keystore = append(keystore, caPEM...)
	if err := os.WriteFile(m.keystore, keystore, 0o600); err != nil {
		return nil, fmt.Errorf("bench: tls: %w", err)
	}
	if err := os.WriteFile(m.truststore, caPEM, 0o600); err != nil {
		return nil, fmt.Errorf("bench: tls: %w", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	m.client = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return m, nil
}

// newCertKey is a fresh P-256 key and a certificate template named cn,
// valid from an hour ago (clock skew between processes does not matter on
// one machine, but costs nothing) for a day: longer than any run.
func newCertKey(cn string, serial int64) (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: tls: make a key: %w", err)
	}
	now := time.Now()
	return key, &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}, nil
}

// serveArgs are what a `strait serve` target command gets appended: the
// keystore and truststore as Kafka's PEM-typed ssl.* keys. Its listeners
// (the command's own --set listeners=SSL://...) say which listener is SSL.
func (m *tlsMaterial) serveArgs() []string {
	return []string{
		"--set", "ssl.keystore.type=PEM",
		"--set", "ssl.keystore.location=" + m.keystore,
		"--set", "ssl.truststore.type=PEM",
		"--set", "ssl.truststore.location=" + m.truststore,
	}
}

func (m *tlsMaterial) close() error {
	if m == nil {
		return nil
	}
	return os.RemoveAll(m.dir)
}
