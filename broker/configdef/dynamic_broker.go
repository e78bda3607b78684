package configdef

import (
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka's dynamic broker configs (DynamicBrokerConfig.AllDynamicConfigs and
// the quota configs of DynamicConfig.Broker, at Kafka commit 1eb76443) fall
// in three groups here:
//
//   - keys Strait implements and applies at runtime: Def.Dynamic;
//   - keys Strait does not implement (kafkaDynamicBrokerKeys below, with
//     their types in kafkaBrokerKeys): AlterConfigs stores them,
//     DescribeConfigs shows them with their DYNAMIC_* source, and the
//     broker logs that it ignores them, as for such keys in
//     server.properties;
//   - keys Strait implements but reads only at start-up: those it can read
//     from the metadata image when it starts (nextStartBrokerKeys) are
//     accepted, stored and described, and the broker logs that the change
//     applies at its next start, with the reason; the listener keys
//     (staticOnlyBrokerKeys), which Strait reads from server.properties
//     alone, are accepted, stored and described too, and the broker logs
//     that it ignores them, with the reason.
var kafkaDynamicBrokerKeys = setOf(slices.Concat(dynamicListenerKeyNames, listenerOnlySecurityKeyNames, []string{
	// DynamicThreadPool.
	"num.io.threads", "num.replica.fetchers", "background.threads",
	// LogCleaner.ReconfigurableConfigs (Strait reads whole batches).
	"log.cleaner.io.buffer.size",
	// DynamicLogConfig: a log default Kafka 4.0 keeps for old files.
	"log.message.timestamp.difference.max.ms",
	// MetricConfigs.
	"metric.reporters",
	// SocketServer.
	"max.connection.creation.rate",
	// DynamicRemoteLogConfig.
	"remote.log.index.file.cache.total.size.bytes", "remote.fetch.max.wait.ms",
	"remote.log.manager.copy.max.bytes.per.second", "remote.log.manager.fetch.max.bytes.per.second",
	"remote.list.offsets.request.timeout.ms",
	// QuotaConfig.brokerQuotaConfigs.
	"leader.replication.throttled.rate", "follower.replication.throttled.rate",
	"replica.alter.log.dirs.io.max.bytes.per.second",
})...)

// staticOnlyBrokerKeys are dynamic in Kafka (DynamicListenerConfig adds
// and removes listeners at runtime) and implemented by Strait, which
// reads them from server.properties only: a value set at runtime is
// stored and described but changes nothing, now or at the next start.
// Kafka takes the listener keys per broker only
// (DynamicBrokerConfig.PerBrokerConfigs).
var staticOnlyBrokerKeys = map[string]string{
	"listeners":                      listenersReason,
	"advertised.listeners":           listenersReason,
	"listener.security.protocol.map": listenersReason,
	// Kafka's DynamicThreadPool sets the thread count of the next
	// shutdown and start; Strait's log directories take it when they
	// open, before the metadata image (and the dynamic configs in it) is
	// read.
	"num.recovery.threads.per.data.dir": "the log directories read it from server.properties when they open, before the dynamic configs are known",
}

const listenersReason = "Strait opens its listeners from server.properties at start and does not open or close listeners at runtime"

// StaticOnlyReason reports whether the broker key is one Strait accepts at
// runtime but never applies, reading it from server.properties only, and
// why.
func StaticOnlyReason(name string) (string, bool) {
	r, ok := staticOnlyBrokerKeys[name]
	return r, ok
}

// nextStartBrokerKeys are dynamic in Kafka and implemented by Strait, which
// reads them only when it starts, from the static configuration with the
// dynamic configs of its metadata image over it; the reason is logged when
// one changes.
var nextStartBrokerKeys = map[string]string{
	// Kafka's DynamicThreadPool resizes its network threads' pool.
	"num.network.threads": "the event loops of the listeners are fixed when they start",
}

// NextStartReason reports whether the broker key is one Strait accepts at
// runtime but applies only at its next start, and why.
func NextStartReason(name string) (string, bool) {
	r, ok := nextStartBrokerKeys[name]
	return r, ok
}

// listenerOnlySecurityKeyNames may be set dynamically only per listener
// (DynamicBrokerConfig.DynamicSecurityConfigs, SslConfigs.RECONFIGURABLE_CONFIGS).
var listenerOnlySecurityKeyNames = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
	"ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates",
}

// dynamicListenerKeyNames are the other keys of
// DynamicListenerConfig.ReconfigurableConfigs Strait accepts: with the
// security keys, Kafka's PerBrokerConfigs.
var dynamicListenerKeyNames = []string{
	"principal.builder.class",
	"ssl.protocol", "ssl.provider", "ssl.cipher.suites", "ssl.enabled.protocols",
	"ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.endpoint.identification.algorithm",
	"ssl.secure.random.implementation", "ssl.client.auth", "ssl.engine.factory.class",
	"sasl.mechanism.inter.broker.protocol", "sasl.jaas.config", "sasl.enabled.mechanisms",
	"sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor",
	"sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.min.time.before.relogin",
	"sasl.kerberos.principal.to.local.rules",
	"sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
	"sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds",
}

