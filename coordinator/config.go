package coordinator

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/strait-io/strait/coordinator/producerid"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/clock"
)

// OffsetsTopic is the internal topic holding committed offsets and group
// metadata (Kafka's Topic.GROUP_METADATA_TOPIC_NAME).
const OffsetsTopic = raftmeta.ConsumerOffsetsTopic

// OffsetsLog is how the coordinator reads and writes its partitions of
// __consumer_offsets. The broker adapts replication's ReplicaManager to it.
type OffsetsLog interface {
	// Append appends one uncompressed v2 batch built by the coordinator as
	// the partition's leader (AppendOrigin COORDINATOR: offsets and the
	// leader epoch are assigned by the log) and returns once the batch is
	// committed, that is acks=all: the high watermark passed it. Errors
	// should be *kerr.Error where Kafka has a code (NOT_LEADER_OR_FOLLOWER,
	// NOT_ENOUGH_REPLICAS, KAFKA_STORAGE_ERROR, REQUEST_TIMED_OUT ...).
	Append(ctx context.Context, partition int32, batch []byte) (lastOffset int64, err error)
	// Read returns whole batches starting at the batch that holds from (a
	// from below the log start offset reads from the log start), up to
	// about maxBytes but at least one batch if there is one, and never
	// past the log end offset. nextOffset is where the next Read should
	// start; logEndOffset is the partition's log end offset. Loading reads
	// the whole local log, as Kafka's CoordinatorLoaderImpl does
	// (FetchIsolation.LOG_END): a follower elected leader may hold records
	// above its stale high watermark that its leader had committed.
	Read(ctx context.Context, partition int32, from int64, maxBytes int32) (data []byte, nextOffset int64, logEndOffset int64, err error)
}

// EndpointFunc resolves the host and port a client reaches broker nodeID at
// on the named listener (the one the request came in on). ok is false when
// the broker is unknown, fenced, or has no such listener.
type EndpointFunc func(img *raftmeta.Image, nodeID int32, listener string) (host string, port int32, ok bool)

