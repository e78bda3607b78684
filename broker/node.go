// Package broker is Strait's composition root: it reads the configuration,
// formats and opens the log directory, starts the metadata quorum, the
// replica manager, the group coordinator and the Kafka protocol server, and
// stops them in the reverse order.
package broker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/coordinator/producerid"
	"github.com/strait-io/strait/coordinator/share"
	"github.com/strait-io/strait/coordinator/txn"
	"github.com/strait-io/strait/mirror/manager"
	"github.com/strait-io/strait/mirror/state"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz"
	"github.com/strait-io/strait/raftmeta/ctrlrpc"
	"github.com/strait-io/strait/replication"
	replshare "github.com/strait-io/strait/replication/share"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/vfs"
	"github.com/strait-io/strait/wire"
)

// Options are a Node's dependencies beyond its configuration.
type Options struct {
	Logger *slog.Logger
	Clock  clock.Clock
	FS     vfs.FS
	// MetadataFS holds the raft log and stable store under the metadata
	// log directory (nil: the operating system's); tests inject failures.
	MetadataFS pebblevfs.FS
	// RaftTimeouts shrink the quorum's election timing (tests); zero keeps
	// the quorum's defaults.
	RaftHeartbeatTimeout, RaftElectionTimeout time.Duration
	// Dialer opens every connection to another node: raft, the
	// controller channel and the followers' fetches (nil: net.Dialer).
	// In-process cluster tests cut links with it (brokertest/faultnet).
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
	// SharePersister is where the share-partition leaders store share
	// partition state (KIP-932, share_partitions.go). Nil: this node's
	// share coordinator client (share_persister.go), as in production;
	// tests may pass an in-memory one.
	SharePersister replshare.Persister
	// ShareGroupPersister is the share coordinator as the group
	// coordinator stores share groups' state through it (Kafka's
	// Persister: initialize, read summary, delete). Nil: this node's
	// share coordinator client, as in production.
	ShareGroupPersister coordinator.ShareStatePersister
	// OpenFileLimit is the process's soft open-file limit (RLIMIT_NOFILE)
	// as the process owner set it; when max.connections is not set the
	// broker derives it from this (connection_limits.go). 0: unknown,
	// nothing is derived (in-process nodes share their test's limit).
	OpenFileLimit uint64
	// BootstrapRecords start the metadata log of a new cluster (ParseAddScram:
	// `strait serve --add-scram`, Kafka's `kafka-storage format
	// --add-scram`). Given to a node whose metadata log exists, Start fails.
	BootstrapRecords []raftmeta.Record
}

// Node is one Strait process: broker and controller roles in one.
type Node struct {
	cfg    *config.Config
	logger *slog.Logger
	clock  clock.Clock
	fs     vfs.FS
	opts   Options

	clusterID string
	logs      *storage.LogManager
	quorum    *raftmeta.Quorum
	replicas  *replication.ReplicaManager
	groups    *coordinator.GroupCoordinator
	txns      *txn.Coordinator
	shares    *share.Coordinator
	// sharePartitions serves ShareFetch and ShareAcknowledge; nil
	// without Options.SharePersister.
	sharePartitions *replshare.Manager
	server          *wire.Server
	// saslClosers stop what the SASL listeners' mechanisms run
	// (OAUTHBEARER's JWKS refreshing).
	saslClosers []io.Closer
	registry    *prometheus.Registry
	metrics     *metrics
	httpSrv     *http.Server
	httpAddr    string
	unsub       func()
	// dynamicConfigs applies the dynamic broker configs outside the logs.
	dynamicConfigs dynamicBrokerConfigs

	// producerIDs hands out the producer ids of InitProducerId, for the
	// group coordinator (idempotent producers) and, once there is one,
	// the transaction coordinator: one manager per broker, as Kafka's.
	producerIDs *producerid.Manager

	ctrlClient *ctrlrpc.Client
	// forwardIDs name the requests forward sends, so the controller
	// carries each out once however often it is retried.
	forwardIDs *ctrlrpc.ForwardIDs
	lifecycle  atomic.Pointer[raftmeta.BrokerLifecycle]
	// deltaGroups is groups for the metadata subscription, which runs on
	// raft's FSM goroutine from startReplicas on, before startGroups
	// sets groups.
	deltaGroups atomic.Pointer[coordinator.GroupCoordinator]
	// deltaShares is shares for the metadata subscription, as deltaGroups.
	deltaShares atomic.Pointer[share.Coordinator]

	// Cluster mirroring (mirror_*.go): the __mirror_state coordinator,
	// the mirror manager (read by the metadata subscription, like
	// deltaGroups, hence atomic), the inter-broker client, and the
	// background work that outlives a request (deleting a deleted
	// mirror's records), cancelled and waited for by Stop.
	mirrorStates      *state.Coordinator
	deltaMirrorStates atomic.Pointer[state.Coordinator]
	mirrorMgr         atomic.Pointer[manager.Manager]
	syncers           *mirrorSyncers
	peers             *peers
	bgCtx             context.Context
	bgCancel          context.CancelFunc
	bg                sync.WaitGroup

	stopOnce sync.Once
	stopErr  error

	// replicasLoaded: the replica manager has taken its first image
	// (loadReplicas).
	replicasLoaded atomic.Bool

	// A failed log directory or metadata log directory halts the node
	// (logdir_failure.go), once Start has returned (startDone).
	haltOnce  sync.Once
	haltErr   error
	halted    chan struct{}
	startDone chan struct{}
}

