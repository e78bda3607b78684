package replication

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
)

// ReplicaManager owns the local replicas of this broker (Kafka's
// ReplicaManager). broker/ serves it as wire.ReplicaService.
type ReplicaManager struct {
	cfg     Config
	nodeID  int32
	logs    *storage.LogManager
	logger  *slog.Logger
	clock   clock.Clock
	metrics Metrics

	// image is the newest metadata image applied; table the local
	// partitions it implies. Both are replaced whole, never mutated.
	image atomic.Pointer[raftmeta.Image]
	table atomic.Pointer[partitionTable]
	// unloadedImage is the image the manager holds until its first
	// ApplyDelta: a restarting node serves requests before it caught up
	// with the metadata log (loadReplicas), and this empty image says
	// nothing about which topics exist (getPartitionOrError).
	unloadedImage *raftmeta.Image

	// mu serialises ApplyDelta and OnLeadershipChange; it guards the
	// fields below. The data path never takes it.
	mu        sync.Mutex
	listeners []LeadershipListener
	loaded    bool
	// logsConfigured is set once the first image gave the logs found on
	// disk their topic configs (ApplyDelta); until then they hold the
	// broker defaults and no log maintenance runs (runBackground).
	// configured is closed at the same time: it starts the log cleaner.
	logsConfigured atomic.Bool
	configured     chan struct{}
	// materializing are the drill clone partitions whose logs are being
	// built off the apply path (clone_materialize.go).
	materializing map[storage.TopicPartition]bool

	sessions *fetchSessionCache
	// applying is closed when the delta being applied is, nil between
	// deltas (metadata_wait.go).
	applying atomic.Pointer[chan struct{}]
	// nudges end followers' parked fetches when a partition they have
	// not fetched yet gets data (follower_nudge.go).
	nudges followerNudges
	// fetchers copy the partitions this node follows from their leaders.
	fetchers       *fetcher.Manager
	alterPartition *alterPartitionManager
	// quotas are the replication throttles (replication_quota.go).
	quotas ReplicationQuotas
	// moves are the replicas moving between log directories
	// (log_dir_move.go).
	moves logDirMoves
	// txnCompleter takes WriteTxnMarkers' __consumer_offsets markers.
	txnCompleter atomic.Pointer[txnCompleterBox]

	// ctx ends with Stop; background sends (AlterPartition) use it.
	ctx    context.Context
	cancel context.CancelFunc

	startOnce sync.Once
	stopOnce  sync.Once
	done      chan struct{}
	wg        sync.WaitGroup
}

// LeadershipListener hears that this node became (leader=true) or stopped
// being (leader=false) the leader of tp, or leads it in a new epoch.
type LeadershipListener func(tp storage.TopicPartition, leader bool, epoch int32)

// partitionTable is the immutable set of local partitions.
type partitionTable struct {
	byTP map[storage.TopicPartition]*Partition
	// offline are local replicas whose log could not be opened or
	// created; they answer KAFKA_STORAGE_ERROR.
	offline map[storage.TopicPartition]error
}

func (t *partitionTable) clone() *partitionTable {
	n := &partitionTable{
		byTP:    make(map[storage.TopicPartition]*Partition, len(t.byTP)),
		offline: make(map[storage.TopicPartition]error, len(t.offline)),
	}
	for k, v := range t.byTP {
		n.byTP[k] = v
	}
	for k, v := range t.offline {
		n.offline[k] = v
	}
	return n
}

