package coordinator

import "time"

// DynamicGroupConfig is what a group's own configs (Kafka's GroupConfig:
// the GROUP config resource, set with IncrementalAlterConfigs) change of
// the coordinator's settings. A zero field takes the broker's (Config).
// The broker reads them from the metadata image, already held within the
// broker's group.consumer.* and group.share.* bounds.
type DynamicGroupConfig struct {
	// ConsumerSessionTimeout and ConsumerHeartbeatInterval are
	// consumer.session.timeout.ms and consumer.heartbeat.interval.ms
	// (KIP-848 consumer groups).
	ConsumerSessionTimeout    time.Duration
	ConsumerHeartbeatInterval time.Duration
	// ShareSessionTimeout and ShareHeartbeatInterval are
	// share.session.timeout.ms and share.heartbeat.interval.ms (KIP-932
	// share groups).
	ShareSessionTimeout    time.Duration
	ShareHeartbeatInterval time.Duration
}

// groupConfig returns a group's dynamic configs. Kafka's
// GroupMetadataManager asks its GroupConfigManager at every heartbeat, so
// an alter applies from the member's next heartbeat on.
func (c *GroupCoordinator) groupConfig(group string) DynamicGroupConfig {
	if c.cfg.GroupConfigs == nil {
		return DynamicGroupConfig{}
	}
	return c.cfg.GroupConfigs(group)
}

// consumerSessionTimeout is GroupMetadataManager.consumerGroupSessionTimeoutMs:
// the group's consumer.session.timeout.ms, else the broker's.
func (c *GroupCoordinator) consumerSessionTimeout(group string) time.Duration {
	return groupOrBroker(c.groupConfig(group).ConsumerSessionTimeout, c.cfg.ConsumerSessionTimeout)
}

// consumerHeartbeatInterval is
// GroupMetadataManager.consumerGroupHeartbeatIntervalMs: the group's
// consumer.heartbeat.interval.ms, else the broker's.
func (c *GroupCoordinator) consumerHeartbeatInterval(group string) time.Duration {
	return groupOrBroker(c.groupConfig(group).ConsumerHeartbeatInterval, c.cfg.ConsumerHeartbeatInterval)
}

// shareSessionTimeout is GroupMetadataManager.shareGroupSessionTimeoutMs:
// the group's share.session.timeout.ms, else the broker's.
func (c *GroupCoordinator) shareSessionTimeout(group string) time.Duration {
	return groupOrBroker(c.groupConfig(group).ShareSessionTimeout, c.cfg.Share.SessionTimeout)
}

// shareHeartbeatInterval is
// GroupMetadataManager.shareGroupHeartbeatIntervalMs: the group's
// share.heartbeat.interval.ms, else the broker's.
func (c *GroupCoordinator) shareHeartbeatInterval(group string) time.Duration {
	return groupOrBroker(c.groupConfig(group).ShareHeartbeatInterval, c.cfg.Share.HeartbeatInterval)
}

// groupOrBroker is a group's own setting, or the broker's when the group
// has none.
func groupOrBroker(group, broker time.Duration) time.Duration {
	if group > 0 {
		return group
	}
	return broker
}