// NewNode prepares a node; Start brings it up.
func NewNode(cfg *config.Config, opts Options) *Node {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.FS == nil {
		opts.FS = vfs.OS{}
	}
	n := &Node{cfg: cfg, logger: opts.Logger, clock: opts.Clock, fs: opts.FS, opts: opts,
		halted: make(chan struct{}), startDone: make(chan struct{})}
	n.producerIDs = producerid.New(n.allocateProducerIDs, opts.Logger.With("component", "producer-ids"))
	n.peers = &peers{nodeID: cfg.NodeID, seed: n.interBrokerAddr, opts: n.interBrokerClientOpts,
		logger: opts.Logger.With("component", "peers")}
	n.syncers = newMirrorSyncers(n)
	n.bgCtx, n.bgCancel = context.WithCancel(context.Background())
	return n
}

// Start opens everything and returns once the broker serves requests. On
// failure everything already started is stopped again.
func (n *Node) Start(ctx context.Context) (err error) {
	started := time.Now()
	defer close(n.startDone)
	defer func() {
		if err != nil {
			n.Stop(context.Background())
		}
	}()
	cfg := n.cfg
	if !cfg.Roles.Broker {
		return errors.New("process.roles=controller: a controller-only node is not supported yet; use process.roles=broker,controller (combined mode) or broker")
	}
	// SASL settings the config could not judge (the mechanisms this
	// build serves) fail here, before anything is opened.
	if _, err := n.interBrokerSASL(); err != nil {
		return err
	}
	for name, sc := range cfg.SASL {
		if _, _, err := listenerSASL(name, sc, saslDeps{check: true}); err != nil {
			return err
		}
	}
	wantClusterID := cfg.ClusterID
	if wantClusterID == "" && len(cfg.QuorumVoters) > 1 {
		var voters []string
		for _, v := range cfg.QuorumVoters {
			voters = append(voters, fmt.Sprintf("%d@%s:%d", v.ID, v.Host, v.Port))
		}
		wantClusterID = derivedClusterID(voters)
	}
	if n.clusterID, err = formatLogDirs(n.fs, cfg.LogDirs, cfg.NodeID, wantClusterID); err != nil {
		return err
	}

	n.logs, err = storage.OpenManagerDirs(cfg.LogDirs, storage.ManagerOptions{
		FS: n.fs, Clock: n.clock, Logger: n.logger, DefaultConfig: cfg.Log, Cleaner: cfg.LogCleaner(),
		OnFailure: n.logDirFailed, RecoveryThreadsPerDataDir: int(cfg.RecoveryThreadsPerDataDir),
	})
	if err != nil {
		return fmt.Errorf("opening the log directories: %w", err)
	}

	if err := n.startQuorum(ctx); err != nil {
		return err
	}
	if err := n.startReplicas(ctx); err != nil {
		return err
	}
	n.defaultSharePersisters()
	n.startGroups()
	if err := n.startTransactions(); err != nil {
		return fmt.Errorf("starting the transaction coordinator: %w", err)
	}
	if err := n.startShareCoordinator(); err != nil {
		return fmt.Errorf("starting the share coordinator: %w", err)
	}
	if err := n.startMirrors(); err != nil {
		return fmt.Errorf("starting cluster mirroring: %w", err)
	}
	n.startSharePartitions()

	n.registry = prometheus.NewRegistry()
	n.metrics = newMetrics(n.registry)
	n.registry.MustRegister(newMirrorCollector(n.mirrorStats), newMirrorSyncCollector(n.syncers.stats))
	n.registry.MustRegister(newFailoverBoundCollector(n.mirrorStats, n.quorum.Image))
	n.registry.MustRegister(newReplicationQuotaCollector(n.replicationQuotas))
	n.registry.MustRegister(newCleanerCollector(n.logs.CleanerStats, n.clock))
	wc, err := n.wireConfig(ctx)
	if err != nil {
		return err
	}
	n.server = wire.NewServer(wc, n.services(), n.logger, n.metrics)
	if err := n.server.Start(ctx); err != nil {
		return fmt.Errorf("starting listeners: %w", err)
	}
	n.attachServer(n.server)
	go n.watchListeners()
	if err := n.joinCluster(ctx); err != nil {
		return err
	}
	n.startMirrorManager()
	if err := n.startMetricsListener(); err != nil {
		return err
	}
	attrs := []any{"nodeID", cfg.NodeID, "clusterID", n.clusterID, "startup", time.Since(started).Round(time.Millisecond)}
	for name, addr := range n.server.Addrs() {
		attrs = append(attrs, "listener."+name, addr)
	}
	attrs = append(attrs, "listener.CONTROLLER", n.quorum.Addr())
	if n.httpAddr != "" {
		attrs = append(attrs, "metrics", n.httpAddr)
	}
	n.logger.Info("strait broker ready", attrs...)
	return nil
}