// NewReplicaManager returns a manager with no partitions; ApplyDelta
// brings them up.
func NewReplicaManager(cfg Config) (*ReplicaManager, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &ReplicaManager{
		cfg:           cfg,
		nodeID:        cfg.NodeID,
		logs:          cfg.Logs,
		logger:        cfg.Logger.With("component", "replica-manager"),
		clock:         cfg.Clock,
		metrics:       cfg.Metrics,
		done:          make(chan struct{}),
		configured:    make(chan struct{}),
		materializing: map[storage.TopicPartition]bool{},
	}
	r.listeners = append(r.listeners, r.settleCloneLeader)
	r.sessions = newFetchSessionCache(cfg.FetchSessionCacheSlots, cfg.FetchSessionEvictionMs, cfg.Clock)
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.alterPartition = newAlterPartitionManager(r)
	window := time.Duration(cfg.ReplicationQuotaWindowSizeSeconds) * time.Second
	r.quotas = ReplicationQuotas{
		Leader:   NewReplicationQuota(cfg.Clock, cfg.ReplicationQuotaWindowNum, window),
		Follower: NewReplicationQuota(cfg.Clock, cfg.ReplicationQuotaWindowNum, window),
	}
	newEndPoint := cfg.NewLeaderEndPoint
	if newEndPoint == nil {
		newEndPoint = r.newBrokerEndPoint
	}
	r.fetchers = fetcher.NewManager(fetcher.ManagerConfig{
		Name:        fmt.Sprintf("ReplicaFetcher-%d", cfg.NodeID),
		NewEndPoint: newEndPoint,
		Replicas:    r.followerReplica,
		Clock:       cfg.Clock,
		Backoff:     time.Duration(cfg.ReplicaFetchBackoffMs) * time.Millisecond,
		Logger:      r.logger,
		Quota:       r.quotas.Follower,
		// A follower answering a nudge while it applies the delta that
		// assigned the nudged partition fetches again only once the
		// partition is in its fetcher (follower_nudge.go).
		AwaitMetadata: func(ctx context.Context) { r.awaitMetadata(ctx) },
	})
	r.unloadedImage = raftmeta.EmptyImage()
	r.image.Store(r.unloadedImage)
	r.table.Store(&partitionTable{byTP: map[storage.TopicPartition]*Partition{}, offline: map[storage.TopicPartition]error{}})
	return r, nil
}

// Start runs the background work: the replica fetchers of the partitions
// this node follows, the ISR expiration check every half
// replica.lag.time.max.ms, log retention and maintenance every
// log.retention.check.interval.ms, the log cleaner's threads (on their own
// schedule, log.cleaner.backoff.ms), and the log directory checkpoints:
// high watermarks every replica.high.watermark.checkpoint.interval.ms,
// recovery points every log.flush.offset.checkpoint.interval.ms, log start
// offsets every log.flush.start.offset.checkpoint.interval.ms. It returns
// at once; Stop or ctx ends the work. A simulation that drives the fetchers and the ISR
// check itself does not call it.
func (r *ReplicaManager) Start(ctx context.Context) {
	r.startOnce.Do(func() {
		r.fetchers.Start(ctx)
		r.wg.Add(1)
		go r.runBackground(ctx)
	})
}

func (r *ReplicaManager) runBackground(ctx context.Context) {
	defer r.wg.Done()
	retention := time.NewTicker(time.Duration(r.cfg.RetentionCheckIntervalMs) * time.Millisecond)
	defer retention.Stop()
	checkpoint := time.NewTicker(time.Duration(r.cfg.HighWatermarkCheckpointIntervalMs) * time.Millisecond)
	defer checkpoint.Stop()
	recoveryPoints, stopRecoveryPoints := optionalTicker(r.cfg.RecoveryPointCheckpointIntervalMs)
	defer stopRecoveryPoints()
	logStarts, stopLogStarts := optionalTicker(r.cfg.LogStartOffsetCheckpointIntervalMs)
	defer stopLogStarts()
	isrExpiration := time.NewTicker(time.Duration(max(r.cfg.ReplicaLagTimeMaxMs/2, 1)) * time.Millisecond)
	defer isrExpiration.Stop()
	configured := r.configured
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.done:
			return
		case <-configured:
			// As retention below, the cleaner waits for the first image:
			// a log opened with the broker's defaults may not be a
			// compacted topic's, or may be one that must not be
			// compacted. The LogManager stops its threads when closed.
			r.logs.StartCleaner()
			configured = nil
		case <-isrExpiration.C:
			r.MaybeShrinkIsr()
		case <-retention.C:
			if !r.logsConfigured.Load() {
				// The logs were opened from disk with the broker's
				// defaults: retention would delete the segments of a
				// topic with retention.ms=-1 or cleanup.policy=compact
				// by the default 7 days. Kafka starts its LogManager's
				// retention, flush and cleaner tasks only on the first
				// caught-up image (BrokerMetadataPublisher).
				continue
			}
			if err := r.logs.RunMaintenance(); err != nil {
				r.logger.Warn("log maintenance failed", "err", err)
			}
		case <-checkpoint.C:
			if err := r.logs.CheckpointHighWatermarks(); err != nil {
				r.logger.Warn("writing the high watermark checkpoints failed", "err", err)
			}
		case <-recoveryPoints:
			if err := r.logs.CheckpointRecoveryPoints(); err != nil {
				r.logger.Warn("writing the recovery point checkpoints failed", "err", err)
			}
		case <-logStarts:
			if err := r.logs.CheckpointLogStartOffsets(); err != nil {
				r.logger.Warn("writing the log start offset checkpoints failed", "err", err)
			}
		}
	}
}

