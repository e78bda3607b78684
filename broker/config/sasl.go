package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/strait-io/strait/broker/configdef"
	"github.com/strait-io/strait/raftmeta/jaas"
	"github.com/strait-io/strait/wire/sasl/oauthbearer"
)

// SASL is one SASL_PLAINTEXT or SASL_SSL listener's authentication, read
// as Kafka's SaslChannelBuilder reads it.
type SASL struct {
	// Mechanisms are the effective sasl.enabled.mechanisms
	// (listener.name.<l>.sasl.enabled.mechanisms over the plain key),
	// upper-cased, in order.
	Mechanisms []string
	// MechanismsKey is the key Mechanisms came from, for messages.
	MechanismsKey string
	// JAAS is each mechanism's parsed
	// listener.name.<l>.<mechanism>.sasl.jaas.config, by upper-case
	// mechanism name, for the mechanisms that have one.
	JAAS map[string]jaas.Config
	// MaxReceiveSize is sasl.server.max.receive.size.
	MaxReceiveSize int32
	// MaxReauthMs is connections.max.reauth.ms (KIP-368; 0: off).
	MaxReauthMs int64
	// MaxReauthMsBy are the listener.name.<l>.<mechanism>.connections.max.reauth.ms
	// overrides, by upper-case mechanism name.
	MaxReauthMsBy map[string]int64
	// FailedAuthDelayMs is connection.failed.authentication.delay.ms.
	FailedAuthDelayMs int64
	// OAuth is the OAUTHBEARER token validation of the listener (its
	// sasl.oauthbearer.* keys), when it enables OAUTHBEARER.
	OAuth *oauthbearer.Config
}

// InterBrokerSASL is how this broker authenticates to the others'
// inter-broker listener when it is SASL_*: sasl.mechanism.inter.broker.protocol
// with the username and password of that listener's JAAS config for it
// (Kafka's inter-broker clients log in with the same JAAS entry).
type InterBrokerSASL struct {
	Mechanism          string
	Username, Password string
}

// String never shows the password.
func (s InterBrokerSASL) String() string { return s.Mechanism + " as " + s.Username }

// Kafka's defaults (BrokerSecurityConfigs, SocketServerConfigs).
const (
	defaultSASLMechanisms        = "GSSAPI"
	defaultSASLMaxReceiveSize    = 524288
	defaultFailedAuthDelayMs     = 100
	failedAuthDelayKey           = "connection.failed.authentication.delay.ms"
	defaultInterBrokerMechanism  = "GSSAPI"
	saslEnabledMechanismsKey     = "sasl.enabled.mechanisms"
	saslMaxReceiveSizeKey        = "sasl.server.max.receive.size"
	connectionsMaxReauthKey      = "connections.max.reauth.ms"
	interBrokerSASLMechanismKey  = "sasl.mechanism.inter.broker.protocol"
	controllerSASLMechanismKey   = "sasl.mechanism.controller.protocol"
	saslJAASKeySuffix            = ".sasl.jaas.config"
	knownSASLMechanismsForErrors = "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER"
)

// knownSASLMechanisms are the mechanisms Kafka ships server support for,
// GSSAPI aside (Strait has no Kerberos).
var knownSASLMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"}