// Config configures a GroupCoordinator. Durations that Kafka configures in
// milliseconds are time.Durations here; the broker converts. Zero values
// take Kafka's defaults (see withDefaults).
type Config struct {
	// NodeID is this broker's node.id.
	NodeID int32
	// Log reads and writes the __consumer_offsets partitions.
	Log OffsetsLog
	// Image returns the newest metadata image (FindCoordinator, and the
	// topic checks of OffsetCommit/OffsetDelete).
	Image func() *raftmeta.Image
	// EnsureOffsetsTopic creates __consumer_offsets (NumPartitions
	// partitions, cleanup.policy=compact) if it is missing. FindCoordinator
	// calls it when the image has no such topic.
	EnsureOffsetsTopic func(ctx context.Context) error
	// Endpoint resolves a broker's advertised endpoint; nil uses
	// DefaultEndpoint.
	Endpoint EndpointFunc
	// ProducerIDs hands out the producer ids of InitProducerId: the
	// broker's one producerid.Manager, which the transaction coordinator
	// shares. Nil builds one over AllocateProducerIDs.
	ProducerIDs *producerid.Manager
	// VerifyTransaction confirms with the transaction coordinator that a
	// TxnOffsetCommit's partition is in its producer's transaction before
	// it is written (KIP-890, txn_verify.go); nil writes unverified.
	VerifyTransaction TxnVerifier
	// VerifyTransactionEnabled, when not nil, says for each commit whether
	// VerifyTransaction is asked (transaction.partition.verification.enable
	// changes at runtime).
	VerifyTransactionEnabled func() bool
	// AllocateProducerIDs hands out a block of producer ids through the
	// controller (AllocateProducerIds), when ProducerIDs is nil.
	AllocateProducerIDs producerid.AllocateFunc
	// GroupConfigs looks up a group's dynamic configs (group_configs.go);
	// nil: no group has any.
	GroupConfigs func(groupID string) DynamicGroupConfig

	// NumPartitions is offsets.topic.num.partitions (50).
	NumPartitions int32
	// MinSessionTimeout is group.min.session.timeout.ms (6000).
	MinSessionTimeout time.Duration
	// MaxSessionTimeout is group.max.session.timeout.ms (1800000).
	MaxSessionTimeout time.Duration
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms (3000). A
	// negative value means no delay.
	InitialRebalanceDelay time.Duration
	// NewMemberJoinTimeout bounds how long a new member's JoinGroup may be
	// parked (Kafka's GroupCoordinatorConfig.CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS,
	// 5 minutes, not a broker property).
	NewMemberJoinTimeout time.Duration
	// MaxGroupSize is group.max.size (MaxInt32).
	MaxGroupSize int32
	// OffsetsRetention is offsets.retention.minutes (10080 = 7 days).
	OffsetsRetention time.Duration
	// OffsetsRetentionCheckInterval is offsets.retention.check.interval.ms
	// (600000).
	OffsetsRetentionCheckInterval time.Duration
	// OffsetMetadataMaxBytes is offset.metadata.max.bytes (4096).
	OffsetMetadataMaxBytes int32

	// ConsumerSessionTimeout is group.consumer.session.timeout.ms (45000),
	// within ConsumerMinSessionTimeout and ConsumerMaxSessionTimeout
	// (group.consumer.min/max.session.timeout.ms, 45000 and 60000).
	ConsumerSessionTimeout    time.Duration
	ConsumerMinSessionTimeout time.Duration
	ConsumerMaxSessionTimeout time.Duration
	// ConsumerHeartbeatInterval is group.consumer.heartbeat.interval.ms
	// (5000), within group.consumer.min/max.heartbeat.interval.ms (5000,
	// 15000).
	ConsumerHeartbeatInterval    time.Duration
	ConsumerMinHeartbeatInterval time.Duration
	ConsumerMaxHeartbeatInterval time.Duration
	// ConsumerMaxGroupSize is group.consumer.max.size (MaxInt32).
	ConsumerMaxGroupSize int32
	// ConsumerAssignors is group.consumer.assignors (uniform, range): the
	// server-side assignors served, the first being the default.
	ConsumerAssignors []string
	// ConsumerMigrationPolicy is group.consumer.migration.policy
	// (bidirectional): whether an empty consumer group may become a
	// classic group again on a classic JoinGroup (downgrade) and a classic
	// group a consumer group (upgrade).
	ConsumerMigrationPolicy string

	// Share configures KIP-932 share groups (share_group_config.go).
	Share ShareConfig

	// Clock tells the time; nil is the wall clock.
	Clock clock.Clock
	// Logger logs; nil discards.
	Logger *slog.Logger
}

// Kafka's defaults (GroupCoordinatorConfig, OffsetConfig).
const (
	DefaultNumPartitions                 = 50
	DefaultMinSessionTimeout             = 6 * time.Second
	DefaultMaxSessionTimeout             = 30 * time.Minute
	DefaultInitialRebalanceDelay         = 3 * time.Second
	DefaultNewMemberJoinTimeout          = 5 * time.Minute
	DefaultMaxGroupSize                  = math.MaxInt32
	DefaultOffsetsRetention              = 7 * 24 * time.Hour
	DefaultOffsetsRetentionCheckInterval = 10 * time.Minute
	DefaultOffsetMetadataMaxBytes        = 4096

	DefaultConsumerSessionTimeout       = 45 * time.Second
	DefaultConsumerMinSessionTimeout    = 45 * time.Second
	DefaultConsumerMaxSessionTimeout    = 60 * time.Second
	DefaultConsumerHeartbeatInterval    = 5 * time.Second
	DefaultConsumerMinHeartbeatInterval = 5 * time.Second
	DefaultConsumerMaxHeartbeatInterval = 15 * time.Second
	DefaultConsumerMaxGroupSize         = math.MaxInt32
	DefaultConsumerMigrationPolicy      = "bidirectional"
)

// DefaultConsumerAssignors is group.consumer.assignors' default.
var DefaultConsumerAssignors = []string{"uniform", "range"}

