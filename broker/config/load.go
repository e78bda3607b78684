package config

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/configdef"
)

// Load reads the properties file at path ("" for none) and applies
// overrides, each "key=value" as given to --set (the value may be empty
// and may contain '='), then validates the result (see New). Errors name
// the file, the override or the key at fault.
func Load(path string, overrides []string) (*Config, error) {
	props := map[string]string{}
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		props, err = Parse(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("config: override %q is not key=value", o)
		}
		props[k] = v
	}
	return New(props)
}

// New validates a static configuration (keys as in server.properties) and
// builds the Config. Every key must be one Strait implements, or one Kafka
// defines that Strait ignores (listed in Config.Ignored); an unknown key or
// a bad value is an error naming it, and all of them are reported together.
// Then the keys are checked against each other as Kafka's KafkaConfig
// does: node.id and broker.id, process.roles and the quorum voters,
// listeners, advertised listeners and their security protocols, the log
// time settings and log dirs. props is not retained.
func New(props map[string]string) (*Config, error) {
	raw := make(map[string]string, len(props)+1)
	for k, v := range props {
		raw[k] = v
	}
	var errs []error
	var ignored []string
	for _, k := range sortedKeys(raw) {
		if d, ok := configdef.Lookup(kmsg.ConfigResourceTypeBroker, k); ok {
			if _, err := d.Normalize(raw[k]); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if d, _, ok := configdef.LookupListenerOverride(k); ok {
			if _, err := d.Normalize(raw[k]); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if configdef.IsKnownUnsupportedBrokerKey(k) {
			ignored = append(ignored, k)
			continue
		}
		errs = append(errs, unknownKey(k))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// KafkaConfig.populateSynonyms: either id names the node.
	nodeID, hasNode := raw["node.id"]
	brokerID, hasBroker := raw["broker.id"]
	switch {
	case hasNode && !hasBroker:
		raw["broker.id"] = nodeID
	case hasBroker && !hasNode:
		raw["node.id"] = brokerID
	}
	c := &Config{Raw: raw, Ignored: ignored}
	if err := c.build(values{src: c.Sources(nil, nil)}); err != nil {
		return nil, err
	}
	return c, nil
}

// unknownKey names the key and, when a known key is a likely typo of it,
// suggests that one.
func unknownKey(k string) error {
	msg := fmt.Sprintf("unknown configuration %q", k)
	if s := suggest(k); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return &configdef.Error{Key: k, Msg: msg}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// suggest returns the implemented key closest to k by edit distance, if it
// is close enough to be a typo.
func suggest(k string) string {
	best, bestDist := "", -1
	for _, d := range configdef.BrokerDefs() {
		if dist := editDistance(k, d.Name); bestDist < 0 || dist < bestDist {
			best, bestDist = d.Name, dist
		}
	}
	if bestDist > max(2, len(k)/5) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
