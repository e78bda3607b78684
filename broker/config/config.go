package config

import (
	"strconv"

	"github.com/strait-io/strait/broker/configdef"
	"github.com/strait-io/strait/storage"
)

// Config is a validated broker configuration. It is immutable once built;
// dynamic broker configs (AlterConfigs) live in the metadata image and
// combine with Raw through Sources.
type Config struct {
	// Raw is the static configuration as written (server.properties
	// overlaid by --set), plus node.id and broker.id filled from each other
	// as Kafka does. DescribeConfigs reports these as STATIC_BROKER_CONFIG.
	// Read it, never write it.
	Raw map[string]string
	// Ignored are the keys of Raw that Kafka defines but Strait does not
	// implement, sorted; the broker logs them at startup.
	Ignored []string
	// Warnings describe settings that load but are likely mistakes (see
	// voterAddressWarning); the broker logs them at startup.
	Warnings []string

	NodeID int32
	// ClusterID is cluster.id ("" unless set).
	ClusterID string
	Roles     Roles
	// ControllerListenerNames are controller.listener.names, upper-cased.
	ControllerListenerNames []string
	QuorumVoters            []configdef.Voter
	// MetadataLogDir is metadata.log.dir, or the first log dir.
	MetadataLogDir string
	// Listeners are every listener to bind, controller ones included.
	Listeners []Endpoint
	// AdvertisedListeners are the broker listeners given to clients:
	// advertised.listeners (or listeners) minus the controller listeners.
	// A listener with an empty host is for the caller to resolve to the
	// machine's name, as Kafka does.
	AdvertisedListeners []Endpoint
	// AdvertisedControllerListeners are the controller listeners, in
	// controller.listener.names order.
	AdvertisedControllerListeners []Endpoint
	// SecurityProtocols maps each listener name to its protocol, with the
	// KRaft default for controller listeners applied.
	SecurityProtocols       map[string]SecurityProtocol
	InterBrokerListenerName string
	// TLS is the TLS material of each SSL listener, by listener name
	// (ssl.go).
	TLS map[string]*TLS
	// SASL is the authentication of each SASL_PLAINTEXT and SASL_SSL
	// listener, by listener name (sasl.go).
	SASL map[string]*SASL
	// InterBrokerSASL is how this broker logs in to the others when the
	// inter-broker listener is SASL_*; nil otherwise.
	InterBrokerSASL *InterBrokerSASL
	BrokerRack      string // "" when unset
	// Authorizer is authorizer.class.name and its settings (authorizer.go).
	Authorizer Authorizer
	LogDirs    []string

	NumPartitions            int32
	DefaultReplicationFactor int32
	AutoCreateTopicsEnable   bool
	DeleteTopicEnable        bool
	MessageMaxBytes          int32
	MinInsyncReplicas        int32

	SocketRequestMaxBytes int32
	// MaxRequestPartitionSizeLimit is max.request.partition.size.limit
	// (KIP-966's DescribeTopicPartitions page size cap).
	MaxRequestPartitionSizeLimit int32
	ConnectionsMaxIdleMs         int64
	// QueuedMaxRequestBytes is queued.max.request.bytes: 0 when unset
	// (derived from the machine), -1 for unbounded.
	QueuedMaxRequestBytes int64
	// NumNetworkThreads is the number of event loops per listener; 0
	// (num.network.threads unset) means GOMAXPROCS.
	NumNetworkThreads int32
	// RecoveryThreadsPerDataDir is num.recovery.threads.per.data.dir: how
	// many logs of a log directory open, or flush and close, at once.
	RecoveryThreadsPerDataDir int32
	// QuotaWindowNum and QuotaWindowSizeSeconds are quota.window.num and
	// quota.window.size.seconds: how client quota rates are sampled.
	QuotaWindowNum, QuotaWindowSizeSeconds int32
	// MetricsListener is the host:port of the metrics endpoint; "" disables it.
	MetricsListener string
	// MetricsPprofEnable is metrics.pprof.enable: serve net/http/pprof's
	// handlers under /debug/pprof/ on the metrics listener.
	MetricsPprofEnable bool

	// MaxConnections is max.connections, -1 when it is not set (the
	// broker then derives a limit from the open-file limit).
	MaxConnections int32
	// ListenerMaxConnections are listener.name.<l>.max.connections, by
	// upper-case listener name, for the listeners that serve clients.
	ListenerMaxConnections map[string]int32
	// MaxConnectionsPerIP is max.connections.per.ip.
	MaxConnectionsPerIP int32
	// MaxConnectionsPerIPOverrides is max.connections.per.ip.overrides:
	// counts by host as written, IP address or name (resolved at start).
	MaxConnectionsPerIPOverrides map[string]int32

	FetchMaxBytes                        int32
	MaxIncrementalFetchSessionCacheSlots int32

	LogRetentionCheckIntervalMs             int64
	LogFlushOffsetCheckpointIntervalMs      int32
	LogFlushStartOffsetCheckpointIntervalMs int32
	ProducerIDExpirationMs                  int32

	Group      GroupConfig
	ShareGroup ShareGroupConfig
	Txn        TxnConfig
	Share      ShareCoordinatorConfig
	Cluster    ClusterConfig
	Mirror     MirrorConfig

	// Log is the storage configuration of a partition whose topic sets no
	// override: the log.* defaults with Kafka's precedence applied.
	Log storage.LogConfig
}