func (n *Node) startQuorum(ctx context.Context) error {
	cfg := n.cfg
	dir := cfg.MetadataLogDir
	if dir == "" || filepath.Clean(dir) == filepath.Clean(cfg.LogDirs[0]) {
		// Under the log directory, named so the log manager never takes it
		// for a partition directory ("<topic>-<partition>").
		dir = filepath.Join(cfg.LogDirs[0], "__cluster_metadata")
	}
	voters := map[int32]string{}
	for _, v := range cfg.QuorumVoters {
		voters[v.ID] = net.JoinHostPort(v.Host, strconv.Itoa(v.Port))
	}
	var bind, advertise string
	for _, l := range cfg.Listeners {
		if isControllerListener(cfg, l.Name) {
			bind = l.Addr()
			break
		}
	}
	if bind == "" {
		// A broker-only node (process.roles=broker) has no CONTROLLER
		// listener in Kafka: it pulls the metadata log. hashicorp/raft
		// pushes it to non-voters instead, so the node binds a port of its
		// own on the inter-broker listener's host and registers it.
		for _, l := range cfg.Listeners {
			if l.Name == cfg.InterBrokerListenerName {
				bind = net.JoinHostPort(l.Host, "0")
			}
		}
	}
	if a := cfg.AdvertisedControllerListeners; len(a) > 0 && a[0].Port != 0 {
		// Port 0 means the port the listener binds (tests): leave it to
		// the quorum, which then advertises the bound address.
		advertise = a[0].Addr()
	}
	q, err := raftmeta.Open(raftmeta.Config{
		NodeID:                       cfg.NodeID,
		Dir:                          dir,
		ClusterID:                    n.clusterID,
		BootstrapRecords:             n.opts.BootstrapRecords,
		BindAddr:                     bind,
		AdvertiseAddr:                advertise,
		Voters:                       voters,
		Logger:                       n.logger,
		FS:                           n.opts.MetadataFS,
		OnStoreFailure:               n.metadataDirFailed,
		HeartbeatTimeout:             n.opts.RaftHeartbeatTimeout,
		ElectionTimeout:              n.opts.RaftElectionTimeout,
		NumPartitions:                cfg.NumPartitions,
		DefaultReplicationFactor:     int16(cfg.DefaultReplicationFactor),
		ControllerListenerName:       controllerListenerName(cfg),
		Dialer:                       n.controllerDialer(),
		WrapListener:                 n.controllerListenerWrapper(),
		Clock:                        n.clock,
		BrokerSessionTimeout:         time.Duration(cfg.Cluster.BrokerSessionTimeoutMs) * time.Millisecond,
		UncleanLeaderElectionEnable:  n.staticBool("unclean.leader.election.enable"),
		AutoLeaderRebalanceEnable:    cfg.Cluster.AutoLeaderRebalanceEnable,
		LeaderImbalanceCheckInterval: time.Duration(cfg.Cluster.LeaderImbalanceCheckIntervalSeconds) * time.Second,
		ConfigValidator:              n.validateConfigs,
		DescribeTopicConfigs:         n.describeNewTopicConfigs,

		MirrorStateTopicPartitions:        cfg.Mirror.StateTopicNumPartitions,
		MirrorStateTopicReplicationFactor: cfg.Mirror.StateTopicReplicationFactor,
	})
	if err != nil {
		return fmt.Errorf("opening metadata quorum: %w", err)
	}
	n.quorum = q
	if err := q.Start(ctx); err != nil {
		return fmt.Errorf("starting metadata quorum: %w", err)
	}
	n.ctrlClient = q.NewClient()
	n.forwardIDs = ctrlrpc.NewForwardIDs(cfg.NodeID, randomSession())
	if !q.IsVoter() {
		// A non-voter catches up once its broker registered (joinCluster).
		return nil
	}
	if err := q.WaitReady(ctx); err != nil {
		return fmt.Errorf("waiting for the metadata quorum: %w", err)
	}
	return nil
}

