package oauthbearer

import (
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

// The broker keys OAUTHBEARER reads (Kafka's SaslConfigs), each either
// broker-wide or for one listener as listener.name.<listener>.<key>.
const (
	keyJWKSURL             = "sasl.oauthbearer.jwks.endpoint.url"
	keyJWKSRefresh         = "sasl.oauthbearer.jwks.endpoint.refresh.ms"
	keyJWKSRetryBackoff    = "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms"
	keyJWKSRetryBackoffMax = "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms"
	keyExpectedAudience    = "sasl.oauthbearer.expected.audience"
	keyExpectedIssuer      = "sasl.oauthbearer.expected.issuer"
	keySubClaim            = "sasl.oauthbearer.sub.claim.name"
	keyScopeClaim          = "sasl.oauthbearer.scope.claim.name"
	keyClockSkew           = "sasl.oauthbearer.clock.skew.seconds"

	// Set only per listener and mechanism, as Kafka requires of a broker:
	// listener.name.<listener>.oauthbearer.<key>.
	keyCallbackHandler = "sasl.server.callback.handler.class"
	keyJAAS            = "sasl.jaas.config"
)

// The Java classes a Kafka configuration names for OAUTHBEARER with JWT
// validation; Strait loads no classes but accepts these names for the
// behaviour they stand for.
const (
	ValidatorCallbackHandler = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
	// validatorCallbackHandlerOld is its deprecated name (Kafka 3.1-3.x).
	validatorCallbackHandlerOld = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler"
	unsecuredCallbackHandler    = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler"
	LoginModule                 = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
)

// Kafka's defaults (SaslConfigs).
const (
	defaultJWKSRefresh         = time.Hour
	defaultJWKSRetryBackoff    = 100 * time.Millisecond
	defaultJWKSRetryBackoffMax = 10 * time.Second
	defaultClockSkew           = 30 * time.Second
)

// Config is OAUTHBEARER's configuration on one listener.
type Config struct {
	// JWKSURL is where the identity provider's keys are: http, https or
	// file (sasl.oauthbearer.jwks.endpoint.url).
	JWKSURL string
	// JWKSRefresh is how often the JWKS is read again
	// (sasl.oauthbearer.jwks.endpoint.refresh.ms, one hour).
	JWKSRefresh time.Duration
	// JWKSRetryBackoff and JWKSRetryBackoffMax bound the retries of a
	// failed refresh: waits doubling from the first, for at most the second
	// in all (sasl.oauthbearer.jwks.endpoint.retry.backoff.ms and .max.ms,
	// 100 ms and 10 s).
	JWKSRetryBackoff    time.Duration
	JWKSRetryBackoffMax time.Duration
	// Claims are the checks of the token's claims.
	Claims ClaimRules
}

// ConfigKeys are the keys ParseConfig reads for a listener: the broker
// passes each to it when set, and may treat them as implemented.
func ConfigKeys(listener string) []string {
	perListener := "listener.name." + strings.ToLower(listener) + "."
	keys := []string{
		perListener + "oauthbearer." + keyCallbackHandler,
		perListener + "oauthbearer." + keyJAAS,
	}
	for _, k := range []string{keyJWKSURL, keyJWKSRefresh, keyJWKSRetryBackoff, keyJWKSRetryBackoffMax,
		keyExpectedAudience, keyExpectedIssuer, keySubClaim, keyScopeClaim, keyClockSkew} {
		keys = append(keys, k, perListener+k)
	}
	return keys
}

// ParseConfig builds the OAUTHBEARER Config of listener from the broker's
// properties (keys as in server.properties). A sasl.oauthbearer.* key set
// as listener.name.<listener>.<key> overrides the broker-wide one, as
// Kafka's listener prefix does. The listener must name Kafka's validating
// callback handler: Strait has no unsecured OAUTHBEARER (see the package
// doc). Every error names the key at fault.
func ParseConfig(listener string, props map[string]string) (Config, error) {
	perListener := "listener.name." + strings.ToLower(listener) + "."
	mechKey := func(k string) string { return perListener + "oauthbearer." + k }
	get := func(k string) (string, string, bool) {
		if v, ok := props[perListener+k]; ok {
			return perListener + k, strings.TrimSpace(v), true
		}
		v, ok := props[k]
		return k, strings.TrimSpace(v), ok
	}
	var c Config

	handlerKey := mechKey(keyCallbackHandler)
	switch h := strings.TrimSpace(props[handlerKey]); h {
	case ValidatorCallbackHandler, validatorCallbackHandlerOld:
	case "", unsecuredCallbackHandler:
		return c, fmt.Errorf("OAUTHBEARER on listener %s needs %s=%s: without it Kafka uses its unsecured handler, which accepts unsigned tokens and is for development only; Strait has no such mode and verifies every token against the JWKS of %s",
			listener, handlerKey, ValidatorCallbackHandler, keyJWKSURL)
	default:
		return c, fmt.Errorf("%s=%s: Strait cannot load a callback handler class; the only one accepted is %s", handlerKey, h, ValidatorCallbackHandler)
	}
	if err := checkJAAS(mechKey(keyJAAS), props[mechKey(keyJAAS)]); err != nil {
		return c, err
	}

	key, v, ok := get(keyJWKSURL)
	if !ok || v == "" {
		return c, fmt.Errorf("OAUTHBEARER on listener %s needs %s: the http(s) or file: URL of the identity provider's JWKS", listener, keyJWKSURL)
	}
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") {
		return c, fmt.Errorf("%s=%s: not an http, https or file URL", key, v)
	}
	c.JWKSURL = v

	var err error
	if c.JWKSRefresh, err = millis(get, keyJWKSRefresh, defaultJWKSRefresh, 1); err != nil {
		return c, err
	}
	if c.JWKSRetryBackoff, err = millis(get, keyJWKSRetryBackoff, defaultJWKSRetryBackoff, 0); err != nil {
		return c, err
	}
	if c.JWKSRetryBackoffMax, err = millis(get, keyJWKSRetryBackoffMax, defaultJWKSRetryBackoffMax, 0); err != nil {
		return c, err
	}
	if key, v, ok := get(keyClockSkew); ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return c, fmt.Errorf("%s=%s: not a number of seconds from 0", key, v)
		}
		c.Claims.ClockSkew = time.Duration(n) * time.Second
	} else {
		c.Claims.ClockSkew = defaultClockSkew
	}
	if _, v, ok := get(keyExpectedAudience); ok {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				c.Claims.ExpectedAudience = append(c.Claims.ExpectedAudience, a)
			}
		}
	}
	_, c.Claims.ExpectedIssuer, _ = get(keyExpectedIssuer)
	if c.Claims.SubClaim, err = claimName(get, keySubClaim, "sub"); err != nil {
		return c, err
	}
	if c.Claims.ScopeClaim, err = claimName(get, keyScopeClaim, "scope"); err != nil {
		return c, err
	}
	return c, nil
}

