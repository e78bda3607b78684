package broker

import (
	"strconv"
	"time"

	"github.com/strait-io/strait/broker/configdef"
	"github.com/strait-io/strait/coordinator"
	replshare "github.com/strait-io/strait/replication/share"
)

// groupConfigs serves groups' dynamic configs (the GROUP config resource,
// stored in the metadata log) to the group coordinator and the share
// partitions, as Kafka's GroupConfigManager, fed by the metadata
// publisher, serves them. Every lookup reads the newest image, so an alter
// applies from the next heartbeat or fetch on; the values are canonical and
// held within this broker's group.* bounds (configdef.EffectiveGroupConfigs).
// A lookup never blocks: the coordinator and the share manager call it
// under their locks.
type groupConfigs struct{ n *Node }

func (n *Node) groupConfigs() groupConfigs { return groupConfigs{n} }

// lookup returns a group's settings and which of them it sets itself;
// both are nil for a group without dynamic configs.
func (g groupConfigs) lookup(group string) (values map[string]string, set map[string]bool) {
	img := g.n.quorum.Image()
	overrides := img.GroupConfig(group)
	if len(overrides) == 0 {
		return nil, nil
	}
	return configdef.EffectiveGroupConfigs(g.n.sources(img), overrides)
}

// ShareGroupConfig is replication/share's GroupConfigs: the group's
// share.record.lock.duration.ms, share.auto.offset.reset and
// share.isolation.level, zero where it sets none (the share manager then
// takes the broker's).
func (g groupConfigs) ShareGroupConfig(group string) replshare.GroupConfig {
	values, set := g.lookup(group)
	var out replshare.GroupConfig
	if set["share.record.lock.duration.ms"] {
		out.RecordLockDuration = millis(values["share.record.lock.duration.ms"])
	}
	if set["share.auto.offset.reset"] {
		out.AutoOffsetReset = values["share.auto.offset.reset"]
	}
	out.ReadCommitted = set["share.isolation.level"] && values["share.isolation.level"] == "read_committed"
	return out
}

// coordinatorConfig is the group coordinator's Config.GroupConfigs: the
// group's session timeouts and heartbeat intervals, zero where it sets
// none.
func (g groupConfigs) coordinatorConfig(group string) coordinator.DynamicGroupConfig {
	values, set := g.lookup(group)
	own := func(key string) time.Duration {
		if !set[key] {
			return 0
		}
		return millis(values[key])
	}
	return coordinator.DynamicGroupConfig{
		ConsumerSessionTimeout:    own("consumer.session.timeout.ms"),
		ConsumerHeartbeatInterval: own("consumer.heartbeat.interval.ms"),
		ShareSessionTimeout:       own("share.session.timeout.ms"),
		ShareHeartbeatInterval:    own("share.heartbeat.interval.ms"),
	}
}

// millis reads a canonical millisecond count.
func millis(v string) time.Duration {
	n, _ := strconv.ParseInt(v, 10, 64)
	return time.Duration(n) * time.Millisecond
}
