package replication

import (
	"errors"
	"log/slog"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
)

// Kafka's defaults for the broker configs the replica manager reads.
const (
	// DefaultFetchSessionCacheSlots is max.incremental.fetch.session.cache.slots.
	DefaultFetchSessionCacheSlots = 1000
	// DefaultFetchSessionEvictionMs is min.incremental.fetch.session.eviction.ms.
	DefaultFetchSessionEvictionMs = 120000
	// DefaultFetchMaxBytes is fetch.max.bytes.
	DefaultFetchMaxBytes = 55 << 20
	// DefaultReplicaFetchResponseMaxBytes is replica.fetch.response.max.bytes.
	DefaultReplicaFetchResponseMaxBytes = 10 << 20
	// DefaultRetentionCheckIntervalMs is log.retention.check.interval.ms.
	DefaultRetentionCheckIntervalMs = 300000
	// DefaultHighWatermarkCheckpointIntervalMs is
	// replica.high.watermark.checkpoint.interval.ms.
	DefaultHighWatermarkCheckpointIntervalMs = 5000
)

// Config is a ReplicaManager's dependencies and settings. Zero values mean
// Kafka's defaults.
type Config struct {
	// NodeID is this broker's node.id.
	NodeID int32
	// Logs owns the log directory (required). The replica manager creates
	// and deletes partition logs in it but does not close it.
	Logs *storage.LogManager
	// LogConfigFor returns a topic's effective log config: broker defaults
	// plus the topic's overrides in img. Nil parses img's topic configs
	// over storage.DefaultLogConfig.
	LogConfigFor func(topic string, img *raftmeta.Image) (storage.LogConfig, error)
	// MinInsyncReplicasFor returns a topic's min.insync.replicas. Nil
	// means 1, Kafka's default.
	MinInsyncReplicasFor func(topic string, img *raftmeta.Image) int32
	Logger               *slog.Logger
	Clock                clock.Clock
	// FetchSessionCacheSlots is max.incremental.fetch.session.cache.slots:
	// 0 means the default (1000), a negative value disables sessions.
	FetchSessionCacheSlots int
	// FetchSessionEvictionMs is min.incremental.fetch.session.eviction.ms.
	FetchSessionEvictionMs int64
	// FetchMaxBytes is fetch.max.bytes: the most a consumer fetch returns.
	FetchMaxBytes int32
	// ReplicaFetchResponseMaxBytes is replica.fetch.response.max.bytes: the
	// most a follower fetch returns.
	ReplicaFetchResponseMaxBytes int32
	// RetentionCheckIntervalMs is log.retention.check.interval.ms: how
	// often Start runs LogManager.RunMaintenance.
	RetentionCheckIntervalMs int64
	// HighWatermarkCheckpointIntervalMs is
	// replica.high.watermark.checkpoint.interval.ms: how often Start writes
	// the log directory checkpoints.
	HighWatermarkCheckpointIntervalMs int64
	// Metrics receives bytes in and out per topic; nil records nothing.
	Metrics Metrics
}

// withDefaults validates c and fills in the defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Logs == nil {
		return c, errors.New("replication: Config.Logs is required")
	}
	if c.Clock == nil {
		return c, errors.New("replication: Config.Clock is required")
	}
	if c.NodeID < 0 {
		return c, errors.New("replication: Config.NodeID must be >= 0")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.LogConfigFor == nil {
		c.LogConfigFor = func(topic string, img *raftmeta.Image) (storage.LogConfig, error) {
			return storage.ParseLogConfig(storage.DefaultLogConfig(), img.TopicConfig(topic), false)
		}
	}
	if c.MinInsyncReplicasFor == nil {
		c.MinInsyncReplicasFor = func(string, *raftmeta.Image) int32 { return 1 }
	}
	if c.FetchSessionCacheSlots == 0 {
		c.FetchSessionCacheSlots = DefaultFetchSessionCacheSlots
	}
	if c.FetchSessionCacheSlots < 0 {
		c.FetchSessionCacheSlots = 0
	}
	if c.FetchSessionEvictionMs <= 0 {
		c.FetchSessionEvictionMs = DefaultFetchSessionEvictionMs
	}
	if c.FetchMaxBytes <= 0 {
		c.FetchMaxBytes = DefaultFetchMaxBytes
	}
	if c.ReplicaFetchResponseMaxBytes <= 0 {
		c.ReplicaFetchResponseMaxBytes = DefaultReplicaFetchResponseMaxBytes
	}
	if c.RetentionCheckIntervalMs <= 0 {
		c.RetentionCheckIntervalMs = DefaultRetentionCheckIntervalMs
	}
	if c.HighWatermarkCheckpointIntervalMs <= 0 {
		c.HighWatermarkCheckpointIntervalMs = DefaultHighWatermarkCheckpointIntervalMs
	}
	if c.Metrics == nil {
		c.Metrics = nopMetrics{}
	}
	return c, nil
}
