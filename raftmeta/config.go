package raftmeta

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
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
	// BindAddr is the CONTROLLER listener raft's TCP transport binds
	// (host:port; port 0 picks a free one).
	BindAddr string
	// AdvertiseAddr is the address other voters dial; empty uses this
	// node's entry in Voters, else the bound address.
	AdvertiseAddr string
	// Voters is controller.quorum.voters: node id → host:port. Empty means
	// this node alone. This node's address in it may have port 0, then the
	// bound address is used.
	Voters map[int32]string
	// Logger receives the quorum's logs and raft's (nil: discarded).
	Logger *slog.Logger
	// RaftLogLevel is the lowest level of raft's own lines that reach
	// Logger (nil: warn; raft logs every election at info).
	RaftLogLevel slog.Leveler

	// HeartbeatTimeout, ElectionTimeout and CommitTimeout are raft's
	// (defaults 150ms, 150ms, 10ms: a single voter elects itself within
	// 300ms of Start).
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
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.RaftLogLevel == nil {
		c.RaftLogLevel = slog.LevelWarn
	}
	if c.HeartbeatTimeout <= 0 {
		c.HeartbeatTimeout = 150 * time.Millisecond
	}
	if c.ElectionTimeout <= 0 {
		c.ElectionTimeout = c.HeartbeatTimeout
	}
	if c.CommitTimeout <= 0 {
		c.CommitTimeout = 10 * time.Millisecond
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
	if len(c.Voters) > 0 {
		if _, ok := c.Voters[c.NodeID]; !ok {
			// Observers (brokers that are not voters) come with issue 4.
			errs = append(errs, fmt.Errorf("node %d is not one of the controller.quorum.voters", c.NodeID))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("raftmeta: config: %w", err)
	}
	return nil
}