var (
	listenerOnlySecurityKeys = setOf(listenerOnlySecurityKeyNames...)
	dynamicListenerKeys      = setOf(dynamicListenerKeyNames...)
	// clusterLevelListenerKeys may be set for every broker even though
	// they are listener keys (DynamicBrokerConfig.ClusterLevelListenerConfigs).
	clusterLevelListenerKeys = setOf("max.connections", "max.connection.creation.rate", "num.network.threads")
)

func setOf(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// dynamicBrokerDef returns the definition a dynamic alteration of a broker
// key is checked against, and whether the key may be altered at all:
// a Dynamic Def of Strait's, or a key of kafkaDynamicBrokerKeys or a
// listener override Strait does not implement, typed as Kafka types it.
func dynamicBrokerDef(name string) (Def, bool) {
	if d, ok := brokerByName[name]; ok {
		_, nextStart := nextStartBrokerKeys[name]
		_, staticOnly := staticOnlyBrokerKeys[name]
		return *d, d.Dynamic || nextStart || staticOnly
	}
	if d, _, ok := LookupListenerOverride(name); ok {
		return d, d.Dynamic
	}
	if _, ok := listenerOverrideBase(name); ok || kafkaDynamicBrokerKeys[name] {
		typ, _ := unsupportedBrokerKeyType(name)
		return Def{Name: name, Type: typ}, true
	}
	return Def{}, false
}

// ValidateBrokerConfigs checks an alteration of broker configs as Kafka's
// DynamicBrokerConfig.validateConfigs does, for this broker's resource
// (perBroker) or the cluster-wide "" resource; a nil value deletes the key
// and is not checked further. The error is a *Error:
//
//   - kerr.InvalidRequest "Cannot update these configs dynamically: a,b"
//     for keys Kafka does not change at runtime (and keys it does not
//     define);
//   - kerr.InvalidRequest for listener overrides Kafka changes at runtime
//     but Strait reads only at start-up;
//   - kerr.InvalidRequest "These security configs can be dynamically
//     updated only per-listener using the listener prefix: ..." for an SSL
//     keystore or truststore key without listener.name.<l>.;
//   - kerr.InvalidConfig for a bad value (Kafka's ConfigException text);
//   - kerr.InvalidRequest "Cannot update these configs at default cluster
//     level, broker id must be specified: ..." for listener keys set on "".
func ValidateBrokerConfigs(perBroker bool, configs map[string]*string) error {
	keys := make([]string, 0, len(configs))
	for k := range configs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var readOnly, startOnly, needPrefix, needBroker []string
	for _, k := range keys {
		if _, ok := dynamicBrokerDef(k); !ok {
			if _, _, override := LookupListenerOverride(k); override {
				startOnly = append(startOnly, k)
			} else {
				readOnly = append(readOnly, k)
			}
			continue
		}
		if listenerOnlySecurityKeys[k] {
			needPrefix = append(needPrefix, k)
		}
		// The listener keys are per broker only in Kafka; the thread pool
		// keys may be set cluster-wide.
		listenerKey := staticOnlyBrokerKeys[k] == listenersReason
		if base, ok := listenerOverrideBase(k); (ok && !clusterLevelListenerKeys[base]) || dynamicListenerKeys[k] || listenerOnlySecurityKeys[k] || listenerKey {
			needBroker = append(needBroker, k)
		}
	}
	if len(readOnly) > 0 {
		return &Error{Code: kerr.InvalidRequest, Key: readOnly[0],
			Msg: "Cannot update these configs dynamically: " + strings.Join(readOnly, ",")}
	}
	if len(startOnly) > 0 {
		return &Error{Code: kerr.InvalidRequest, Key: startOnly[0],
			Msg: "Cannot update these configs dynamically: " + strings.Join(startOnly, ",") +
				" (Kafka can; Strait reads them only at start-up: set them in server.properties and restart)"}
	}
	if len(needPrefix) > 0 {
		return &Error{Code: kerr.InvalidRequest, Key: needPrefix[0],
			Msg: "These security configs can be dynamically updated only per-listener using the listener prefix: " + strings.Join(needPrefix, ",")}
	}
	for _, k := range keys {
		if configs[k] == nil {
			continue
		}
		d, _ := dynamicBrokerDef(k)
		canon, err := d.Normalize(*configs[k])
		if err != nil {
			return err
		}
		if err := validateDynamicOnly(k, canon); err != nil {
			return err
		}
	}
	if !perBroker && len(needBroker) > 0 {
		return &Error{Code: kerr.InvalidRequest, Key: needBroker[0],
			Msg: "Cannot update these configs at default cluster level, broker id must be specified: " + strings.Join(needBroker, ",")}
	}
	return nil
}

// validateDynamicOnly holds the checks Kafka makes of a runtime change
// only (BrokerReconfigurable.validateReconfiguration): the static
// configuration may run no cleaner thread, a runtime change may not.
func validateDynamicOnly(key, canon string) error {
	if key == "log.cleaner.threads" && canon == "0" {
		return invalidValue(key, canon, "Log cleaner threads should be at least 1")
	}
	return nil
}