// Roles are process.roles.
type Roles struct{ Broker, Controller bool }

// GroupConfig is the consumer group coordinator's part of the config
// (GroupCoordinatorConfig, classic protocol and offsets topic).
type GroupConfig struct {
	InitialRebalanceDelayMs int32
	MinSessionTimeoutMs     int32
	MaxSessionTimeoutMs     int32
	MaxSize                 int32
	OffsetMetadataMaxBytes  int32
	OffsetsLoadBufferSize   int32

	OffsetsTopicNumPartitions int32
	// OffsetsTopicReplicationFactor is what __consumer_offsets asks for; the
	// coordinator lowers it only where fewer brokers are registered.
	OffsetsTopicReplicationFactor   int16
	OffsetsTopicSegmentBytes        int32
	OffsetsTopicCompressionCodec    int8
	OffsetsRetentionMs              int64 // offsets.retention.minutes in ms
	OffsetsRetentionCheckIntervalMs int64
	OffsetsCommitTimeoutMs          int32

	// The KIP-848 consumer group settings (group.consumer.*).
	ConsumerSessionTimeoutMs       int32
	ConsumerMinSessionTimeoutMs    int32
	ConsumerMaxSessionTimeoutMs    int32
	ConsumerHeartbeatIntervalMs    int32
	ConsumerMinHeartbeatIntervalMs int32
	ConsumerMaxHeartbeatIntervalMs int32
	ConsumerMaxSize                int32
	// ConsumerAssignors are the assignors' short names (uniform, range).
	ConsumerAssignors       []string
	ConsumerMigrationPolicy string
}

// TxnConfig is the transaction coordinator's part of the config
// (TransactionLogConfig, TransactionStateManagerConfig).
type TxnConfig struct {
	StateLogNumPartitions int32
	// StateLogReplicationFactor is what __transaction_state asks for; it is
	// lowered only where fewer brokers are registered.
	StateLogReplicationFactor   int16
	StateLogMinISR              int32
	StateLogSegmentBytes        int32
	StateLogLoadBufferSize      int32
	MaxTimeoutMs                int32
	IDExpirationMs              int32
	AbortTimedOutIntervalMs     int32
	RemoveExpiredIntervalMs     int32
	PartitionVerificationEnable bool
}

// ShareCoordinatorConfig is the share coordinator's part of the config
// (KIP-932's ShareCoordinatorConfig): __share_group_state and the
// coordinator's snapshots, writes, loading and pruning.
type ShareCoordinatorConfig struct {
	StateTopicNumPartitions int32
	// StateTopicReplicationFactor is what __share_group_state asks for; it
	// is lowered only where fewer brokers are registered.
	StateTopicReplicationFactor      int16
	StateTopicMinISR                 int16
	StateTopicSegmentBytes           int32
	SnapshotUpdateRecordsPerSnapshot int32
	LoadBufferSize                   int32
	WriteTimeoutMs                   int32
	StateTopicPruneIntervalMs        int32
	ColdPartitionSnapshotIntervalMs  int32
}

