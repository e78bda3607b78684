package config

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/strait-io/strait/wire/tlsconf"
)

// TLS is the TLS material and policy of one SSL listener, read from the
// ssl.* keys with their listener.name.<listener>.ssl.* overrides as
// Kafka's SslFactory / DefaultSslEngineFactory read them.
type TLS struct {
	// Server serves the listener: the keystore's certificate, the
	// truststore for client certificates, ssl.client.auth.
	Server *tls.Config
	// Client dials the listener from another node (inter-broker and
	// controller links) with the same keystore and truststore. Its
	// ServerName is for the dialer to set; when VerifyHostname is false
	// (ssl.endpoint.identification.algorithm empty) the chain is
	// verified without the host name.
	Client *tls.Config
	// VerifyHostname is ssl.endpoint.identification.algorithm=https.
	VerifyHostname bool
}

// sslDefaults are Kafka's defaults (SslConfigs, BrokerSecurityConfigs).
var sslDefaults = map[string]string{
	"ssl.keystore.type":                     "JKS",
	"ssl.truststore.type":                   "JKS",
	"ssl.client.auth":                       "none",
	"ssl.enabled.protocols":                 "TLSv1.2,TLSv1.3",
	"ssl.protocol":                          "TLSv1.3",
	"ssl.endpoint.identification.algorithm": "https",
}

// buildTLS reads the TLS settings of every SSL listener into c.TLS and
// drops the ssl keys it read from c.Ignored.
func (c *Config) buildTLS() error {
	used := map[string]bool{}
	// The controller listener counts even on a broker-only node, which
	// does not bind it but dials it (raft, the controller channel).
	var names []string
	for _, l := range c.Listeners {
		names = append(names, l.Name)
	}
	for _, n := range c.ControllerListenerNames {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, name := range names {
		if p := c.SecurityProtocols[name]; p != SSL && p != SASLSSL {
			continue
		}
		get := func(key string) (string, string, bool) {
			over := "listener.name." + strings.ToLower(name) + "." + key
			v, plain := c.Raw[key]
			if plain {
				used[key] = true // read, even when overridden
			}
			if ov, ok := c.Raw[over]; ok {
				used[over] = true
				return ov, over, true
			}
			if plain {
				return v, key, true
			}
			return sslDefaults[key], key, false
		}
		t, err := buildListenerTLS(get)
		if err != nil {
			return fmt.Errorf("listener %s (%s): %w", name, c.SecurityProtocols[name], err)
		}
		if c.TLS == nil {
			c.TLS = map[string]*TLS{}
		}
		c.TLS[name] = t
	}
	if len(used) > 0 {
		c.Ignored = slices.DeleteFunc(c.Ignored, func(k string) bool { return used[k] })
	}
	return nil
}

// sslGetter returns a key's value (or Kafka's default), the key actually
// read (a listener override or the plain key), and whether it was set.
type sslGetter func(key string) (value, name string, set bool)

func buildListenerTLS(get sslGetter) (*TLS, error) {
	cert, err := loadKeystore(get)
	if err != nil {
		return nil, err
	}
	roots, err := loadTruststore(get)
	if err != nil {
		return nil, err
	}
	minV, maxV, err := tlsVersions(get)
	if err != nil {
		return nil, err
	}
	suites, err := cipherSuites(get)
	if err != nil {
		return nil, err
	}
	auth, authKey, _ := get("ssl.client.auth")
	var clientAuth tls.ClientAuthType
	switch strings.ToLower(strings.TrimSpace(auth)) {
	case "none", "":
		clientAuth = tls.NoClientCert
	case "requested":
		clientAuth = tls.VerifyClientCertIfGiven
	case "required":
		clientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("%s: invalid value %q: must be one of required, requested, none", authKey, auth)
	}
	if clientAuth != tls.NoClientCert && roots == nil {
		return nil, fmt.Errorf("%s=%s needs a truststore to verify client certificates: set ssl.truststore.location or ssl.truststore.certificates (ssl.truststore.type=PEM)", authKey, auth)
	}
	algo, algoKey, _ := get("ssl.endpoint.identification.algorithm")
	verifyHost := false
	switch strings.ToLower(strings.TrimSpace(algo)) {
	case "https":
		verifyHost = true
	case "":
	default:
		return nil, fmt.Errorf("%s: unsupported value %q: use https or leave it empty", algoKey, algo)
	}
	common := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   minV,
		MaxVersion:   maxV,
		CipherSuites: suites,
	}
	t := &TLS{VerifyHostname: verifyHost, Server: common.Clone(), Client: common.Clone()}
	t.Server.ClientAuth, t.Server.ClientCAs = clientAuth, roots
	t.Client.RootCAs = roots
	if !verifyHost {
		// Kafka with an empty ssl.endpoint.identification.algorithm
		// still verifies the chain against the truststore.
		t.Client.InsecureSkipVerify = true
		t.Client.VerifyConnection = tlsconf.VerifyChainOnly(roots)
	}
	return t, nil
}

