package kit

import (
	"bufio"
	"bytes"
	"encoding/pem"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/source"
)

// Conn is a resolved connection: where and how to reach the cluster.
type Conn struct {
	Brokers  []string
	ClientID string
	// Opts are the franz-go options of the security settings.
	Opts []kgo.Opt
}

// settingKeys are the settings a profile, --command-config and -X accept.
var settingKeys = []string{
	"brokers", "bootstrap.servers", "client.id",
	"security.protocol",
	"ssl.truststore.location", "ssl.truststore.certificates", "ssl.truststore.type",
	"ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.certificate.chain", "ssl.keystore.key",
	"ssl.endpoint.identification.algorithm", "ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites",
	"sasl.mechanism", "sasl.jaas.config",
	"tls.enabled", "tls.ca", "tls.cert", "tls.key", "user", "pass",
}

// SettingKeys lists the accepted setting keys (for completion and help).
func SettingKeys() []string { return slices.Clone(settingKeys) }

// Resolve merges the profile, the environment, --command-config, -X and
// --brokers (last wins) into a Conn. An error names the setting at fault
// and is a usage error.
func (g *Globals) Resolve(env Env) (*Conn, error) {
	settings := map[string]string{}
	merge := func(from string, m map[string]string) error {
		for k, v := range m {
			if !slices.Contains(settingKeys, k) {
				return fmt.Errorf("%s: unknown setting %q (known: %s)", from, k, strings.Join(settingKeys, ", "))
			}
			if k == "bootstrap.servers" {
				k = "brokers"
			}
			settings[k] = v
		}
		return nil
	}
	pf, err := LoadProfiles(ProfilePath(g.ConfigFile, env))
	if err != nil {
		return nil, err
	}
	name := g.Profile
	if name == "" {
		name = env.Getenv("STRAIT_PROFILE")
	}
	if name == "" {
		name = pf.Current
	}
	if name != "" {
		p, ok := pf.Profiles[name]
		if !ok {
			return nil, fmt.Errorf("no profile %q in %s", name, pf.Path)
		}
		if err := merge("profile "+name, p); err != nil {
			return nil, err
		}
	}
	if b := env.Getenv("STRAIT_BROKERS"); b != "" {
		settings["brokers"] = b
	}
	if g.CommandConfig != "" {
		props, err := ReadProperties(g.CommandConfig)
		if err != nil {
			return nil, fmt.Errorf("--command-config: %w", err)
		}
		if err := merge("--command-config "+g.CommandConfig, props); err != nil {
			return nil, err
		}
	}
	if err := merge("-X", g.X.Map()); err != nil {
		return nil, err
	}
	if g.Brokers != "" {
		settings["brokers"] = g.Brokers
	}
	return settingsConn(settings)
}

