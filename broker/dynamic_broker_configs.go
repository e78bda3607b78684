package broker

import (
	"fmt"
	"maps"
	"slices"
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
// as serve does for such keys in server.properties.
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
		if ignored := ignoredChanges(d.last[name], now[name]); len(ignored) > 0 {
			n.logger.Warn("ignoring configs Strait does not implement", "keys", strings.Join(ignored, ","),
				"resource", brokerResourceName(name))
		}
	}
	d.last = now
	n.logs.SetCleanerConfig(config.LogCleanerFrom(n.sources(img)))
	n.applyConnectionLimitsLocked(n.sources(img))
	d.txnVerification.Store(config.TxnPartitionVerificationFrom(n.sources(img)))
}

// ignoredChanges are the keys set or changed from before to after that
// Strait accepts but does not implement, sorted.
func ignoredChanges(before, after map[string]string) []string {
	var out []string
	for k, v := range after {
		if old, had := before[k]; (!had || old != v) && configdef.IsKnownUnsupportedBrokerKey(k) {
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
