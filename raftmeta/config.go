package raftmeta

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/ctrlrpc"
	"github.com/strait-io/strait/storage/clock"
)

// ConfigValidator checks a change to a resource's dynamic configs. configs
// holds the resource's dynamic configs as they would be after the change
// (keys the change deletes are absent; no value is nil), the new topic's
// configs for CreateTopics. The error names the
// bad key; it becomes INVALID_CONFIG for a topic and INVALID_REQUEST for a
// broker (as Kafka answers, KAFKA-13609), unless it wraps a *kerr.Error,
// whose code is used instead. The broker package supplies the real one
// (broker/configdef); nil accepts everything.
type ConfigValidator func(res ConfigResource, configs map[string]*string) error

// Config configures a Quorum and its Controller.
type Config struct {
	// NodeID is this node's node.id; its raft server id is the decimal
	// string of it.
	NodeID int32
	// Dir is the metadata directory: <Dir>/raft holds the pebble raft log
	// and stable store, <Dir>/snapshots the raft snapshots.
	Dir string
	// ClusterID is written into a new log and checked against the stored
	// one when the log exists; empty adopts the stored one.
	ClusterID string
	// BootstrapRecords are written to the metadata log of a new cluster
	// before any other record (Kafka's bootstrap metadata, which
	// kafka-storage format writes to bootstrap.checkpoint: the SCRAM
	// credentials of --add-scram). They are kept in a new metadata
	// directory, so a node restarted before its cluster first elected
	// still writes them; Open refuses them for a directory that exists
	// already (bootstrap.go).
	BootstrapRecords []Record
	// BindAddr is the CONTROLLER listener raft's TCP transport binds
	// (host:port; port 0 picks a free one).
	BindAddr string
	// AdvertiseAddr is the address other voters dial; empty uses this
	// node's entry in Voters, else the bound address.
	AdvertiseAddr string
	// Voters is controller.quorum.voters: node id → host:port. Empty means
	// this node alone. This node's address in it may have port 0, then the
	// bound address is used. A node not among the voters is a raft
	// non-voter (Kafka's observer, process.roles=broker): it starts raft
	// without bootstrapping, and the active controller adds it when its
	// broker registers.
	Voters map[int32]string
	// ControllerListenerName is the listener name under which a broker
	// registers its CONTROLLER address (controller.listener.names; default
	// "CONTROLLER"): the controller adds a non-voter at that address and
	// leaves the listener out of the broker's advertised endpoints.
	ControllerListenerName string
	// Dialer opens connections to other nodes' CONTROLLER listeners, for
	// raft and the controller RPC (nil: ctrlrpc.DefaultDialer); tests cut
	// links with it. WrapListener wraps the CONTROLLER listener (nil: as
	// bound), for the same reason.
	Dialer       ctrlrpc.Dialer
	WrapListener func(net.Listener) net.Listener
	// FS holds the raft log and stable store (nil: the operating
	// system's); tests inject failures with it.
	FS vfs.FS
	// OnStoreFailure, if set, hears the first IO error of the raft log
	// and stable store once raft runs; the goroutine that met it does not
	// return, and the owner must halt the node (store_failure.go). Unset,
	// such an error panics, as before raft runs.
	OnStoreFailure func(error)
	// Logger receives the quorum's logs and raft's (nil: discarded).
	Logger *slog.Logger
	// RaftLogLevel is the lowest level of raft's own lines that reach
	// Logger (nil: warn; raft logs every election at info).
	RaftLogLevel slog.Leveler

	// HeartbeatTimeout, ElectionTimeout and CommitTimeout are raft's.
	// Defaults for a single voter: 150ms, 150ms, 10ms, so it elects
	// itself within 300ms of Start. With several voters: 1s, 1s, 50ms
	// (raft's own, close to KRaft's 1s election and 2s fetch timeouts):
	// raft heartbeats every tenth of the heartbeat timeout, and at 150ms
	// an idle three-voter quorum spent 5-10% of a core per node on it.
	HeartbeatTimeout time.Duration
	ElectionTimeout  time.Duration
	CommitTimeout    time.Duration
	// SnapshotThreshold is how many log entries since the last snapshot
	// trigger a new one (default 8192); SnapshotInterval how often raft
	// checks (default 2m). TrailingLogs is how many entries a snapshot
	// leaves in the log (default 10240).
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64

	// NumPartitions (num.partitions) and DefaultReplicationFactor
	// (default.replication.factor) replace -1 in CreateTopics (default 1).
	NumPartitions            int32
	DefaultReplicationFactor int16
	// ConfigValidator validates topic and broker config changes.
	ConfigValidator ConfigValidator
	// DescribeTopicConfigs lists a new topic's configs for CreateTopics v5+
	// given its dynamic ones (nil: the dynamic ones alone, as
	// DYNAMIC_TOPIC_CONFIG).
	DescribeTopicConfigs func(topic string, dynamic map[string]string) []kmsg.CreateTopicsResponseTopicConfig
	// IsListConfig reports whether a key is of Kafka's LIST type, which
	// IncrementalAlterConfigs may APPEND to and SUBTRACT from (nil: Kafka's
	// list-typed topic configs).
	IsListConfig func(t ConfigResourceType, key string) bool
	// ConfigDefault is a key's static default, the base APPEND and SUBTRACT
	// start from when the key has no dynamic value (nil: cleanup.policy's
	// "delete", nothing else).
	ConfigDefault func(t ConfigResourceType, key string) (string, bool)
	// Rand is the source of topic and ACL ids (nil: crypto/rand).
	Rand io.Reader

	// Clock drives broker sessions and the leader rebalance timer on the
	// active controller (nil: the wall clock).
	Clock clock.Clock
	// BrokerSessionTimeout is broker.session.timeout.ms (default 9s): the
	// active controller fences an unfenced broker that has not heartbeated
	// for this long. Negative disables session fencing, for nodes whose
	// broker registers without heartbeating (the single-node setup of
	// issue 3).
	BrokerSessionTimeout time.Duration
	// SessionCheckInterval is how often, in wall time, the active
	// controller looks for expired sessions, leaderless partitions to elect
	// unclean leaders for and a due rebalance (default 100ms); the
	// decisions themselves read Clock.
	SessionCheckInterval time.Duration
	// UncleanLeaderElectionEnable is the static
	// unclean.leader.election.enable; a topic's config or the cluster-wide
	// dynamic broker config overrides it.
	UncleanLeaderElectionEnable bool
	// AutoLeaderRebalanceEnable (auto.leader.rebalance.enable) moves
	// leadership back to preferred replicas every
	// LeaderImbalanceCheckInterval (leader.imbalance.check.interval.seconds,
	// default 300s) for brokers whose share of partitions led by another
	// replica exceeds LeaderImbalancePerBrokerPercentage
	// (leader.imbalance.per.broker.percentage, default 10). Off unless set.
	AutoLeaderRebalanceEnable          bool
	LeaderImbalanceCheckInterval       time.Duration
	LeaderImbalancePerBrokerPercentage int

	// MirrorStateTopicPartitions (mirror.state.topic.num.partitions,
	// default 50) and MirrorStateTopicReplicationFactor
	// (mirror.state.topic.replication.factor, default 3, lowered only to
	// the registered broker count) shape __mirror_state, which CreateMirror creates
	// with the first mirror (KIP-1279).
	MirrorStateTopicPartitions        int32
	MirrorStateTopicReplicationFactor int16
}