func isControllerListener(cfg *config.Config, name string) bool {
	for _, c := range cfg.ControllerListenerNames {
		if c == name {
			return true
		}
	}
	return false
}

func (n *Node) startReplicas(ctx context.Context) error {
	cfg := n.cfg
	interBrokerSASL, err := n.interBrokerSASL()
	if err != nil {
		return err
	}
	rm, err := replication.NewReplicaManager(replication.Config{
		NodeID:                   cfg.NodeID,
		Logs:                     n.logs,
		LogConfigFor:             n.logConfigFor,
		MinInsyncReplicasFor:     n.minInsyncReplicasFor,
		Logger:                   n.logger,
		Clock:                    n.clock,
		FetchSessionCacheSlots:   int(cfg.MaxIncrementalFetchSessionCacheSlots),
		FetchMaxBytes:            cfg.FetchMaxBytes,
		RetentionCheckIntervalMs: cfg.LogRetentionCheckIntervalMs,

		RecoveryPointCheckpointIntervalMs:  periodOrNever(cfg.LogFlushOffsetCheckpointIntervalMs),
		LogStartOffsetCheckpointIntervalMs: periodOrNever(cfg.LogFlushStartOffsetCheckpointIntervalMs),

		HighWatermarkCheckpointIntervalMs: cfg.Cluster.ReplicaHighWatermarkCheckpointIntervalMs,
		ControllerChannel:                 raftmeta.ControllerChannel{Sender: n.ctrlClient},
		BrokerEpoch:                       n.brokerEpoch,
		CatchUpMetadata:                   n.quorum.CatchUp,
		InterBrokerListener:               cfg.InterBrokerListenerName,
		DialLeader:                        n.dialLeader(interBrokerSASL),
		ReplicaLagTimeMaxMs:               cfg.Cluster.ReplicaLagTimeMaxMs,
		ReplicaFetchWaitMaxMs:             cfg.Cluster.ReplicaFetchWaitMaxMs,
		ReplicaFetchMinBytes:              cfg.Cluster.ReplicaFetchMinBytes,
		ReplicaFetchCoalesceMinBytes:      cfg.Cluster.ReplicaFetchCoalesceMinBytes,
		ReplicaFetchCoalesceWaitMs:        cfg.Cluster.ReplicaFetchCoalesceWaitMs,
		ReplicaFetchMaxBytes:              cfg.Cluster.ReplicaFetchMaxBytes,
		ReplicaFetchResponseMaxBytes:      cfg.Cluster.ReplicaFetchResponseMaxBytes,
		ReplicaFetchBackoffMs:             int64(cfg.Cluster.ReplicaFetchBackoffMs),
		ReplicaSocketTimeoutMs:            int64(cfg.Cluster.ReplicaSocketTimeoutMs),
		Transactions:                      true,
		TxnVerifier:                       txnVerifier{n},
		TxnVerificationEnabled:            n.dynamicConfigs.txnVerification.Load,
		ReplicationThrottledRates:         n.replicationThrottledRates,
		AlterLogDirsRate:                  n.alterLogDirsRate,
		ReplicationQuotaWindowNum:         int(cfg.Cluster.ReplicationQuotaWindowNum),
		ReplicationQuotaWindowSizeSeconds: int(cfg.Cluster.ReplicationQuotaWindowSizeSeconds),
	})
	if err != nil {
		return err
	}
	n.replicas = rm
	// The replicas take no image before the node caught up with the
	// metadata log (loadReplicas, once unfenced), as Kafka starts its
	// ReplicaManager only after the initial catch-up: a restarting
	// node's first images hold only part of the log (raft hands a
	// follower what it missed in batches), in which it may still lead
	// partitions that moved while it was down, and would acknowledge
	// acks=1 writes at an epoch the others have left. Subscribing now
	// lets no delta fall between; ApplyDelta is safe to call
	// concurrently and treats its first call as the whole image.
	n.unsub = n.quorum.Subscribe(func(d *raftmeta.Delta, img *raftmeta.Image) {
		if n.replicasLoaded.Load() {
			rm.ApplyDelta(d, img)
		}
		if g := n.deltaGroups.Load(); g != nil {
			g.OnMetadataDelta(d)
		}
		if s := n.deltaShares.Load(); s != nil {
			s.OnMetadataDelta(d)
		}
		if m := n.mirrorMgr.Load(); m != nil {
			m.OnMetadata(img)
		}
		if len(d.DeletedMirrors) > 0 {
			n.onMirrorsDeleted(d.DeletedMirrors)
		}
		n.syncers.onImage(img)
		n.applyDynamicBrokerConfigs(img)
	})
	// What the image held before the subscription (a restart).
	n.applyDynamicBrokerConfigs(n.quorum.Image())
	// Start's ctx bounds starting up, not the node's life: the background
	// work (retention, checkpoints) runs until Stop.
	rm.Start(context.WithoutCancel(ctx))
	return nil
}

