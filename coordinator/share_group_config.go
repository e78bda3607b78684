package coordinator

import (
	"context"
	"fmt"
	"time"
)

// ShareConfig configures KIP-932 share groups: the group.share.* settings
// of Kafka's GroupCoordinatorConfig, and what the coordinator needs from
// the rest of the broker. Zero values take Kafka's defaults.
type ShareConfig struct {
	// Persister is the share coordinator as the group coordinator uses
	// it. Nil: share groups are not served (ShareGroupHeartbeat answers
	// UNSUPPORTED_VERSION, as a Kafka broker without share groups enabled).
	Persister ShareStatePersister
	// LatestOffset returns a partition's end offset as a consumer's
	// ListOffsets LATEST reads it (the high watermark), for the lag of
	// DescribeShareGroupOffsets v1 (KIP-1226; Kafka's
	// PartitionMetadataClient.listLatestOffsets). Nil: lag is -1.
	LatestOffset func(ctx context.Context, topic string, partition int32) (int64, error)

	// SessionTimeout is group.share.session.timeout.ms (45000), within
	// MinSessionTimeout and MaxSessionTimeout
	// (group.share.min/max.session.timeout.ms, 45000 and 60000).
	SessionTimeout    time.Duration
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// HeartbeatInterval is group.share.heartbeat.interval.ms (5000),
	// within group.share.min/max.heartbeat.interval.ms (5000, 15000).
	HeartbeatInterval    time.Duration
	MinHeartbeatInterval time.Duration
	MaxHeartbeatInterval time.Duration
	// MaxGroupSize is group.share.max.size (200, at most 1000).
	MaxGroupSize int32
	// Assignors is group.share.assignors: exactly one, "simple".
	Assignors []string
	// InitializeRetryInterval is group.share.initialize.retry.interval.ms
	// (30000; Kafka takes at least offsets.commit.timeout.ms, which the
	// broker applies): how long a partition may stay "initializing"
	// before a heartbeat asks the share coordinator again.
	InitializeRetryInterval time.Duration
}

// Kafka's share group defaults (GroupCoordinatorConfig).
const (
	DefaultShareSessionTimeout          = 45 * time.Second
	DefaultShareMinSessionTimeout       = 45 * time.Second
	DefaultShareMaxSessionTimeout       = 60 * time.Second
	DefaultShareHeartbeatInterval       = 5 * time.Second
	DefaultShareMinHeartbeatInterval    = 5 * time.Second
	DefaultShareMaxHeartbeatInterval    = 15 * time.Second
	DefaultShareMaxGroupSize            = 200
	MaxShareGroupSize                   = 1000
	DefaultShareInitializeRetryInterval = 30 * time.Second
	// ShareAssignorSimple is the one share-group assignor (KIP-932).
	ShareAssignorSimple = "simple"
)

func (sc ShareConfig) withDefaults() ShareConfig {
	defaultDuration(&sc.SessionTimeout, DefaultShareSessionTimeout)
	defaultDuration(&sc.MinSessionTimeout, DefaultShareMinSessionTimeout)
	defaultDuration(&sc.MaxSessionTimeout, DefaultShareMaxSessionTimeout)
	defaultDuration(&sc.HeartbeatInterval, DefaultShareHeartbeatInterval)
	defaultDuration(&sc.MinHeartbeatInterval, DefaultShareMinHeartbeatInterval)
	defaultDuration(&sc.MaxHeartbeatInterval, DefaultShareMaxHeartbeatInterval)
	defaultDuration(&sc.InitializeRetryInterval, DefaultShareInitializeRetryInterval)
	if sc.MaxGroupSize == 0 {
		sc.MaxGroupSize = DefaultShareMaxGroupSize
	}
	if len(sc.Assignors) == 0 {
		sc.Assignors = []string{ShareAssignorSimple}
	}
	return sc
}

// validate checks the share group settings against each other as Kafka's
// GroupCoordinatorConfig does, with its messages.
func (sc ShareConfig) validate() error {
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	switch {
	case sc.MaxHeartbeatInterval < sc.MinHeartbeatInterval:
		return fmt.Errorf("coordinator: group.share.max.heartbeat.interval.ms (%d) must be greater than or equal to group.share.min.heartbeat.interval.ms (%d)",
			ms(sc.MaxHeartbeatInterval), ms(sc.MinHeartbeatInterval))
	case sc.HeartbeatInterval < sc.MinHeartbeatInterval:
		return fmt.Errorf("coordinator: group.share.heartbeat.interval.ms (%d) must be greater than or equal to group.share.min.heartbeat.interval.ms (%d)",
			ms(sc.HeartbeatInterval), ms(sc.MinHeartbeatInterval))
	case sc.HeartbeatInterval > sc.MaxHeartbeatInterval:
		return fmt.Errorf("coordinator: group.share.heartbeat.interval.ms (%d) must be less than or equal to group.share.max.heartbeat.interval.ms (%d)",
			ms(sc.HeartbeatInterval), ms(sc.MaxHeartbeatInterval))
	case sc.MaxSessionTimeout < sc.MinSessionTimeout:
		return fmt.Errorf("coordinator: group.share.max.session.timeout.ms (%d) must be greater than or equal to group.share.min.session.timeout.ms (%d)",
			ms(sc.MaxSessionTimeout), ms(sc.MinSessionTimeout))
	case sc.SessionTimeout < sc.MinSessionTimeout:
		return fmt.Errorf("coordinator: group.share.session.timeout.ms (%d) must be greater than or equal to group.share.min.session.timeout.ms (%d)",
			ms(sc.SessionTimeout), ms(sc.MinSessionTimeout))
	case sc.SessionTimeout > sc.MaxSessionTimeout:
		return fmt.Errorf("coordinator: group.share.session.timeout.ms (%d) must be less than or equal to group.share.max.session.timeout.ms (%d)",
			ms(sc.SessionTimeout), ms(sc.MaxSessionTimeout))
	case sc.HeartbeatInterval >= sc.SessionTimeout:
		return fmt.Errorf("coordinator: group.share.heartbeat.interval.ms (%d) must be less than group.share.session.timeout.ms (%d)",
			ms(sc.HeartbeatInterval), ms(sc.SessionTimeout))
	case sc.MaxGroupSize < 1 || sc.MaxGroupSize > MaxShareGroupSize:
		return fmt.Errorf("coordinator: group.share.max.size must be between 1 and %d, got %d", MaxShareGroupSize, sc.MaxGroupSize)
	case len(sc.Assignors) != 1:
		return fmt.Errorf("coordinator: group.share.assignors must contain exactly one assignor, but found %d", len(sc.Assignors))
	case sc.Assignors[0] != ShareAssignorSimple:
		return fmt.Errorf("coordinator: group.share.assignors: unknown assignor %q (simple is served)", sc.Assignors[0])
	case sc.InitializeRetryInterval < 0:
		return fmt.Errorf("coordinator: group.share.initialize.retry.interval.ms must not be negative")
	}
	return nil
}