func (cfg Config) withDefaults() Config {
	if cfg.NumPartitions == 0 {
		cfg.NumPartitions = DefaultNumPartitions
	}
	if cfg.MinSessionTimeout == 0 {
		cfg.MinSessionTimeout = DefaultMinSessionTimeout
	}
	if cfg.MaxSessionTimeout == 0 {
		cfg.MaxSessionTimeout = DefaultMaxSessionTimeout
	}
	if cfg.InitialRebalanceDelay == 0 {
		cfg.InitialRebalanceDelay = DefaultInitialRebalanceDelay
	}
	if cfg.InitialRebalanceDelay < 0 {
		cfg.InitialRebalanceDelay = 0
	}
	if cfg.NewMemberJoinTimeout == 0 {
		cfg.NewMemberJoinTimeout = DefaultNewMemberJoinTimeout
	}
	if cfg.MaxGroupSize == 0 {
		cfg.MaxGroupSize = DefaultMaxGroupSize
	}
	if cfg.OffsetsRetention == 0 {
		cfg.OffsetsRetention = DefaultOffsetsRetention
	}
	if cfg.OffsetsRetentionCheckInterval == 0 {
		cfg.OffsetsRetentionCheckInterval = DefaultOffsetsRetentionCheckInterval
	}
	if cfg.OffsetMetadataMaxBytes == 0 {
		cfg.OffsetMetadataMaxBytes = DefaultOffsetMetadataMaxBytes
	}
	defaultDuration(&cfg.ConsumerSessionTimeout, DefaultConsumerSessionTimeout)
	defaultDuration(&cfg.ConsumerMinSessionTimeout, DefaultConsumerMinSessionTimeout)
	defaultDuration(&cfg.ConsumerMaxSessionTimeout, DefaultConsumerMaxSessionTimeout)
	defaultDuration(&cfg.ConsumerHeartbeatInterval, DefaultConsumerHeartbeatInterval)
	defaultDuration(&cfg.ConsumerMinHeartbeatInterval, DefaultConsumerMinHeartbeatInterval)
	defaultDuration(&cfg.ConsumerMaxHeartbeatInterval, DefaultConsumerMaxHeartbeatInterval)
	if cfg.ConsumerMaxGroupSize == 0 {
		cfg.ConsumerMaxGroupSize = DefaultConsumerMaxGroupSize
	}
	if len(cfg.ConsumerAssignors) == 0 {
		cfg.ConsumerAssignors = DefaultConsumerAssignors
	}
	if cfg.ConsumerMigrationPolicy == "" {
		cfg.ConsumerMigrationPolicy = DefaultConsumerMigrationPolicy
	}
	cfg.Share = cfg.Share.withDefaults()
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Endpoint == nil {
		cfg.Endpoint = DefaultEndpoint
	}
	return cfg
}

// validate reports a configuration the coordinator cannot run with.
func (cfg Config) validate() error {
	switch {
	case cfg.Log == nil:
		return fmt.Errorf("coordinator: Config.Log is required")
	case cfg.Image == nil:
		return fmt.Errorf("coordinator: Config.Image is required")
	case cfg.NumPartitions < 1:
		return fmt.Errorf("coordinator: offsets.topic.num.partitions must be at least 1, got %d", cfg.NumPartitions)
	case cfg.MinSessionTimeout > cfg.MaxSessionTimeout:
		return fmt.Errorf("coordinator: group.min.session.timeout.ms (%d) is above group.max.session.timeout.ms (%d)",
			cfg.MinSessionTimeout.Milliseconds(), cfg.MaxSessionTimeout.Milliseconds())
	case cfg.MaxGroupSize < 1:
		return fmt.Errorf("coordinator: group.max.size must be at least 1, got %d", cfg.MaxGroupSize)
	case cfg.OffsetsRetentionCheckInterval < 0 || cfg.OffsetsRetention < 0:
		return fmt.Errorf("coordinator: offsets retention settings must not be negative")
	}
	if err := cfg.validateConsumer(); err != nil {
		return err
	}
	return cfg.Share.validate()
}

