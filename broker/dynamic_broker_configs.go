package broker

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/broker/configdef"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/wire"
)

// dynamicBrokerConfigs applies the dynamic broker configs (the cluster
// default "" resource and this broker's own) that act outside the logs,
// as Kafka's DynamicConfigPublisher hands them to DynamicBrokerConfig:
// the log cleaner's keys reconfigure the cleaner at once. The log
// defaults reach the logs through replication (applyConfigChanges). Keys
// Kafka defines but Strait does not implement are stored and described
// like any other; each time one is set this logs that Strait ignores it,
// as serve does for such keys in server.properties. So are the listener
// keys (configdef.StaticOnlyReason): the listeners of server.properties
// serve.
type dynamicBrokerConfigs struct {
	mu sync.Mutex
	// last are the two resources' configs last applied; nil before the
	// first apply.
	last map[string]map[string]string

	// server takes the connection quotas once it started
	// (dynamic_connection_limits.go); connGen numbers their applications
	// so that a slow name resolution cannot apply stale limits.
	server  *wire.Server
	connGen uint64
	// listenerSSL are the dynamic listener.name.<l>.ssl.* keys each TLS
	// listener serves with (config.ListenerSSLKeys), by listener.
	listenerSSL map[string]string
	// txnVerification is transaction.partition.verification.enable as it
	// stands: replication and the group coordinator read it for each
	// transactional write, as Kafka's ReplicaManager reads the dynamic
	// config.
	txnVerification atomic.Bool
	// derivedMaxConnections is the max.connections used while none is
	// set, fixed when the listeners start (connection_limits.go).
	derivedMaxConnections int
}

// applyDynamicBrokerConfigs applies img's dynamic broker configs if they
// changed since the last call. It runs on the metadata subscriber and
// does not block (storage.SetCleanerConfig does not).
func (n *Node) applyDynamicBrokerConfigs(img *raftmeta.Image) {
	d := &n.dynamicConfigs
	d.mu.Lock()
	defer d.mu.Unlock()
	own := fmt.Sprint(n.cfg.NodeID)
	now := map[string]map[string]string{
		"":  img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceBroker, Name: ""}],
		own: img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceBroker, Name: own}],
	}
	if d.last != nil && maps.EqualFunc(now, d.last, func(a, b map[string]string) bool { return maps.Equal(a, b) }) {
		return
	}
	for _, name := range []string{"", own} {
		tlsListeners := n.tlsListeners()
		isIgnored := func(k string) bool {
			return configdef.IsKnownUnsupportedBrokerKey(k) && !config.IsListenerTLSKey(k, tlsListeners)
		}
		if ignored := changedKeys(d.last[name], now[name], isIgnored); len(ignored) > 0 {
			n.logger.Warn("ignoring configs Strait does not implement", "keys", strings.Join(ignored, ","),
				"resource", brokerResourceName(name))
		}
		// Logged at start too: the listeners of server.properties start,
		// not these.
		for _, k := range changedKeys(d.last[name], now[name], withReason(configdef.StaticOnlyReason)) {
			reason, _ := configdef.StaticOnlyReason(k)
			n.logger.Warn("ignoring a config set at runtime that Strait reads from server.properties only", "key", k,
				"resource", brokerResourceName(name), "reason", reason)
		}
		if d.last == nil {
			continue // starting: the listeners start with these values
		}
		for _, k := range changedKeys(d.last[name], now[name], withReason(configdef.NextStartReason)) {
			reason, _ := configdef.NextStartReason(k)
			n.logger.Warn("ignoring a runtime change Strait applies at its next start", "key", k,
				"resource", brokerResourceName(name), "reason", reason)
		}
	}
	d.last = now
	n.logs.SetCleanerConfig(config.LogCleanerFrom(n.sources(img)))
	n.applyConnectionLimitsLocked(n.sources(img))
	n.applyListenerTLSLocked(n.sources(img))
	d.txnVerification.Store(config.TxnPartitionVerificationFrom(n.sources(img)))
}

// withReason turns a lookup of a key's reason into a filter of keys.
func withReason(reason func(string) (string, bool)) func(string) bool {
	return func(k string) bool {
		_, ok := reason(k)
		return ok
	}
}

// changedKeys are the keys set or changed from before to after for which
// of holds, sorted.
func changedKeys(before, after map[string]string, of func(string) bool) []string {
	var out []string
	for k, v := range after {
		if old, had := before[k]; (!had || old != v) && of(k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func brokerResourceName(name string) string {
	if name == "" {
		return "cluster default"
	}
	return "broker " + name
}

// startNetworkThreads is num.network.threads for the listeners starting
// now: the static value, or a dynamic one the metadata image holds (set at
// runtime, applied at this start, as Kafka's dynamic configs override
// server.properties when a broker starts); 0 sizes them from GOMAXPROCS.
func (n *Node) startNetworkThreads() int {
	src := n.sources(n.quorum.Image())
	v, _ := src.BrokerValue("num.network.threads")
	threads, _ := strconv.Atoi(v)
	_, perBroker := src.DynamicBroker["num.network.threads"]
	if _, all := src.DynamicDefault["num.network.threads"]; perBroker || all {
		n.logger.Info("listeners start with num.network.threads set at runtime", "num.network.threads", threads)
	}
	return threads
}