// requirePEM refuses the store types Strait cannot read, naming the key.
func requirePEM(get sslGetter, typeKey string) error {
	typ, name, _ := get(typeKey)
	switch strings.ToUpper(strings.TrimSpace(typ)) {
	case "PEM":
		return nil
	case "JKS", "PKCS12":
		return fmt.Errorf("%s=%s is not supported: Strait reads PEM only; set %s=PEM (convert with keytool/openssl)", name, typ, name)
	default:
		return fmt.Errorf("%s: unknown store type %q: Strait reads PEM only", name, typ)
	}
}

// loadKeystore reads the listener's private key and certificate chain:
// ssl.keystore.location (a PEM file holding both) or the inline
// ssl.keystore.key and ssl.keystore.certificate.chain (Kafka's
// DefaultSslEngineFactory.PemStore).
func loadKeystore(get sslGetter) (tls.Certificate, error) {
	loc, locKey, hasLoc := get("ssl.keystore.location")
	key, keyKey, hasKey := get("ssl.keystore.key")
	chain, chainKey, hasChain := get("ssl.keystore.certificate.chain")
	if !hasLoc && !hasKey && !hasChain {
		return tls.Certificate{}, errors.New("an SSL listener needs a keystore: set ssl.keystore.type=PEM and ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain")
	}
	if err := requirePEM(get, "ssl.keystore.type"); err != nil {
		return tls.Certificate{}, err
	}
	if _, name, set := get("ssl.keystore.password"); set {
		// DefaultSslEngineFactory: "SSL key store password cannot be
		// specified with PEM format, only key password may be specified".
		return tls.Certificate{}, fmt.Errorf("%s cannot be specified with PEM format, only ssl.key.password may be specified", name)
	}
	var certPEM, keyPEM []byte
	keyFrom := keyKey
	switch {
	case hasLoc && (hasKey || hasChain):
		return tls.Certificate{}, fmt.Errorf("%s and %s/%s are exclusive: give the keystore as a file or inline, not both", locKey, keyKey, chainKey)
	case hasLoc:
		data, err := os.ReadFile(loc)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: %w", locKey, err)
		}
		certPEM, keyPEM, keyFrom = data, data, locKey
	case hasKey && hasChain:
		certPEM, keyPEM = []byte(chain), []byte(key)
	case hasKey:
		return tls.Certificate{}, fmt.Errorf("%s is set without %s", keyKey, chainKey)
	default:
		return tls.Certificate{}, fmt.Errorf("%s is set without %s", chainKey, keyKey)
	}
	var certs [][]byte
	var keyBlock *pem.Block
	for rest := certPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			certs = append(certs, b.Bytes)
		}
	}
	for rest := keyPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			keyBlock = b
			break
		}
	}
	if len(certs) == 0 {
		return tls.Certificate{}, fmt.Errorf("%s: no PEM CERTIFICATE found", map[bool]string{true: locKey, false: chainKey}[hasLoc])
	}
	if keyBlock == nil {
		return tls.Certificate{}, fmt.Errorf("%s: no PEM PRIVATE KEY found", keyFrom)
	}
	password, pwKey, hasPassword := get("ssl.key.password")
	der := keyBlock.Bytes
	if keyBlock.Type == "ENCRYPTED PRIVATE KEY" {
		if !hasPassword {
			return tls.Certificate{}, fmt.Errorf("%s: the private key is encrypted: set ssl.key.password", keyFrom)
		}
		var err error
		if der, err = decryptPKCS8(der, []byte(password)); err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: decrypting the private key with %s: %w", keyFrom, pwKey, err)
		}
	} else if hasPassword {
		// Kafka's PemStore refuses a password for a key that is not
		// encrypted.
		return tls.Certificate{}, fmt.Errorf("%s is set but the private key in %s is not encrypted (ENCRYPTED PRIVATE KEY, PKCS#8)", pwKey, keyFrom)
	}
	priv, err := parsePrivateKey(keyBlock.Type, der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", keyFrom, err)
	}
	cert := tls.Certificate{Certificate: certs, PrivateKey: priv}
	if cert.Leaf, err = x509.ParseCertificate(certs[0]); err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: parsing the certificate: %w", keyFrom, err)
	}
	// The key must be the certificate's.
	pub, ok := priv.(interface{ Public() crypto.PublicKey })
	if !ok || !publicKeysEqual(cert.Leaf.PublicKey, pub.Public()) {
		return tls.Certificate{}, fmt.Errorf("%s: the private key does not match the first certificate's public key", keyFrom)
	}
	return cert, nil
}