// buildSASL reads the SASL settings of every SASL listener into c.SASL and
// the inter-broker credentials into c.InterBrokerSASL, and drops the keys
// it read from c.Ignored. The controller listener may not be SASL: raft
// and the controller channel do not speak the Kafka protocol, so they
// cannot run a SASL exchange.
func (c *Config) buildSASL() error {
	used := map[string]bool{}
	get := func(key string) (string, bool) {
		v, ok := c.Raw[key]
		if ok {
			used[key] = true
		}
		return v, ok
	}
	maxReceive := int64(defaultSASLMaxReceiveSize)
	if v, ok := get(saslMaxReceiveSizeKey); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n <= 0 {
			return fmt.Errorf("%s: invalid value %q: must be a positive int", saslMaxReceiveSizeKey, v)
		}
		maxReceive = n
	}
	var maxReauth int64
	if v, ok := get(connectionsMaxReauthKey); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%s: invalid value %q: must be a non-negative long", connectionsMaxReauthKey, v)
		}
		maxReauth = n
	}
	failedDelay := int64(defaultFailedAuthDelayMs)
	if v, ok := get(failedAuthDelayKey); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("%s: invalid value %q: must be a non-negative int", failedAuthDelayKey, v)
		}
		failedDelay = n
	}
	if c.ConnectionsMaxIdleMs > 0 && failedDelay >= c.ConnectionsMaxIdleMs {
		// KafkaConfig.validateValues
		return fmt.Errorf("%s=%d should always be less than connections.max.idle.ms=%d to prevent failed authentication responses from timing out",
			failedAuthDelayKey, failedDelay, c.ConnectionsMaxIdleMs)
	}
	for _, name := range c.ControllerListenerNames {
		if p := c.SecurityProtocols[name]; p == SASLPlaintext || p == SASLSSL {
			return fmt.Errorf("controller listener %s uses %s: the controller link (raft and the controller channel) does not speak the Kafka protocol and cannot run SASL; use SSL with ssl.client.auth=required on the controller listener to authenticate the nodes to each other", name, p)
		}
	}
	for _, l := range c.Listeners {
		if l.SecurityProtocol != SASLPlaintext && l.SecurityProtocol != SASLSSL {
			continue
		}
		prefix := "listener.name." + strings.ToLower(l.Name) + "."
		value, key := defaultSASLMechanisms, saslEnabledMechanismsKey
		if v, ok := get(saslEnabledMechanismsKey); ok {
			value = v
		}
		if v, ok := get(prefix + saslEnabledMechanismsKey); ok {
			value, key = v, prefix+saslEnabledMechanismsKey
		}
		s := &SASL{MechanismsKey: key, JAAS: map[string]jaas.Config{}, MaxReceiveSize: int32(maxReceive), MaxReauthMs: maxReauth,
			FailedAuthDelayMs: failedDelay}
		for _, m := range configdef.SplitList(value) {
			if m == "" {
				continue
			}
			m = strings.ToUpper(m)
			switch {
			case m == "GSSAPI":
				return fmt.Errorf("listener %s (%s): %s includes GSSAPI (Kafka's default when the key is not set), but Strait has no Kerberos: set %s to the mechanisms to serve (%s)", l.Name, l.SecurityProtocol, key, key, knownSASLMechanismsForErrors)
			case !slices.Contains(knownSASLMechanisms, m):
				return fmt.Errorf("listener %s (%s): %s: unknown SASL mechanism %s (known: %s)", l.Name, l.SecurityProtocol, key, m, knownSASLMechanismsForErrors)
			case slices.Contains(s.Mechanisms, m):
				return fmt.Errorf("listener %s (%s): %s lists %s twice", l.Name, l.SecurityProtocol, key, m)
			}
			s.Mechanisms = append(s.Mechanisms, m)
			reauthKey := prefix + strings.ToLower(m) + "." + connectionsMaxReauthKey
			if v, ok := get(reauthKey); ok {
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil || n < 0 {
					return fmt.Errorf("%s: invalid value %q: must be a non-negative long", reauthKey, v)
				}
				if s.MaxReauthMsBy == nil {
					s.MaxReauthMsBy = map[string]int64{}
				}
				s.MaxReauthMsBy[m] = n
			}
			jaasKey := prefix + strings.ToLower(m) + saslJAASKeySuffix
			if v, ok := get(jaasKey); ok {
				jc, err := jaas.Parse(v)
				if err != nil {
					return fmt.Errorf("listener %s (%s): %s: %w", l.Name, l.SecurityProtocol, jaasKey, err)
				}
				s.JAAS[m] = jc
			}
		}
		if len(s.Mechanisms) == 0 {
			return fmt.Errorf("listener %s (%s): %s enables no SASL mechanism", l.Name, l.SecurityProtocol, key)
		}
		if slices.Contains(s.Mechanisms, oauthbearer.Name) {
			oc, err := oauthbearer.ParseConfig(l.Name, c.Raw)
			if err != nil {
				return err
			}
			s.OAuth = &oc
			for _, k := range oauthbearer.ConfigKeys(l.Name) {
				get(k)
			}
		}
		if c.SASL == nil {
			c.SASL = map[string]*SASL{}
		}
		c.SASL[l.Name] = s
	}
	if err := c.buildInterBrokerSASL(get); err != nil {
		return err
	}
	get(controllerSASLMechanismKey) // the controller listener is never SASL (above)
	if len(used) > 0 {
		c.Ignored = slices.DeleteFunc(c.Ignored, func(k string) bool { return used[k] })
	}
	return nil
}

// buildInterBrokerSASL checks sasl.mechanism.inter.broker.protocol against
// the inter-broker listener, as KafkaConfig.validateValues does, and takes
// the broker's own credentials from that listener's JAAS config.
func (c *Config) buildInterBrokerSASL(get func(string) (string, bool)) error {
	mech := defaultInterBrokerMechanism
	if v, ok := get(interBrokerSASLMechanismKey); ok {
		mech = strings.ToUpper(strings.TrimSpace(v))
	}
	s := c.SASL[c.InterBrokerListenerName]
	if s == nil {
		return nil // not SASL: the key has no effect, as in Kafka
	}
	if !slices.Contains(s.Mechanisms, mech) {
		return fmt.Errorf("%s must be included in %s when SASL is used for inter-broker communication: inter-broker listener %s enables %s, %s is %s",
			interBrokerSASLMechanismKey, s.MechanismsKey, c.InterBrokerListenerName, strings.Join(s.Mechanisms, ","), interBrokerSASLMechanismKey, mech)
	}
	jaasKey := "listener.name." + strings.ToLower(c.InterBrokerListenerName) + "." + strings.ToLower(mech) + saslJAASKeySuffix
	jc, ok := s.JAAS[mech]
	user, hasUser := jc.Options["username"]
	pass, hasPass := jc.Options["password"]
	if !ok || !hasUser || !hasPass {
		return fmt.Errorf("%s needs username and password options: they are this broker's credentials on the inter-broker listener %s (%s=%s)",
			jaasKey, c.InterBrokerListenerName, interBrokerSASLMechanismKey, mech)
	}
	c.InterBrokerSASL = &InterBrokerSASL{Mechanism: mech, Username: user, Password: pass}
	return nil
}