// settingsConn turns merged settings into a Conn: the short forms become
// Kafka's properties, files are read, and the mirror's client options
// (source.ClientOptions: the same reading of security.protocol, ssl.* and
// sasl.* the broker applies to a mirror's source) make the franz-go
// options.
func settingsConn(s map[string]string) (*Conn, error) {
	brokers, err := ParseBrokers(orDefault(s["brokers"], "127.0.0.1:9092"))
	if err != nil {
		return nil, fmt.Errorf("brokers: %w", err)
	}
	c := &Conn{Brokers: brokers, ClientID: orDefault(s["client.id"], "strait-cli")}
	props := map[string]string{}
	for _, k := range []string{"security.protocol", "ssl.endpoint.identification.algorithm", "ssl.protocol",
		"ssl.enabled.protocols", "ssl.cipher.suites", "sasl.mechanism", "sasl.jaas.config",
		"ssl.truststore.certificates", "ssl.keystore.certificate.chain", "ssl.keystore.key"} {
		if v, ok := s[k]; ok {
			props[k] = v
		}
	}
	useTLS := false
	if v, ok := s["tls.enabled"]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("tls.enabled: %q is not true or false", v)
		}
		useTLS = b
	}
	for _, f := range []struct{ key, alias string }{{"ssl.truststore.location", "tls.ca"}, {"ssl.keystore.location", "tls.cert"}} {
		if s[f.alias] != "" {
			useTLS = true
			if s[f.key] == "" {
				s[f.key] = s[f.alias]
			}
		}
	}
	if path := s["ssl.truststore.location"]; path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %w", err)
		}
		props["ssl.truststore.certificates"] = string(b)
	}
	if path := s["ssl.keystore.location"]; path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("ssl.keystore.location: %w", err)
		}
		if s["tls.key"] != "" {
			key, err := os.ReadFile(s["tls.key"])
			if err != nil {
				return nil, fmt.Errorf("tls.key: %w", err)
			}
			b = append(append(b, '\n'), key...)
		}
		chain, key := splitPEM(b)
		if len(chain) == 0 || len(key) == 0 {
			return nil, fmt.Errorf("ssl.keystore.location %s: want a PEM certificate chain and its private key (tls.key names a separate key file)", path)
		}
		props["ssl.keystore.certificate.chain"], props["ssl.keystore.key"] = string(chain), string(key)
	}
	if user, pass := s["user"], s["pass"]; user != "" || pass != "" {
		if props["sasl.jaas.config"] == "" {
			module := "org.apache.kafka.common.security.scram.ScramLoginModule"
			if strings.EqualFold(orDefault(props["sasl.mechanism"], "PLAIN"), "PLAIN") {
				module = "org.apache.kafka.common.security.plain.PlainLoginModule"
			}
			props["sasl.jaas.config"] = fmt.Sprintf("%s required username=%s password=%s;", module, strconv.Quote(user), strconv.Quote(pass))
		}
	}
	if props["security.protocol"] == "" {
		sasl := props["sasl.mechanism"] != "" || props["sasl.jaas.config"] != ""
		switch {
		case useTLS && sasl:
			props["security.protocol"] = "SASL_SSL"
		case useTLS:
			props["security.protocol"] = "SSL"
		case sasl:
			props["security.protocol"] = "SASL_PLAINTEXT"
		}
	}
	opts, err := source.ClientOptions(props, nil)
	if err != nil {
		// The mirror's wording names its own config; the keys are the same.
		return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "mirror config "))
	}
	c.Opts = opts
	return c, nil
}

// splitPEM separates a PEM file's certificates from its private key.
func splitPEM(b []byte) (chain, key []byte) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return chain, key
		}
		enc := pem.EncodeToMemory(blk)
		if strings.Contains(blk.Type, "PRIVATE KEY") {
			key = append(key, enc...)
		} else {
			chain = append(chain, enc...)
		}
	}
}

// ParseBrokers splits HOST:PORT[,HOST:PORT...].
func ParseBrokers(s string) ([]string, error) {
	var out []string
	for _, hp := range strings.Split(s, ",") {
		if hp = strings.TrimSpace(hp); hp == "" {
			continue
		}
		i := strings.LastIndexByte(hp, ':')
		if i <= 0 {
			return nil, fmt.Errorf("%q is not HOST:PORT", hp)
		}
		if p, err := strconv.Atoi(hp[i+1:]); err != nil || p <= 0 || p > 65535 {
			return nil, fmt.Errorf("%q: the port is not a number from 1 to 65535", hp)
		}
		out = append(out, hp)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no HOST:PORT given")
	}
	return out, nil
}

// ReadProperties reads a Java properties file's key=value (or key: value)
// lines; # and ! start comments.
func ReadProperties(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20) // inline PEMs are long lines
	n := 0
	var cont string
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if cont != "" {
			line = cont + line
			cont = ""
		}
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			cont = strings.TrimSuffix(line, `\`)
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i <= 0 {
			return nil, fmt.Errorf("%s:%d: not key=value", path, n)
		}
		out[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	return out, sc.Err()
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
