package state

import (
	"log/slog"

	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/raftmeta"
)

// Coordinator is the __mirror_state coordinator of one broker
// (ClusterMirrorCoordinatorService): a shard per __mirror_state partition
// the broker leads. Its ReadMirrorStates and WriteMirrorStates have the
// signatures of wire.MirrorService's; ReadState, WriteStates and Delete
// are the same operations for callers on this broker.
type Coordinator struct {
	cfg Config
	log *slog.Logger

	// shards is the shard of each __mirror_state partition this broker
	// leads or led: a resigned shard stays, closed (see OnResignation).
	shards *runtime.Registry[*shard]
}

// New returns a coordinator that serves no partition until OnElection.
func New(cfg Config) (*Coordinator, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Coordinator{
		cfg: cfg,
		log: cfg.Logger.With("component", "mirror-state-coordinator"),
	}
	c.shards = runtime.New(func(p, epoch int32, prev *shard) *shard {
		// The new shard loads only once the old one's write in flight, if
		// any, has finished: otherwise that write could land in the log
		// after the load read it, and the new shard would accept a second
		// write at the same state epoch.
		return newShard(c, p, epoch, prev)
	}, runtime.Options{
		KeepClosed: true,
		Loading: func(p, epoch int32) {
			c.log.Info("loading mirror states", "partition", p, "epoch", epoch)
		},
	})
	return c, nil
}

// OnElection starts coordinating __mirror_state partition p, led by this
// broker at leaderEpoch: the partition is replayed in the background
// (requests for its records answer COORDINATOR_LOAD_IN_PROGRESS
// meanwhile). An election at an epoch not newer than the one already
// served is ignored; a newer one replaces the shard with a fresh load.
func (c *Coordinator) OnElection(p int32, leaderEpoch int32) {
	if p < 0 {
		return
	}
	c.shards.OnElection(p, leaderEpoch)
}

// OnResignation stops coordinating partition p: its records are dropped
// from memory and requests for them answer NOT_COORDINATOR. A write in
// flight finishes with its append's outcome. The closed shard stays in
// place (a few words; runtime.Options.KeepClosed) so a later election
// waits for that write.
func (c *Coordinator) OnResignation(p int32) { c.shards.OnResignation(p) }

// Close unloads every partition and waits for the loads to stop.
func (c *Coordinator) Close() { c.shards.Close() }

// shard returns the shard of partition p, nil if none.
func (c *Coordinator) shard(p int32) *shard {
	s, _ := c.shards.Lookup(p)
	return s
}

// allShards returns the shards ordered by partition.
func (c *Coordinator) allShards() []*shard { return c.shards.Shards() }

// image is the newest metadata image, never nil.
func (c *Coordinator) image() *raftmeta.Image {
	if img := c.cfg.Image(); img != nil {
		return img
	}
	return raftmeta.EmptyImage()
}

// numPartitions is __mirror_state's partition count: the topic's in img
// when it exists (records must keep mapping to the partitions holding
// them, as for __consumer_offsets), else mirror.state.topic.num.partitions.
func (c *Coordinator) numPartitions(img *raftmeta.Image) int32 {
	if t, ok := img.Topics[raftmeta.MirrorStateTopic]; ok && len(t.Partitions) > 0 {
		return int32(len(t.Partitions))
	}
	return c.cfg.NumPartitions
}

// shardFor returns the shard coordinating key (nil if this broker does not
// lead its partition).
func (c *Coordinator) shardFor(img *raftmeta.Image, key Key) *shard {
	return c.shard(key.PartitionFor(c.numPartitions(img)))
}
