package coordinator

import (
	"log/slog"

	"github.com/strait-io/strait/coordinator/producerid"
	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/raftmeta"
)

// GroupCoordinator implements wire.GroupService and wire.ProducerIDService.
type GroupCoordinator struct {
	cfg Config
	log *slog.Logger

	// shards is the shard of each __consumer_offsets partition this broker
	// leads; a resigned shard is deleted, so its partition answers
	// NOT_COORDINATOR as one never led.
	shards *runtime.Registry[*shard]

	pids *producerid.Manager
}

// Validate reports a configuration NewGroupCoordinator would reject.
func (cfg Config) Validate() error { return cfg.withDefaults().validate() }

// NewGroupCoordinator returns a coordinator that serves no partition until
// OnElection. It panics on an invalid Config (see Config.Validate), which
// the broker checks while parsing its configuration.
func NewGroupCoordinator(cfg Config) *GroupCoordinator {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		panic(err)
	}
	c := &GroupCoordinator{
		cfg: cfg,
		log: cfg.Logger.With("component", "group-coordinator"),
	}
	c.shards = runtime.New(func(p, epoch int32, _ *shard) *shard {
		return newShard(c, p, epoch)
	}, runtime.Options{
		Loading: func(p, epoch int32) {
			c.log.Info("loading group metadata", "partition", p, "epoch", epoch)
		},
	})
	c.pids = cfg.ProducerIDs
	if c.pids == nil {
		c.pids = producerid.New(cfg.AllocateProducerIDs, c.log)
	}
	return c
}

// OnElection starts coordinating the groups of __consumer_offsets
// partition p, led by this broker at leaderEpoch: the partition is
// replayed in the background (requests for its groups answer
// COORDINATOR_LOAD_IN_PROGRESS meanwhile). An election at an epoch not
// newer than the one already served is ignored.
func (c *GroupCoordinator) OnElection(p int32, leaderEpoch int32) {
	if p < 0 || p >= c.cfg.NumPartitions {
		c.log.Warn("ignoring an election for a partition beyond offsets.topic.num.partitions", "partition", p)
		return
	}
	c.shards.OnElection(p, leaderEpoch)
}

// OnResignation stops coordinating partition p: its groups are dropped
// from memory and requests for them answer NOT_COORDINATOR.
func (c *GroupCoordinator) OnResignation(p int32) { c.shards.OnResignation(p) }

// reload replaces a shard by a fresh load of the same partition and epoch,
// unless it was replaced or resigned meanwhile.
func (c *GroupCoordinator) reload(s *shard) { c.shards.Reload(s.partition, s) }

// Close unloads every partition and waits for the coordinator's
// goroutines to stop.
func (c *GroupCoordinator) Close() { c.shards.Close() }

// shard returns the shard of partition p, nil if none.
func (c *GroupCoordinator) shard(p int32) *shard {
	s, _ := c.shards.Lookup(p)
	return s
}

// allShards returns the shards ordered by partition.
func (c *GroupCoordinator) allShards() []*shard { return c.shards.Shards() }

// lockShard returns the shard coordinating groupID, locked, or the error
// code for why it cannot: NOT_COORDINATOR if this broker does not lead the
// partition, COORDINATOR_LOAD_IN_PROGRESS while it loads.
func (c *GroupCoordinator) lockShard(groupID string) (*shard, int16) {
	s := c.shard(PartitionFor(groupID, c.cfg.NumPartitions))
	if s == nil {
		return nil, notCoordinator
	}
	s.mu.Lock()
	if code := s.stateErrorCode(); code != 0 {
		s.mu.Unlock()
		return nil, code
	}
	return s, 0
}

// stateErrorCode is the error for requests to a shard that is not active.
func (s *shard) stateErrorCode() int16 {
	switch s.state {
	case shardActive:
		return 0
	case shardLoading:
		return coordinatorLoadInProgress
	default:
		return notCoordinator
	}
}

// image is the newest metadata image, never nil.
func (c *GroupCoordinator) image() *raftmeta.Image {
	if img := c.cfg.Image(); img != nil {
		return img
	}
	return raftmeta.EmptyImage()
}
