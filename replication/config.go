package replication

import (
	"context"
	"errors"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/replication/fetcher"
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
	// DefaultRecoveryPointCheckpointIntervalMs is
	// log.flush.offset.checkpoint.interval.ms.
	DefaultRecoveryPointCheckpointIntervalMs = 60000
	// DefaultLogStartOffsetCheckpointIntervalMs is
	// log.flush.start.offset.checkpoint.interval.ms.
	DefaultLogStartOffsetCheckpointIntervalMs = 60000
	// DefaultReplicaLagTimeMaxMs is replica.lag.time.max.ms.
	DefaultReplicaLagTimeMaxMs = 30000
	// DefaultReplicaFetchBackoffMs is replica.fetch.backoff.ms.
	DefaultReplicaFetchBackoffMs = 1000
	// DefaultReplicaSocketTimeoutMs is replica.socket.timeout.ms.
	DefaultReplicaSocketTimeoutMs = 30000
	// DefaultAlterPartitionRetryBackoffMs is how long a failed
	// AlterPartition waits before it is sent again (Kafka retries with
	// its own backoff in AlterPartitionManager).
	DefaultAlterPartitionRetryBackoffMs = 100
	// DefaultInterBrokerListener is inter.broker.listener.name's default.
	DefaultInterBrokerListener = "PLAINTEXT"
	// DefaultRequestTimeoutMs is request.timeout.ms.
	DefaultRequestTimeoutMs = 30000
)

// ControllerChannel carries requests to the active controller. The broker
// wires raftmeta's controller client; a node whose partitions have one
// replica needs none.
type ControllerChannel interface {
	// AlterPartition proposes ISR changes (Kafka's AlterPartitionManager
	// sends the same request). An error means no answer arrived; the
	// changes are sent again.
	AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error)
}

// TxnVerifier asks the transaction coordinator of a transactional id
// whether partitions are in the producer's ongoing transaction (KIP-890:
// AddPartitionsToTxn v4 with VerifyOnly, Kafka's AddPartitionsToTxnManager).
// The broker adapts it to its own transaction coordinator or another
// broker's. A partition's error is the coordinator's answer (nil: in the
// transaction); a returned error means the coordinator could not be asked.
// With add, the partitions are added to the transaction instead (KIP-890
// part 2: AddPartitionsToTxn v5 without VerifyOnly, for a Produce v12+
// under transaction.version 2, whose producer no longer adds them).
type TxnVerifier interface {
	VerifyTransaction(ctx context.Context, transactionalID string, producerID int64, producerEpoch int16,
		partitions []storage.TopicPartition, add bool) (map[storage.TopicPartition]error, error)
}