type getter func(string) (key, value string, ok bool)

func millis(get getter, name string, def time.Duration, least int64) (time.Duration, error) {
	key, v, ok := get(name)
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < least || n > int64(time.Duration(1<<63-1)/time.Millisecond) {
		return 0, fmt.Errorf("%s=%s: not a number of milliseconds from %d", key, v, least)
	}
	return time.Duration(n) * time.Millisecond, nil
}

func claimName(get getter, name, def string) (string, error) {
	key, v, ok := get(name)
	if !ok {
		return def, nil
	}
	if v == "" {
		return "", fmt.Errorf("%s must not be empty", key)
	}
	return v, nil
}

// checkJAAS checks the listener's JAAS entry, which Kafka requires of a
// broker for every SASL mechanism it enables:
// "<OAuthBearerLoginModule> required [options];". Its options are the
// client's (unsecuredLoginStringClaim_*) and ignored here, except Kafka's
// TLS options for fetching the JWKS (JaasOptionsUtils ssl.*), which Strait
// does not support and so refuses rather than ignore.
func checkJAAS(key, v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return fmt.Errorf("OAUTHBEARER needs %s=\"%s required ;\" (Kafka requires a JAAS entry for each enabled mechanism)", key, LoginModule)
	}
	body, ok := strings.CutSuffix(v, ";")
	fields := strings.Fields(body)
	if !ok || len(fields) < 2 || strings.Contains(body, ";") {
		return fmt.Errorf("%s: expected '%s required ;'", key, LoginModule)
	}
	if fields[0] != LoginModule {
		return fmt.Errorf("%s: the login module is %s; OAUTHBEARER takes %s", key, fields[0], LoginModule)
	}
	if fields[1] != "required" {
		return fmt.Errorf("%s: the control flag is %s; only required is accepted", key, fields[1])
	}
	for _, f := range fields[2:] {
		if strings.HasPrefix(f, "ssl.") {
			return fmt.Errorf("%s: TLS options for the JWKS endpoint (%s) are not supported; the system's trusted roots verify an https JWKS", key, f[:strings.IndexAny(f+"=", "=")])
		}
	}
	return nil
}

// New reads the JWKS of cfg (an error if it cannot, naming the key) and
// returns OAUTHBEARER validating against it; Close stops its refreshing.
func New(cfg Config, log *slog.Logger, clk clock.Clock) (*Mechanism, error) {
	keys, err := startKeySource(cfg, log, clk)
	if err != nil {
		return nil, err
	}
	m := NewMechanism(&Validator{keys: keys, rules: cfg.Claims, clock: clk}, log)
	m.close = keys.stop
	return m, nil
}