// ClusterConfig is membership, controller and replication settings
// (KRaftConfigs, ReplicationConfigs).
type ClusterConfig struct {
	BrokerHeartbeatIntervalMs                int32
	BrokerSessionTimeoutMs                   int32
	ControlledShutdownEnable                 bool
	AutoLeaderRebalanceEnable                bool
	LeaderImbalanceCheckIntervalSeconds      int64
	ReplicaLagTimeMaxMs                      int64
	ReplicaFetchWaitMaxMs                    int32
	ReplicaFetchMinBytes                     int32
	ReplicaFetchCoalesceMinBytes             int32
	ReplicaFetchCoalesceWaitMs               int32
	ReplicaFetchMaxBytes                     int32
	ReplicaFetchResponseMaxBytes             int32
	ReplicaFetchBackoffMs                    int32
	ReplicaSocketTimeoutMs                   int32
	ReplicaHighWatermarkCheckpointIntervalMs int64
	ReplicationQuotaWindowNum                int32
	ReplicationQuotaWindowSizeSeconds        int32
}

// MirrorConfig is the broker side of cluster mirroring (KIP-1279's
// ClusterMirrorConfigs): __mirror_state and its coordinator, and the
// FAILED partitions' automatic retries.
type MirrorConfig struct {
	StateTopicNumPartitions        int32
	StateTopicReplicationFactor    int16
	FailedRetryInitialBackoffMs    int64
	FailedRetryMaxBackoffMs        int64
	FailedRetryMaxAttempts         int32
	CoordinatorWriteTimeoutMs      int32
	CoordinatorLoadBufferSizeBytes int32
}

// Sources combines the static configuration with the dynamic broker
// configs of the metadata image (the "" resource and this broker's), for
// configdef.DescribeBroker, configdef.DescribeTopic and
// configdef.EffectiveLogConfig.
func (c *Config) Sources(dynamicDefault, dynamicBroker map[string]string) configdef.Sources {
	return configdef.Sources{
		NodeID:         c.NodeID,
		Static:         c.Raw,
		DynamicDefault: dynamicDefault,
		DynamicBroker:  dynamicBroker,
	}
}

// TopicDefaults returns the value every topic config takes when the topic
// does not override it, from the static configuration (see
// configdef.Sources.TopicDefaults). CreateTopics uses it to validate.
func (c *Config) TopicDefaults() map[string]string {
	return c.Sources(nil, nil).TopicDefaults()
}

// EffectiveLogConfig is a topic's storage configuration: the broker's
// static log defaults overlaid by the topic's overrides. With dynamic
// broker configs in play, use configdef.EffectiveLogConfig with
// broker.Sources(...).
func EffectiveLogConfig(broker *Config, topicOverrides map[string]string) (storage.LogConfig, error) {
	return configdef.EffectiveLogConfig(broker.Sources(nil, nil), topicOverrides)
}

// values reads canonical values of broker keys: Raw's when set, else the
// default.
type values struct{ src configdef.Sources }

func (v values) str(name string) string {
	s, _ := v.src.BrokerValue(name)
	return s
}

// set reports whether a layer sets the key: server.properties at start, or
// a dynamic config when an alteration is checked (ValidateListenerChange).
func (v values) set(name string) bool {
	for _, l := range []map[string]string{v.src.DynamicBroker, v.src.DynamicDefault, v.src.Static} {
		if _, ok := l[name]; ok {
			return true
		}
	}
	return false
}

func (v values) i64(name string) int64 {
	n, _ := strconv.ParseInt(v.str(name), 10, 64)
	return n
}

func (v values) i32(name string) int32 { return int32(v.i64(name)) }

func (v values) boolean(name string) bool { return v.str(name) == "true" }