// loadTruststore reads the CA certificates that verify peers:
// ssl.truststore.location (a PEM file) or ssl.truststore.certificates
// (inline PEM). Nil when neither is set: the system roots verify servers,
// and no client certificate can be verified.
func loadTruststore(get sslGetter) (*x509.CertPool, error) {
	loc, locKey, hasLoc := get("ssl.truststore.location")
	inline, inlineKey, hasInline := get("ssl.truststore.certificates")
	if !hasLoc && !hasInline {
		return nil, nil
	}
	if err := requirePEM(get, "ssl.truststore.type"); err != nil {
		return nil, err
	}
	if _, name, set := get("ssl.truststore.password"); set {
		return nil, fmt.Errorf("%s cannot be specified for PEM format", name)
	}
	data, from := []byte(inline), inlineKey
	switch {
	case hasLoc && hasInline:
		return nil, fmt.Errorf("%s and %s are exclusive", locKey, inlineKey)
	case hasLoc:
		var err error
		if data, err = os.ReadFile(loc); err != nil {
			return nil, fmt.Errorf("%s: %w", locKey, err)
		}
		from = locKey
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s: no PEM CERTIFICATE found", from)
	}
	return pool, nil
}

// tlsVersions reads ssl.enabled.protocols (and checks ssl.protocol):
// TLSv1.2 and TLSv1.3 only.
func tlsVersions(get sslGetter) (uint16, uint16, error) {
	val, key, _ := get("ssl.enabled.protocols")
	minV, maxV, bad := tlsconf.Versions(val)
	if bad != "" {
		return 0, 0, fmt.Errorf("%s: %q is not supported: Strait speaks TLSv1.2 and TLSv1.3 only", key, bad)
	}
	if minV == 0 {
		return 0, 0, fmt.Errorf("%s: no protocol enabled: list TLSv1.2 and/or TLSv1.3", key)
	}
	switch p, pkey, _ := get("ssl.protocol"); strings.TrimSpace(p) {
	case "TLSv1.2", "TLSv1.3", "TLS":
	default:
		return 0, 0, fmt.Errorf("%s: %q is not supported: use TLSv1.3 or TLSv1.2", pkey, p)
	}
	return minV, maxV, nil
}

// cipherSuites reads ssl.cipher.suites; unset leaves Go's secure
// defaults.
func cipherSuites(get sslGetter) ([]uint16, error) {
	val, key, set := get("ssl.cipher.suites")
	if !set {
		return nil, nil
	}
	ids, err := tlsconf.CipherSuites(val)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return ids, nil
}
