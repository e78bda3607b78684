// Package tlsconf holds what the broker's SSL listeners and the mirror's
// source client both need to turn Kafka's ssl.* settings into a Go
// tls.Config.
package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
)

// VerifyChainOnly verifies the peer's chain against roots (the system
// pool when nil) without its host name: Kafka's clients with an empty
// ssl.endpoint.identification.algorithm. Go verifies the chain only
// together with the name, so a config using it sets InsecureSkipVerify
// and this as VerifyConnection.
func VerifyChainOnly(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("the peer sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
		return err
	}
}

// CipherSuites maps ssl.cipher.suites, a comma-separated list of IANA
// names (the JDK uses them too), to Go's secure suites. TLS 1.3 suites
// are accepted by name but left out: Go does not let them be chosen.
func CipherSuites(list string) ([]uint16, error) {
	byName := map[string]*tls.CipherSuite{}
	for _, s := range tls.CipherSuites() {
		byName[s.Name] = s
	}
	var out []uint16
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		s, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("%q is not a secure cipher suite Go's TLS knows", n)
		}
		if !slices.Equal(s.SupportedVersions, []uint16{tls.VersionTLS13}) {
			out = append(out, s.ID)
		}
	}
	return out, nil
}

// DialOver dials with dial and runs a TLS client handshake with tc over
// the connection, naming the server by the address's host unless tc
// names it (as kgo.DialTLSConfig does): for the clients that take one
// dialer for both, such as kgo, which refuses a Dialer beside a TLS config.
func DialOver(dial func(ctx context.Context, network, addr string) (net.Conn, error), tc *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cfg := tc
		if cfg.ServerName == "" {
			if host, _, err := net.SplitHostPort(addr); err == nil {
				cfg = tc.Clone()
				cfg.ServerName = host
			}
		}
		conn := tls.Client(raw, cfg)
		if err := conn.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, err
		}
		return conn, nil
	}
}

// versions are the names Kafka's ssl.protocol and ssl.enabled.protocols
// take that Go's TLS implements (and Strait allows: 1.2 and 1.3).
var versions = map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}

// Version is the TLS version of a Kafka protocol name, ok false for one
// Strait does not speak.
func Version(name string) (v uint16, ok bool) {
	v, ok = versions[strings.TrimSpace(name)]
	return v, ok
}

// Versions reads ssl.enabled.protocols (comma-separated): the lowest and
// highest version listed, both 0 for an empty list, or the first name
// Strait does not speak as bad (the caller names its key).
func Versions(list string) (lo, hi uint16, bad string) {
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, ok := versions[p]
		if !ok {
			return 0, 0, p
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return lo, hi, ""
}