func (n *Node) startGroups() {
	cfg := n.cfg
	g := cfg.Group
	numPartitions := g.OffsetsTopicNumPartitions
	if t, ok := n.quorum.Image().Topics[offsetsTopic]; ok {
		// The partition count of an existing offsets topic wins, as in
		// Kafka: groups must keep mapping to the partitions holding them.
		numPartitions = int32(len(t.Partitions))
	}
	delay := time.Duration(g.InitialRebalanceDelayMs) * time.Millisecond
	if delay == 0 {
		delay = -1 // the coordinator reads 0 as "default"; -1 is none
	}
	n.groups = coordinator.NewGroupCoordinator(coordinator.Config{
		NodeID:                        cfg.NodeID,
		Log:                           coordinatorLog{rm: n.replicas, topic: offsetsTopic},
		Image:                         n.quorum.Image,
		EnsureOffsetsTopic:            n.ensureOffsetsTopic,
		ProducerIDs:                   n.producerIDs,
		VerifyTransaction:             n.txnOffsetVerifier(),
		VerifyTransactionEnabled:      n.dynamicConfigs.txnVerification.Load,
		GroupConfigs:                  n.groupConfigs().coordinatorConfig,
		NumPartitions:                 numPartitions,
		MinSessionTimeout:             time.Duration(g.MinSessionTimeoutMs) * time.Millisecond,
		MaxSessionTimeout:             time.Duration(g.MaxSessionTimeoutMs) * time.Millisecond,
		InitialRebalanceDelay:         delay,
		MaxGroupSize:                  g.MaxSize,
		OffsetsRetention:              time.Duration(g.OffsetsRetentionMs) * time.Millisecond,
		OffsetsRetentionCheckInterval: time.Duration(g.OffsetsRetentionCheckIntervalMs) * time.Millisecond,
		OffsetMetadataMaxBytes:        g.OffsetMetadataMaxBytes,
		ConsumerSessionTimeout:        time.Duration(g.ConsumerSessionTimeoutMs) * time.Millisecond,
		ConsumerMinSessionTimeout:     time.Duration(g.ConsumerMinSessionTimeoutMs) * time.Millisecond,
		ConsumerMaxSessionTimeout:     time.Duration(g.ConsumerMaxSessionTimeoutMs) * time.Millisecond,
		ConsumerHeartbeatInterval:     time.Duration(g.ConsumerHeartbeatIntervalMs) * time.Millisecond,
		ConsumerMinHeartbeatInterval:  time.Duration(g.ConsumerMinHeartbeatIntervalMs) * time.Millisecond,
		ConsumerMaxHeartbeatInterval:  time.Duration(g.ConsumerMaxHeartbeatIntervalMs) * time.Millisecond,
		ConsumerMaxGroupSize:          g.ConsumerMaxSize,
		ConsumerAssignors:             g.ConsumerAssignors,
		ConsumerMigrationPolicy:       g.ConsumerMigrationPolicy,
		Share:                         n.shareGroupConfig(),
		Clock:                         n.clock,
		Logger:                        n.logger,
	})
	n.deltaGroups.Store(n.groups)
	// Transaction markers for __consumer_offsets go to the group
	// coordinator, which writes them in order with its own records and
	// commits or drops the transaction's offsets (KIP-447).
	n.replicas.SetTxnMarkerCompleter(n.groups)
	n.followLeadership(offsetsTopic, n.groups)
}

