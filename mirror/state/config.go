package state

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/clock"
)

// Log is how the coordinator reads and writes its partitions of
// __mirror_state. It is the group coordinator's OffsetsLog contract over a
// different topic: the broker adapts replication's ReplicaManager to it
// (AppendCoordinator and ReadToLogEnd on __mirror_state).
type Log interface {
	// Append appends one uncompressed v2 batch built by the coordinator as
	// the partition's leader (AppendOrigin COORDINATOR: the log assigns
	// offsets and the leader epoch) and returns once the batch is
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
	// (FetchIsolation.LOG_END).
	Read(ctx context.Context, partition int32, from int64, maxBytes int32) (data []byte, nextOffset int64, logEndOffset int64, err error)
}

// Config configures a Coordinator. Zero values take the defaults of the
// prototype's ClusterMirrorConfigs (digest §5.2).
type Config struct {
	// Log reads and writes the __mirror_state partitions.
	Log Log
	// Image returns the newest metadata image: topic names resolve to ids
	// through it, writes are fenced by the partitions' current leader
	// epochs in it, and the partition count of an existing __mirror_state
	// topic overrides NumPartitions.
	Image func() *raftmeta.Image
	// NumPartitions is mirror.state.topic.num.partitions (50), used while
	// the image has no __mirror_state topic.
	NumPartitions int32
	// WriteTimeout is mirror.coordinator.write.timeout.ms (5000): how long
	// an append may wait to be committed.
	WriteTimeout time.Duration
	// LoadBufferSize is mirror.coordinator.load.buffer.size (5 MiB): how
	// many bytes each read asks for while loading.
	LoadBufferSize int32
	// Clock stamps the batches; nil is the wall clock.
	Clock clock.Clock
	// Logger logs; nil discards.
	Logger *slog.Logger
}

// The prototype's defaults (ClusterMirrorConfigs, digest §5.2).
const (
	DefaultNumPartitions  = 50
	DefaultWriteTimeout   = 5 * time.Second
	DefaultLoadBufferSize = 5 << 20
	// maxDecompressedBatch bounds a compressed batch read while loading
	// (the coordinator writes uncompressed batches; others may not).
	maxDecompressedBatch = 64 << 20
)

// Validate reports a configuration New would reject.
func (cfg Config) Validate() error { return cfg.withDefaults().validate() }

func (cfg Config) withDefaults() Config {
	if cfg.NumPartitions == 0 {
		cfg.NumPartitions = DefaultNumPartitions
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.LoadBufferSize == 0 {
		cfg.LoadBufferSize = DefaultLoadBufferSize
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

func (cfg Config) validate() error {
	switch {
	case cfg.Log == nil:
		return fmt.Errorf("state: Config.Log is required")
	case cfg.Image == nil:
		return fmt.Errorf("state: Config.Image is required")
	case cfg.NumPartitions < 1:
		return fmt.Errorf("state: mirror.state.topic.num.partitions must be at least 1, got %d", cfg.NumPartitions)
	case cfg.WriteTimeout < 0:
		return fmt.Errorf("state: mirror.coordinator.write.timeout.ms must not be negative")
	case cfg.LoadBufferSize < 1:
		return fmt.Errorf("state: mirror.coordinator.load.buffer.size must be at least 1, got %d", cfg.LoadBufferSize)
	}
	return nil
}