// IsVoter reports whether this node is one of the voters (every node is
// when Voters is empty).
func (c *Config) IsVoter() bool {
	if len(c.Voters) == 0 {
		return true
	}
	_, ok := c.Voters[c.NodeID]
	return ok
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.RaftLogLevel == nil {
		c.RaftLogLevel = slog.LevelWarn
	}
	single := len(c.Voters) <= 1
	if c.HeartbeatTimeout <= 0 {
		c.HeartbeatTimeout = 150 * time.Millisecond
		if !single {
			c.HeartbeatTimeout = time.Second
		}
	}
	if c.ElectionTimeout <= 0 {
		c.ElectionTimeout = c.HeartbeatTimeout
	}
	if c.CommitTimeout <= 0 {
		c.CommitTimeout = 10 * time.Millisecond
		if !single {
			c.CommitTimeout = 50 * time.Millisecond
		}
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = 8192
	}
	if c.SnapshotInterval <= 0 {
		c.SnapshotInterval = 2 * time.Minute
	}
	if c.TrailingLogs == 0 {
		c.TrailingLogs = 10240
	}
	if c.NumPartitions <= 0 {
		c.NumPartitions = 1
	}
	if c.DefaultReplicationFactor <= 0 {
		c.DefaultReplicationFactor = 1
	}
	if c.ControllerListenerName == "" {
		c.ControllerListenerName = "CONTROLLER"
	}
	if c.Dialer == nil {
		c.Dialer = ctrlrpc.DefaultDialer
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.BrokerSessionTimeout == 0 {
		c.BrokerSessionTimeout = 9 * time.Second
	}
	if c.SessionCheckInterval <= 0 {
		c.SessionCheckInterval = 100 * time.Millisecond
	}
	if c.LeaderImbalanceCheckInterval <= 0 {
		c.LeaderImbalanceCheckInterval = 300 * time.Second
	}
	if c.LeaderImbalancePerBrokerPercentage <= 0 {
		c.LeaderImbalancePerBrokerPercentage = 10
	}
	if c.MirrorStateTopicPartitions <= 0 {
		c.MirrorStateTopicPartitions = 50
	}
	if c.MirrorStateTopicReplicationFactor <= 0 {
		c.MirrorStateTopicReplicationFactor = 3
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.NodeID < 0 {
		errs = append(errs, fmt.Errorf("node id %d is negative", c.NodeID))
	}
	if c.Dir == "" {
		errs = append(errs, errors.New("empty metadata dir"))
	}
	if c.BindAddr == "" {
		errs = append(errs, errors.New("empty controller bind address"))
	}
	for id, addr := range c.Voters {
		if id < 0 {
			errs = append(errs, fmt.Errorf("voter id %d is negative", id))
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("voter %d address %q: %w", id, addr, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("raftmeta: config: %w", err)
	}
	return nil
}