// optionalTicker ticks every ms milliseconds; for ms <= 0 its channel is
// nil, so a select never takes it.
func optionalTicker(ms int64) (<-chan time.Time, func()) {
	if ms <= 0 {
		return nil, func() {}
	}
	t := time.NewTicker(time.Duration(ms) * time.Millisecond)
	return t.C, t.Stop
}

// Stop ends the background work, stops the fetchers and releases every
// parked request (long polls answer with what they have, acks=all waits
// time out). It does not close the LogManager: the broker does, after
// Stop.
func (r *ReplicaManager) Stop() {
	r.stopOnce.Do(func() {
		close(r.done)
		r.cancel()
	})
	r.fetchers.Shutdown()
	r.wg.Wait()
}

// MaybeShrinkIsr removes followers that lag more than
// replica.lag.time.max.ms from the ISR of every partition this node leads
// (Kafka's ReplicaManager.maybeShrinkIsr, run by the isr-expiration task).
func (r *ReplicaManager) MaybeShrinkIsr() {
	now := r.nowMs()
	for _, p := range r.Partitions() {
		p.maybeShrinkIsr(now)
	}
}

// FetcherManager is the manager of this node's replica fetchers. Before
// Start its fetchers run only when driven (Fetcher.DoWork or the step
// methods), which a simulation does.
func (r *ReplicaManager) FetcherManager() *fetcher.Manager { return r.fetchers }

func (r *ReplicaManager) nowMs() int64 { return r.clock.Now().UnixMilli() }

func (r *ReplicaManager) currentImage() *raftmeta.Image { return r.image.Load() }

// Partition returns the local replica of tp.
func (r *ReplicaManager) Partition(tp storage.TopicPartition) (*Partition, bool) {
	p, ok := r.table.Load().byTP[tp]
	return p, ok
}

// Partitions returns every local replica.
func (r *ReplicaManager) Partitions() []*Partition {
	t := r.table.Load()
	out := make([]*Partition, 0, len(t.byTP))
	for _, p := range t.byTP {
		out = append(out, p)
	}
	return out
}

// getPartitionOrError finds the local replica of tp (Kafka's
// getPartitionOrError): an offline log answers KAFKA_STORAGE_ERROR, a
// partition the metadata knows but this broker does not host
// NOT_LEADER_OR_FOLLOWER, anything else UNKNOWN_TOPIC_OR_PARTITION.
//
// Until the manager took its first image (a node restarting serves
// requests before it caught up with the metadata log, which Kafka does
// not) it knows no topic, and every partition answers
// NOT_LEADER_OR_FOLLOWER: the client looks for the leader elsewhere, as
// Kafka's answer for a partition this broker does not host tells it to.
// UNKNOWN_TOPIC_OR_PARTITION would be a lie some clients do not retry:
// librdkafka (up to 2.x) takes it as final for ListOffsets and hands the
// application "Failed to query logical offset", on which kcat -G exits.
func (r *ReplicaManager) getPartitionOrError(tp storage.TopicPartition, img *raftmeta.Image) (*Partition, error) {
	t := r.table.Load()
	if p, ok := t.byTP[tp]; ok {
		return p, nil
	}
	if _, ok := t.offline[tp]; ok {
		return nil, kerr.KafkaStorageError
	}
	if _, ok := img.Partition(tp.Topic, tp.Partition); ok || img == r.unloadedImage {
		return nil, kerr.NotLeaderForPartition
	}
	return nil, kerr.UnknownTopicOrPartition
}

// currentLeader is what a NOT_LEADER_OR_FOLLOWER answer tells the client
// about the partition's leader (KIP-951): its id and epoch from the image,
// -1/-1 when unknown.
func currentLeader(img *raftmeta.Image, tp storage.TopicPartition) (leader, epoch int32) {
	if pp, ok := img.Partition(tp.Topic, tp.Partition); ok {
		return pp.Leader, pp.LeaderEpoch
	}
	return -1, -1
}

// leaderEndpoint returns the endpoint of broker id on the named listener.
func leaderEndpoint(img *raftmeta.Image, id int32, listener string) (raftmeta.Endpoint, *raftmeta.Broker, bool) {
	b, ok := img.Brokers[id]
	if !ok {
		return raftmeta.Endpoint{}, nil, false
	}
	for _, ep := range b.Endpoints {
		if ep.Listener == listener || listener == "" {
			return ep, b, true
		}
	}
	return raftmeta.Endpoint{}, nil, false
}