// validateConsumer checks the KIP-848 settings as GroupCoordinatorConfig does.
func (cfg Config) validateConsumer() error {
	msOf := func(d time.Duration) int64 { return d.Milliseconds() }
	switch {
	case cfg.ConsumerSessionTimeout < cfg.ConsumerMinSessionTimeout:
		return fmt.Errorf("coordinator: group.consumer.session.timeout.ms (%d) must be at least group.consumer.min.session.timeout.ms (%d)",
			msOf(cfg.ConsumerSessionTimeout), msOf(cfg.ConsumerMinSessionTimeout))
	case cfg.ConsumerSessionTimeout > cfg.ConsumerMaxSessionTimeout:
		return fmt.Errorf("coordinator: group.consumer.session.timeout.ms (%d) must be at most group.consumer.max.session.timeout.ms (%d)",
			msOf(cfg.ConsumerSessionTimeout), msOf(cfg.ConsumerMaxSessionTimeout))
	case cfg.ConsumerHeartbeatInterval < cfg.ConsumerMinHeartbeatInterval:
		return fmt.Errorf("coordinator: group.consumer.heartbeat.interval.ms (%d) must be at least group.consumer.min.heartbeat.interval.ms (%d)",
			msOf(cfg.ConsumerHeartbeatInterval), msOf(cfg.ConsumerMinHeartbeatInterval))
	case cfg.ConsumerHeartbeatInterval > cfg.ConsumerMaxHeartbeatInterval:
		return fmt.Errorf("coordinator: group.consumer.heartbeat.interval.ms (%d) must be at most group.consumer.max.heartbeat.interval.ms (%d)",
			msOf(cfg.ConsumerHeartbeatInterval), msOf(cfg.ConsumerMaxHeartbeatInterval))
	case cfg.ConsumerHeartbeatInterval >= cfg.ConsumerSessionTimeout:
		return fmt.Errorf("coordinator: group.consumer.heartbeat.interval.ms (%d) must be less than group.consumer.session.timeout.ms (%d)",
			msOf(cfg.ConsumerHeartbeatInterval), msOf(cfg.ConsumerSessionTimeout))
	case cfg.ConsumerMaxGroupSize < 1:
		return fmt.Errorf("coordinator: group.consumer.max.size must be at least 1, got %d", cfg.ConsumerMaxGroupSize)
	}
	for _, name := range cfg.ConsumerAssignors {
		if _, ok := consumerAssignor(name); !ok {
			return fmt.Errorf("coordinator: group.consumer.assignors: unknown assignor %q (uniform and range are served)", name)
		}
	}
	switch cfg.ConsumerMigrationPolicy {
	case "disabled", "upgrade", "downgrade", "bidirectional":
	default:
		return fmt.Errorf("coordinator: group.consumer.migration.policy must be disabled, upgrade, downgrade or bidirectional, got %q", cfg.ConsumerMigrationPolicy)
	}
	return nil
}

// upgradeEnabled is ConsumerGroupMigrationPolicy.isUpgradeEnabled.
func (cfg Config) upgradeEnabled() bool {
	return cfg.ConsumerMigrationPolicy == "upgrade" || cfg.ConsumerMigrationPolicy == "bidirectional"
}

func defaultDuration(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// DefaultEndpoint finds nodeID's endpoint for listener in the image, as
// Kafka's MetadataCache.getAliveBrokerNode: the broker must be registered
// and unfenced. An empty listener takes the broker's first endpoint.
func DefaultEndpoint(img *raftmeta.Image, nodeID int32, listener string) (string, int32, bool) {
	if img == nil {
		return "", 0, false
	}
	b, ok := img.Brokers[nodeID]
	if !ok || b.Fenced {
		return "", 0, false
	}
	for _, ep := range b.Endpoints {
		if listener == "" || ep.Listener == listener {
			return ep.Host, ep.Port, true
		}
	}
	return "", 0, false
}
