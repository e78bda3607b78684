package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/wire/tlsconf"
)

// SkipDeletedOffsetsConfig is the mirror config that sets
// Config.SkipDeletedOffsets (validated by raftmeta with the other mirror
// configs).
const SkipDeletedOffsetsConfig = "mirror.offsets.skip.enable"

// SkipsDeletedOffsets reports whether a mirror's configs set
// mirror.offsets.skip.enable.
func SkipsDeletedOffsets(configs map[string]string) bool {
	return strings.EqualFold(strings.TrimSpace(configs[SkipDeletedOffsetsConfig]), "true")
}

// BootstrapServers is a mirror's bootstrap.servers as a list (entries
// trimmed, empty ones skipped, as Kafka's LIST type).
func BootstrapServers(configs map[string]string) []string {
	var out []string
	for _, s := range strings.Split(configs["bootstrap.servers"], ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ClientOptions maps a mirror's client configs (the MIRROR config resource,
// raftmeta/mirror_config.go lists the accepted keys) to franz-go options:
// security.protocol PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL; SASL PLAIN
// or SCRAM-SHA-256/512 with the credentials of sasl.jaas.config; TLS from
// the inline PEM stores (ssl.truststore.certificates,
// ssl.keystore.certificate.chain and ssl.keystore.key), the TLS versions
// (ssl.protocol, ssl.enabled.protocols), ssl.cipher.suites and
// ssl.endpoint.identification.algorithm ("" keeps the chain check and
// drops the host name check, as Kafka's clients do). bootstrap.servers is
// not an option here: it is source.Config.BootstrapServers
// (BootstrapServers). The configs were validated when they were stored
// (raftmeta.ValidateMirrorConfigs); an error here means a value this
// version cannot use.
//
// dial, when not nil, makes the client's connections (the broker's own
// dialer, which tests replace to cut links); TLS then runs over it, as kgo
// takes either a dialer or a TLS config, not both.
func ClientOptions(configs map[string]string, dial Dialer) ([]kgo.Opt, error) {
	proto := strings.ToUpper(strings.TrimSpace(configs["security.protocol"]))
	if proto == "" {
		proto = "PLAINTEXT"
	}
	var useTLS, useSASL bool
	switch proto {
	case "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return nil, fmt.Errorf("mirror config security.protocol: %q is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", proto)
	}
	var opts []kgo.Opt
	if useTLS {
		tc, err := tlsConfig(configs)
		if err != nil {
			return nil, err
		}
		if dial == nil {
			opts = append(opts, kgo.DialTLSConfig(tc))
		} else {
			opts = append(opts, kgo.Dialer(tlsconf.DialOver(dial, tc)))
		}
	} else if dial != nil {
		opts = append(opts, kgo.Dialer(dial))
	}
	if useSASL {
		m, err := saslOption(configs)
		if err != nil {
			return nil, err
		}
		opts = append(opts, m)
	}
	return opts, nil
}

func saslOption(configs map[string]string) (kgo.Opt, error) {
	jaas, ok := configs["sasl.jaas.config"]
	if !ok {
		return nil, errors.New("mirror config sasl.jaas.config is missing: SASL needs the source credentials")
	}
	login, err := raftmeta.ParseMirrorJAAS(jaas)
	if err != nil {
		// The value is a secret: never quote it.
		return nil, fmt.Errorf("mirror config sasl.jaas.config: %w", err)
	}
	mech := strings.TrimSpace(configs["sasl.mechanism"])
	if mech == "" {
		mech = "PLAIN"
	}
	switch mech {
	case "PLAIN":
		return kgo.SASL(plain.Auth{User: login.Username, Pass: login.Password}.AsMechanism()), nil
	case "SCRAM-SHA-256":
		return kgo.SASL(scram.Auth{User: login.Username, Pass: login.Password}.AsSha256Mechanism()), nil
	case "SCRAM-SHA-512":
		return kgo.SASL(scram.Auth{User: login.Username, Pass: login.Password}.AsSha512Mechanism()), nil
	}
	return nil, fmt.Errorf("mirror config sasl.mechanism: %q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mech)
}

// Dialer is net.Dialer.DialContext's shape (kgo.Dialer's).
type Dialer = func(ctx context.Context, network, addr string) (net.Conn, error)

func tlsConfig(configs map[string]string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if pemCerts := configs["ssl.truststore.certificates"]; strings.TrimSpace(pemCerts) != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(pemCerts)) {
			return nil, errors.New("mirror config ssl.truststore.certificates: no PEM certificate")
		}
		tc.RootCAs = pool
	}
	chain, key := configs["ssl.keystore.certificate.chain"], configs["ssl.keystore.key"]
	if chain != "" || key != "" {
		cert, err := tls.X509KeyPair([]byte(chain), []byte(key))
		if err != nil {
			// Not wrapped: the error could quote the key.
			return nil, errors.New("mirror config ssl.keystore.key / ssl.keystore.certificate.chain: the key and chain do not form a key pair")
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	// ssl.enabled.protocols bounds the versions; ssl.protocol (TLS,
	// TLSv1.2, TLSv1.3) names the newest the client offers.
	enabled := configs["ssl.enabled.protocols"]
	if _, set := configs["ssl.enabled.protocols"]; !set {
		enabled = "TLSv1.2,TLSv1.3"
	}
	lo, hi, bad := tlsconf.Versions(enabled)
	if bad != "" {
		return nil, fmt.Errorf("mirror config ssl.enabled.protocols: %q is not TLSv1.2 or TLSv1.3", bad)
	}
	if lo != 0 {
		tc.MinVersion, tc.MaxVersion = lo, hi
	}
	if p := strings.TrimSpace(configs["ssl.protocol"]); p != "" && p != "TLS" {
		v, ok := tlsconf.Version(p)
		if !ok {
			return nil, fmt.Errorf("mirror config ssl.protocol: %q is not TLS, TLSv1.2 or TLSv1.3", p)
		}
		if tc.MaxVersion == 0 || v < tc.MaxVersion {
			tc.MaxVersion = v
		}
		if tc.MinVersion > tc.MaxVersion {
			return nil, fmt.Errorf("mirror config ssl.protocol %s is below every version of ssl.enabled.protocols", p)
		}
	}
	if suites := configs["ssl.cipher.suites"]; strings.TrimSpace(suites) != "" {
		ids, err := tlsconf.CipherSuites(suites)
		if err != nil {
			return nil, fmt.Errorf("mirror config ssl.cipher.suites: %w", err)
		}
		tc.CipherSuites = ids
	}
	if alg, set := configs["ssl.endpoint.identification.algorithm"]; set && strings.TrimSpace(alg) == "" {
		// Kafka's clients then check the chain but not the host name; Go
		// has no such switch, so verify the chain by hand.
		tc.InsecureSkipVerify = true
		tc.VerifyConnection = tlsconf.VerifyChainOnly(tc.RootCAs)
	}
	return tc, nil
}
