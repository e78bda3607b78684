package coordinator

import (
	"log/slog"
	"sort"
	"sync"

	"github.com/strait-io/strait/raftmeta"
)

// GroupCoordinator implements wire.GroupService and wire.ProducerIDService.
type GroupCoordinator struct {
	cfg Config
	log *slog.Logger

	mu     sync.RWMutex
	shards map[int32]*shard
	closed bool
	wg     sync.WaitGroup

	pids *producerIDManager
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
		cfg:    cfg,
		log:    cfg.Logger.With("component", "group-coordinator"),
		shards: map[int32]*shard{},
	}
	c.pids = newProducerIDManager(cfg.AllocateProducerIDs, c.log)
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
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	old := c.shards[p]
	if old != nil {
		old.mu.Lock()
		live := old.state != shardClosed
		old.mu.Unlock()
		if live && old.epoch >= leaderEpoch {
			c.mu.Unlock()
			return
		}
	}
	s := newShard(c, p, leaderEpoch)
	c.shards[p] = s
	c.wg.Add(1)
	c.mu.Unlock()
	if old != nil {
		old.unload()
	}
	c.log.Info("loading group metadata", "partition", p, "epoch", leaderEpoch)
	go func() {
		defer c.wg.Done()
		s.run()
	}()
}

// OnResignation stops coordinating partition p: its groups are dropped
// from memory and requests for them answer NOT_COORDINATOR.
func (c *GroupCoordinator) OnResignation(p int32) {
	c.mu.Lock()
	s := c.shards[p]
	delete(c.shards, p)
	c.mu.Unlock()
	if s != nil {
		s.unload()
	}
}

// reload replaces a shard by a fresh load of the same partition and epoch,
// unless it was replaced or resigned meanwhile.
func (c *GroupCoordinator) reload(s *shard) {
	c.mu.Lock()
	if c.closed || c.shards[s.partition] != s {
		c.mu.Unlock()
		return
	}
	ns := newShard(c, s.partition, s.epoch)
	c.shards[s.partition] = ns
	c.wg.Add(1)
	c.mu.Unlock()
	s.unload()
	go func() {
		defer c.wg.Done()
		ns.run()
	}()
}

// Close unloads every partition and waits for the coordinator's
// goroutines to stop.
func (c *GroupCoordinator) Close() {
	c.mu.Lock()
	c.closed = true
	shards := make([]*shard, 0, len(c.shards))
	for _, s := range c.shards {
		shards = append(shards, s)
	}
	clear(c.shards)
	c.mu.Unlock()
	for _, s := range shards {
		s.unload()
	}
	c.wg.Wait()
}

// shard returns the shard of partition p, nil if none.
func (c *GroupCoordinator) shard(p int32) *shard {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.shards[p]
}

// allShards returns the shards ordered by partition.
func (c *GroupCoordinator) allShards() []*shard {
	c.mu.RLock()
	out := make([]*shard, 0, len(c.shards))
	for _, s := range c.shards {
		out = append(out, s)
	}
	c.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].partition < out[j].partition })
	return out
}

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