// closeSASL stops what the SASL listeners' mechanisms run, once the
// server no longer authenticates anyone.
func (n *Node) closeSASL() {
	for _, c := range n.saslClosers {
		_ = c.Close()
	}
	n.saslClosers = nil
}

func (n *Node) wireConfig(ctx context.Context) (wire.Config, error) {
	cfg := n.cfg
	wc := wire.Config{
		SocketRequestMaxBytes: cfg.SocketRequestMaxBytes,
		ConnectionsMaxIdle:    time.Duration(cfg.ConnectionsMaxIdleMs) * time.Millisecond,
		EventLoops:            n.startNetworkThreads(),
		QueuedMaxRequestBytes: cfg.QueuedMaxRequestBytes,
		ClientQuotaWindow:     clientQuotaWindow(cfg),

		MaxRequestPartitionSizeLimit: cfg.MaxRequestPartitionSizeLimit,
	}
	if cfg.Authorizer.Enabled {
		wc.Authorizer = authz.New(authz.Settings{SuperUsers: cfg.Authorizer.SuperUsers, AllowEveryoneIfNoACL: cfg.Authorizer.AllowEveryoneIfNoACL})
	}
	for _, l := range cfg.Listeners {
		if isControllerListener(cfg, l.Name) {
			continue
		}
		wl := wire.Listener{Name: l.Name, Host: l.Host, Port: l.Port, SecurityProtocol: string(l.SecurityProtocol)}
		if t := cfg.TLS[l.Name]; t != nil {
			wl.TLS = n.startListenerTLS(l.Name, t.Server)
		}
		if sc := cfg.SASL[l.Name]; sc != nil {
			deps := saslDeps{image: n.quorum.Image, logger: n.logger, clock: n.clock}
			var (
				closers []io.Closer
				err     error
			)
			wl.SASL, closers, err = listenerSASL(l.Name, sc, deps)
			n.saslClosers = append(n.saslClosers, closers...)
			if err != nil {
				return wc, err
			}
		}
		wc.Listeners = append(wc.Listeners, wl)
	}
	var err error
	wc.Limits, err = n.connectionLimits(ctx)
	return wc, err
}

func (n *Node) startMetricsListener() error {
	if n.cfg.MetricsListener == "" {
		return nil
	}
	ln, err := net.Listen("tcp", n.cfg.MetricsListener)
	if err != nil {
		return fmt.Errorf("metrics.listener %s: %w", n.cfg.MetricsListener, err)
	}
	n.httpAddr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(n.registry, promhttp.HandlerOpts{}))
	if n.cfg.MetricsPprofEnable {
		mountPprof(mux)
	}
	n.httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go n.httpSrv.Serve(ln)
	return nil
}

// Addrs returns the bound address of every listener, CONTROLLER and the
// metrics listener included.
func (n *Node) Addrs() map[string]string {
	out := map[string]string{}
	if n.server != nil {
		for k, v := range n.server.Addrs() {
			out[k] = v
		}
	}
	if n.quorum != nil {
		out["CONTROLLER"] = n.quorum.Addr()
	}
	if n.httpAddr != "" {
		out["metrics"] = n.httpAddr
	}
	return out
}

// ClusterID is the id of the cluster the node belongs to.
func (n *Node) ClusterID() string { return n.clusterID }

