package txn

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/clock"
)

// Topic is the internal topic holding the transaction log (Kafka's
// Topic.TRANSACTION_STATE_TOPIC_NAME).
const Topic = raftmeta.TransactionStateTopic

// MarkerWriter sends WriteTxnMarkers to a partition leader: this broker's
// own replica manager, or another broker over the inter-broker listener
// (Kafka's TransactionMarkerChannelManager). The broker adapts it.
type MarkerWriter interface {
	WriteTxnMarkers(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error)
}

// Config configures a Coordinator. Durations Kafka configures in
// milliseconds are time.Durations; the broker converts. Zero values take
// Kafka's defaults.
type Config struct {
	// Log reads and writes the __transaction_state partitions (appends
	// with acks=all, as the group coordinator's).
	Log coordinator.OffsetsLog
	// Image returns the newest metadata image: partition leaders (for the
	// markers), the topics that exist (AddPartitionsToTxn), brokers'
	// endpoints (FindCoordinator).
	Image func() *raftmeta.Image
	// EnsureTopic creates __transaction_state if it is missing
	// (FindCoordinator for a transactional id, as Kafka creates it).
	EnsureTopic func(ctx context.Context) error
	// Endpoint resolves a broker's advertised endpoint; nil uses
	// coordinator.DefaultEndpoint.
	Endpoint coordinator.EndpointFunc
	// ProducerID hands out a new producer id (the broker's producer id
	// manager, shared with idempotent producers).
	ProducerID func(ctx context.Context) (int64, error)
	// Markers sends the transaction markers.
	Markers MarkerWriter
	// OffsetsPartitions is offsets.topic.num.partitions: AddOffsetsToTxn
	// adds the group's __consumer_offsets partition.
	OffsetsPartitions int32

	// NumPartitions is transaction.state.log.num.partitions (50).
	NumPartitions int32
	// LoadBufferSize is transaction.state.log.load.buffer.size (5 MiB).
	LoadBufferSize int32
	// MaxTimeout is transaction.max.timeout.ms (15 minutes).
	MaxTimeout time.Duration
	// IDExpiration is transactional.id.expiration.ms (7 days).
	IDExpiration time.Duration
	// AbortInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms (10 s).
	AbortInterval time.Duration
	// RemoveInterval is
	// transaction.remove.expired.transaction.cleanup.interval.ms (1 hour).
	RemoveInterval time.Duration
	// RequestTimeout bounds an append to the transaction log and a marker
	// request (request.timeout.ms, 30 s).
	RequestTimeout time.Duration
	// MarkerRetryBackoff spaces the retries of markers that failed
	// (Kafka retries through its NetworkClient, at retry.backoff.ms).
	MarkerRetryBackoff time.Duration
	// ConcurrentWait is how long AddPartitionsToTxn, AddOffsetsToTxn and
	// EndTxn wait for a transition of their transactional id to finish
	// before they answer CONCURRENT_TRANSACTIONS; negative: not at all,
	// as Kafka answers. See shard.whileConcurrentLocked.
	ConcurrentWait time.Duration

	Clock  clock.Clock
	Logger *slog.Logger
}

// Kafka's defaults (TransactionLogConfig, TransactionStateManagerConfig).
const (
	DefaultNumPartitions      = 50
	DefaultLoadBufferSize     = 5 << 20
	DefaultMaxTimeout         = 15 * time.Minute
	DefaultIDExpiration       = 7 * 24 * time.Hour
	DefaultAbortInterval      = 10 * time.Second
	DefaultRemoveInterval     = time.Hour
	DefaultRequestTimeout     = 30 * time.Second
	DefaultMarkerRetryBackoff = 100 * time.Millisecond
	DefaultConcurrentWait     = 200 * time.Millisecond
)

func (cfg Config) withDefaults() (Config, error) {
	switch {
	case cfg.Log == nil:
		return cfg, errors.New("txn: Config.Log is required")
	case cfg.Image == nil:
		return cfg, errors.New("txn: Config.Image is required")
	case cfg.ProducerID == nil:
		return cfg, errors.New("txn: Config.ProducerID is required")
	case cfg.Markers == nil:
		return cfg, errors.New("txn: Config.Markers is required")
	}
	if cfg.Endpoint == nil {
		cfg.Endpoint = coordinator.DefaultEndpoint
	}
	if cfg.OffsetsPartitions <= 0 {
		cfg.OffsetsPartitions = coordinator.DefaultNumPartitions
	}
	if cfg.NumPartitions <= 0 {
		cfg.NumPartitions = DefaultNumPartitions
	}
	if cfg.LoadBufferSize <= 0 {
		cfg.LoadBufferSize = DefaultLoadBufferSize
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = DefaultMaxTimeout
	}
	if cfg.IDExpiration <= 0 {
		cfg.IDExpiration = DefaultIDExpiration
	}
	if cfg.AbortInterval <= 0 {
		cfg.AbortInterval = DefaultAbortInterval
	}
	if cfg.RemoveInterval <= 0 {
		cfg.RemoveInterval = DefaultRemoveInterval
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.MarkerRetryBackoff <= 0 {
		cfg.MarkerRetryBackoff = DefaultMarkerRetryBackoff
	}
	if cfg.ConcurrentWait == 0 {
		cfg.ConcurrentWait = DefaultConcurrentWait
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}
