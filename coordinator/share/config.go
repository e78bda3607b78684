package share

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/clock"
)

// Topic is the internal topic holding share-partition state (Kafka's
// Topic.SHARE_GROUP_STATE_TOPIC_NAME).
const Topic = raftmeta.ShareGroupStateTopic

// Log reads, appends to and prunes the __share_group_state partitions this
// broker leads. The broker adapts its replica manager.
type Log interface {
	runtime.LogReader
	runtime.LogWriter
	// DeleteRecords moves the log start offset of a partition this broker
	// leads up to offset, as the coordinator's pruning asks (Kafka's
	// PartitionWriter.deleteRecords, allowed on an internal topic).
	DeleteRecords(ctx context.Context, partition int32, offset int64) error
}

// Config configures a Coordinator. Zero values take Kafka's defaults
// (ShareCoordinatorConfig), but for SnapshotUpdateRecordsPerSnapshot,
// whose 0 means something; the broker converts milliseconds.
type Config struct {
	// Log is the __share_group_state partitions. Required.
	Log Log
	// Image returns the newest metadata image: the topics whose
	// share-partitions may have state, and brokers' endpoints
	// (FindCoordinator). Required.
	Image func() *raftmeta.Image
	// EnsureTopic creates __share_group_state if it is missing
	// (FindCoordinator for a share-partition key, as Kafka creates it).
	EnsureTopic func(ctx context.Context) error
	// Endpoint resolves a broker's advertised endpoint; nil uses
	// coordinator.DefaultEndpoint.
	Endpoint coordinator.EndpointFunc

	// NumPartitions is share.coordinator.state.topic.num.partitions (50),
	// or the partition count of the existing topic.
	NumPartitions int32
	// SnapshotUpdateRecordsPerSnapshot is
	// share.coordinator.snapshot.update.records.per.snapshot (Kafka's
	// default is 500; the broker passes it): how many update records a
	// share-partition gets between two snapshots; 0 writes a snapshot
	// every time. Negative is 0.
	SnapshotUpdateRecordsPerSnapshot int32
	// WriteTimeout is share.coordinator.write.timeout.ms (5 s): how long
	// an append waits for the replicas.
	WriteTimeout time.Duration
	// LoadBufferSize is share.coordinator.load.buffer.size (5 MiB).
	LoadBufferSize int32
	// PruneInterval is share.coordinator.state.topic.prune.interval.ms
	// (5 minutes): how often the records below every share-partition's
	// latest snapshot are deleted.
	PruneInterval time.Duration
	// ColdPartitionSnapshotInterval is
	// share.coordinator.cold.partition.snapshot.interval.ms (5 minutes):
	// a share-partition whose snapshot is older than this gets a new one,
	// so that pruning can move past it.
	ColdPartitionSnapshotInterval time.Duration

	Clock  clock.Clock
	Logger *slog.Logger
}

// Kafka's defaults (ShareCoordinatorConfig).
const (
	DefaultNumPartitions                    = 50
	DefaultSnapshotUpdateRecordsPerSnapshot = 500
	DefaultWriteTimeout                     = 5 * time.Second
	DefaultLoadBufferSize                   = 5 << 20
	DefaultPruneInterval                    = 5 * time.Minute
	DefaultColdPartitionSnapshotInterval    = 5 * time.Minute
	// MaxSnapshotUpdateRecordsPerSnapshot is the highest
	// share.coordinator.snapshot.update.records.per.snapshot Kafka takes.
	MaxSnapshotUpdateRecordsPerSnapshot = 500
)

func (cfg Config) withDefaults() (Config, error) {
	switch {
	case cfg.Log == nil:
		return cfg, errors.New("share: Config.Log is required")
	case cfg.Image == nil:
		return cfg, errors.New("share: Config.Image is required")
	case cfg.SnapshotUpdateRecordsPerSnapshot > MaxSnapshotUpdateRecordsPerSnapshot:
		return cfg, fmt.Errorf("share: share.coordinator.snapshot.update.records.per.snapshot must be between [0, %d], got %d",
			MaxSnapshotUpdateRecordsPerSnapshot, cfg.SnapshotUpdateRecordsPerSnapshot)
	}
	if cfg.Endpoint == nil {
		cfg.Endpoint = coordinator.DefaultEndpoint
	}
	if cfg.NumPartitions <= 0 {
		cfg.NumPartitions = DefaultNumPartitions
	}
	cfg.SnapshotUpdateRecordsPerSnapshot = max(cfg.SnapshotUpdateRecordsPerSnapshot, 0)
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.LoadBufferSize <= 0 {
		cfg.LoadBufferSize = DefaultLoadBufferSize
	}
	if cfg.PruneInterval <= 0 {
		cfg.PruneInterval = DefaultPruneInterval
	}
	if cfg.ColdPartitionSnapshotInterval <= 0 {
		cfg.ColdPartitionSnapshotInterval = DefaultColdPartitionSnapshotInterval
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}