// Stop shuts the node down in the reverse order of Start: stop reading
// requests and finish those in flight, stop the coordinators and the
// replica manager, close the logs (flush, checkpoints, clean shutdown
// marker), close the quorum. Safe to call more than once.
func (n *Node) Stop(ctx context.Context) error {
	n.stopOnce.Do(func() {
		var errs []error
		n.leaveCluster(ctx)
		if n.server != nil {
			errs = append(errs, n.server.Shutdown(ctx))
		}
		if lc := n.lifecycle.Load(); lc != nil {
			lc.Stop()
		}
		if n.httpSrv != nil {
			errs = append(errs, n.httpSrv.Close())
		}
		if n.unsub != nil {
			n.unsub()
		}
		n.stopMirrors()
		n.closeSASL()
		if n.sharePartitions != nil {
			n.sharePartitions.Close()
		}
		if n.shares != nil {
			n.shares.Close()
		}
		if n.txns != nil {
			n.txns.Close()
		}
		if n.groups != nil {
			n.groups.Close()
		}
		if n.replicas != nil {
			n.replicas.Stop()
		}
		if n.logs != nil {
			errs = append(errs, n.logs.Close())
		}
		if n.quorum != nil {
			n.handOverController(ctx)
			errs = append(errs, n.quorum.Close())
		}
		if n.ctrlClient != nil {
			n.ctrlClient.Close()
		}
		n.stopErr = errors.Join(errs...)
		if n.stopErr != nil {
			n.logger.Error("shutdown finished with errors", "err", n.stopErr)
		} else {
			n.logger.Info("strait broker stopped")
		}
	})
	return n.stopErr
}

// Abandon stops the node the way a killed process stops, for crash tests
// that run brokers in-process (broker/brokertest): connections are dropped
// without finishing what they read, the coordinators, the replica manager
// and the quorum stop (raft's own stores are durable per write and must be
// closed to release their lock), but the log directory is left as it is:
// no flush, no checkpoints, no clean shutdown marker, and no write after
// Abandon returns, even from a request still in flight. The open segment
// files are abandoned, not closed. The next Start on the directory
// recovers it as after a crash. Stop after Abandon does nothing.
func (n *Node) Abandon() {
	n.stopOnce.Do(func() {
		if n.logs != nil {
			// First: from here on nothing reaches the log directory,
			// whatever is still running.
			n.logs.Abandon()
		}
		if n.server != nil {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // close every connection at once, answer nothing more
			_ = n.server.Shutdown(ctx)
		}
		if n.httpSrv != nil {
			_ = n.httpSrv.Close()
		}
		if lc := n.lifecycle.Load(); lc != nil {
			lc.Stop()
		}
		if n.unsub != nil {
			n.unsub()
		}
		n.stopMirrors()
		n.closeSASL()
		if n.sharePartitions != nil {
			n.sharePartitions.Close()
		}
		if n.shares != nil {
			n.shares.Close()
		}
		if n.txns != nil {
			n.txns.Close()
		}
		if n.groups != nil {
			n.groups.Close()
		}
		if n.replicas != nil {
			n.replicas.Stop()
		}
		if n.quorum != nil {
			_ = n.quorum.Close()
		}
		if n.ctrlClient != nil {
			n.ctrlClient.Close()
		}
		n.logger.Info("strait broker abandoned (simulated crash)")
	})
}

// Image is the newest metadata image this node applied.
func (n *Node) Image() *raftmeta.Image { return n.quorum.Image() }

// ControllerID is the active controller's node id as this node knows it
// (-1 when unknown).
func (n *Node) ControllerID() int32 { return n.quorum.LeaderID() }

// LogManager is the node's log directory, for tests that compare
// replicas' logs byte for byte.
func (n *Node) LogManager() *storage.LogManager { return n.logs }

// Replicas is the node's replica manager (tests read high watermarks and
// ISRs from it).
func (n *Node) Replicas() *replication.ReplicaManager { return n.replicas }

// periodOrNever is a checkpoint interval config for the ReplicaManager,
// where 0 means its default: log.flush.offset.checkpoint.interval.ms=0 (and
// the log start one) schedule no periodic write, only the one at shutdown
// (Kafka schedules a task with period 0 to run once).
func periodOrNever(ms int32) int64 {
	if ms == 0 {
		return -1
	}
	return int64(ms)
}
