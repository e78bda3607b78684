package profile

import (
	"fmt"
	"strings"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// secretKeys are the settings show masks unless --show-secrets.
var secretKeys = map[string]bool{"pass": true, "sasl.jaas.config": true, "ssl.keystore.key": true}

const mask = "[REDACTED]"

// masked is v as show prints it: a password, a JAAS config (it holds
// one) and an inline private key are hidden.
func masked(key, v string, showSecrets bool) string {
	if showSecrets || !secretKeys[key] || v == "" {
		return v
	}
	return mask
}

// checkSettings refuses a profile kit could not connect with: an unknown
// key, a bad broker list, a missing certificate file, SASL without
// credentials. Resolving them alone (no profile file, no environment)
// is the same check every command does before connecting.
func checkSettings(s map[string]string) error {
	var kv kit.KeyValues
	for k, v := range s {
		kv = append(kv, [2]string{k, v})
	}
	g := kit.Globals{X: kv}
	_, err := g.Resolve(kit.Env{Getenv: func(string) string { return "" }})
	if err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "-X: "))
	}
	return nil
}

// fromFlags are the settings create takes: --command-config's
// properties, then -X, then --brokers (the precedence commands use), with
// bootstrap.servers stored as brokers.
func fromFlags(g *kit.Globals) (map[string]string, error) {
	s := map[string]string{}
	put := func(k, v string) {
		if k == "bootstrap.servers" {
			k = "brokers"
		}
		s[k] = v
	}
	if g.CommandConfig != "" {
		props, err := kit.ReadProperties(g.CommandConfig)
		if err != nil {
			return nil, fmt.Errorf("--command-config: %w", err)
		}
		for k, v := range props {
			put(k, v)
		}
	}
	for _, p := range g.X {
		put(p[0], p[1])
	}
	if g.Brokers != "" {
		put("brokers", g.Brokers)
	}
	return s, nil
}