// Config is a ReplicaManager's dependencies and settings. Zero values mean
// Kafka's defaults.
type Config struct {
	// Transactions says the broker serves transactions (a transaction
	// coordinator closes what producers open); without it transactional
	// produce is refused, since no marker could ever end a transaction.
	Transactions bool
	// TxnVerifier verifies transactional writes with the coordinator
	// before they are appended (transaction.partition.verification.enable);
	// nil appends them unverified.
	TxnVerifier TxnVerifier
	// TxnVerificationEnabled, when not nil, says for each produce whether
	// TxnVerifier is asked: transaction.partition.verification.enable
	// changes at runtime (Kafka's DynamicProducerStateManagerConfig, which
	// ReplicaManager reads per append).
	TxnVerificationEnabled func() bool
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
	// the high watermark checkpoints.
	HighWatermarkCheckpointIntervalMs int64
	// RecoveryPointCheckpointIntervalMs is
	// log.flush.offset.checkpoint.interval.ms and
	// LogStartOffsetCheckpointIntervalMs
	// log.flush.start.offset.checkpoint.interval.ms: how often Start writes
	// those checkpoints. 0 takes the default; negative writes them only
	// when the LogManager closes (Kafka runs a task with period 0 once).
	RecoveryPointCheckpointIntervalMs  int64
	LogStartOffsetCheckpointIntervalMs int64
	// Metrics receives bytes in and out per topic; nil records nothing.
	Metrics Metrics

	// ControllerChannel carries AlterPartition (ISR changes) to the active
	// controller. Nil: ISR changes stay pending (a single-node broker
	// never proposes one).
	ControllerChannel ControllerChannel
	// CatchUpMetadata waits, bounded, until the metadata records this
	// broker has received are applied, reporting whether there were any
	// (raftmeta.Quorum.CatchUp); nil waits only for a delta ApplyDelta is
	// applying.
	CatchUpMetadata func(ctx context.Context) bool
	// BrokerEpoch returns this broker's epoch from its registration, sent
	// in fetches (ReplicaState.Epoch) and AlterPartition; nil sends -1.
	BrokerEpoch func() int64
	// InterBrokerListener is inter.broker.listener.name: followers connect
	// to the leader's endpoint of this listener (default PLAINTEXT).
	InterBrokerListener string
	// DialLeader opens a follower fetcher's connection to a leader's
	// inter-broker endpoint (broker/ passes wire/kclient with the
	// inter-broker listener's dialer and SASL login; replication may not
	// import wire). Nil with NewLeaderEndPoint nil: followers cannot
	// fetch (errNoDialLeader).
	DialLeader func(LeaderConnConfig) LeaderConn
	// NewLeaderEndPoint overrides how a follower reaches a leader (tests
	// and simulations); nil opens a blocking connection (DialLeader) to
	// the leader's inter-broker endpoint.
	NewLeaderEndPoint func(leader fetcher.BrokerEndPoint) (fetcher.LeaderEndPoint, error)
	// Scheduler runs AlterPartition sends off the request path; nil runs
	// each in a goroutine. A simulation queues them to run when it likes.
	Scheduler storage.Scheduler

	// ReplicaLagTimeMaxMs is replica.lag.time.max.ms: a follower that has
	// not caught up with the leader's log end for this long leaves the
	// ISR; the check runs every half of it.
	ReplicaLagTimeMaxMs int64
	// ReplicaFetchWaitMaxMs, ReplicaFetchMinBytes and ReplicaFetchMaxBytes
	// are replica.fetch.wait.max.ms (500), replica.fetch.min.bytes (1) and
	// replica.fetch.max.bytes (1 MiB, per partition) of the followers'
	// fetches; their MaxBytes is ReplicaFetchResponseMaxBytes.
	ReplicaFetchWaitMaxMs int32
	ReplicaFetchMinBytes  int32
	ReplicaFetchMaxBytes  int32
	// ReplicaFetchCoalesceMinBytes and ReplicaFetchCoalesceWaitMs are
	// replica.fetch.coalesce.min.bytes (128 KiB) and
	// replica.fetch.coalesce.wait.ms: what a follower's fetch asks for while
	// its leader streams (fetcher/coalesce.go). A zero wait, as here when
	// unset, turns coalescing off; the broker passes its config (3 ms).
	ReplicaFetchCoalesceMinBytes int32
	ReplicaFetchCoalesceWaitMs   int32
	// ReplicaFetchBackoffMs is replica.fetch.backoff.ms.
	ReplicaFetchBackoffMs int64
	// ReplicaSocketTimeoutMs is replica.socket.timeout.ms: how long a
	// follower waits for a leader's answer beyond the fetch's wait.
	ReplicaSocketTimeoutMs int64
	// AlterPartitionRetryBackoffMs spaces AlterPartition retries; negative
	// retries at once.
	AlterPartitionRetryBackoffMs int64
	// RequestTimeoutMs is request.timeout.ms: how long WriteTxnMarkers
	// waits for the ISR to replicate its markers (Kafka's
	// handleWriteTxnMarkersRequest appends with this timeout), since the
	// request carries none of its own.
	RequestTimeoutMs int64
	// ReplicationThrottledRates returns leader.replication.throttled.rate
	// and follower.replication.throttled.rate, in bytes per second, as img's
	// dynamic broker configs set them (KIP-73); nil means no limit.
	ReplicationThrottledRates func(img *raftmeta.Image) (leader, follower int64)
	// AlterLogDirsRate returns
	// replica.alter.log.dirs.io.max.bytes.per.second as img sets it: how
	// fast replicas are copied between log directories (log_dir_move.go);
	// nil means no limit.
	AlterLogDirsRate func(img *raftmeta.Image) int64
	// ReplicationQuotaWindowNum and ReplicationQuotaWindowSizeSeconds are
	// replication.quota.window.num (11) and
	// replication.quota.window.size.seconds (1): the throttles' rate is
	// measured over that many windows of that size.
	ReplicationQuotaWindowNum         int
	ReplicationQuotaWindowSizeSeconds int
	// NoTruncationOnFetch makes followers find divergence with
	// OffsetForLeaderEpoch before fetching instead of from DivergingEpoch
	// answers (Kafka before IBP 2.7); for tests of both paths.
	NoTruncationOnFetch bool
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
	if c.RequestTimeoutMs <= 0 {
		c.RequestTimeoutMs = DefaultRequestTimeoutMs
	}
	if c.HighWatermarkCheckpointIntervalMs <= 0 {
		c.HighWatermarkCheckpointIntervalMs = DefaultHighWatermarkCheckpointIntervalMs
	}
	if c.RecoveryPointCheckpointIntervalMs == 0 {
		c.RecoveryPointCheckpointIntervalMs = DefaultRecoveryPointCheckpointIntervalMs
	}
	if c.LogStartOffsetCheckpointIntervalMs == 0 {
		c.LogStartOffsetCheckpointIntervalMs = DefaultLogStartOffsetCheckpointIntervalMs
	}
	if c.Metrics == nil {
		c.Metrics = nopMetrics{}
	}
	if c.BrokerEpoch == nil {
		c.BrokerEpoch = func() int64 { return -1 }
	}
	if c.InterBrokerListener == "" {
		c.InterBrokerListener = DefaultInterBrokerListener
	}
	if c.Scheduler == nil {
		c.Scheduler = storage.GoScheduler{}
	}
	if c.ReplicaLagTimeMaxMs <= 0 {
		c.ReplicaLagTimeMaxMs = DefaultReplicaLagTimeMaxMs
	}
	if c.ReplicaFetchWaitMaxMs == 0 {
		c.ReplicaFetchWaitMaxMs = fetcher.DefaultFetchWaitMaxMs
	}
	if c.ReplicaFetchMinBytes <= 0 {
		c.ReplicaFetchMinBytes = fetcher.DefaultFetchMinBytes
	}
	if c.ReplicaFetchMaxBytes <= 0 {
		c.ReplicaFetchMaxBytes = fetcher.DefaultFetchMaxBytes
	}
	if c.ReplicaFetchCoalesceMinBytes <= 0 {
		c.ReplicaFetchCoalesceMinBytes = fetcher.DefaultFetchCoalesceMinBytes
	}
	if c.ReplicaFetchBackoffMs <= 0 {
		c.ReplicaFetchBackoffMs = DefaultReplicaFetchBackoffMs
	}
	if c.ReplicaSocketTimeoutMs <= 0 {
		c.ReplicaSocketTimeoutMs = DefaultReplicaSocketTimeoutMs
	}
	if c.ReplicationThrottledRates == nil {
		c.ReplicationThrottledRates = func(*raftmeta.Image) (int64, int64) {
			return DefaultReplicationThrottledRate, DefaultReplicationThrottledRate
		}
	}
	if c.ReplicationQuotaWindowNum <= 0 {
		c.ReplicationQuotaWindowNum = DefaultReplicationQuotaWindowNum
	}
	if c.ReplicationQuotaWindowSizeSeconds <= 0 {
		c.ReplicationQuotaWindowSizeSeconds = DefaultReplicationQuotaWindowSizeSeconds
	}
	if c.AlterPartitionRetryBackoffMs == 0 {
		c.AlterPartitionRetryBackoffMs = DefaultAlterPartitionRetryBackoffMs
	}
	return c, nil
}
