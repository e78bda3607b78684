package broker

import (
	"context"
	"time"

	"github.com/strait-io/strait/mirror/state"
	"github.com/strait-io/strait/raftmeta"
)

// deleteMirrorStatesTimeout bounds how long a broker keeps trying to
// remove a deleted mirror's __mirror_state records (shards still loading
// answer COORDINATOR_LOAD_IN_PROGRESS meanwhile).
const deleteMirrorStatesTimeout = 30 * time.Second

// startMirrorStates hosts the __mirror_state coordinator on this broker
// (KIP-1279's ClusterMirrorCoordinator, started like the group coordinator
// in BrokerServer): a shard for each __mirror_state partition this node
// leads, elected and resigned with the partition's leadership.
func (n *Node) startMirrorStates() error {
	m := n.cfg.Mirror
	c, err := state.New(state.Config{
		Log:            coordinatorLog{rm: n.replicas, topic: raftmeta.MirrorStateTopic},
		Image:          n.quorum.Image,
		NumPartitions:  m.StateTopicNumPartitions,
		WriteTimeout:   time.Duration(m.CoordinatorWriteTimeoutMs) * time.Millisecond,
		LoadBufferSize: m.CoordinatorLoadBufferSizeBytes,
		Clock:          n.clock,
		Logger:         n.logger,
	})
	if err != nil {
		return err
	}
	n.mirrorStates = c
	n.followLeadership(raftmeta.MirrorStateTopic, c)
	return nil
}

// onMirrorsDeleted removes the records of deleted mirrors from the
// __mirror_state partitions this broker coordinates. Every broker does it
// for its own shards when the RemoveMirrorRecord reaches it, so the
// records go wherever they live; it runs in the background (the metadata
// publisher must not wait for appends) and is best effort: a shard that
// cannot delete within deleteMirrorStatesTimeout keeps its records, which
// the next deletion of the name removes.
func (n *Node) onMirrorsDeleted(deleted []*raftmeta.Mirror) {
	c := n.deltaMirrorStates.Load()
	if c == nil || len(deleted) == 0 {
		return
	}
	n.bg.Add(1)
	go func() {
		defer n.bg.Done()
		ctx, cancel := context.WithTimeout(n.bgCtx, deleteMirrorStatesTimeout)
		defer cancel()
		for _, m := range deleted {
			n.deleteMirrorStates(ctx, c, m.Name)
		}
	}()
}

// orphanedMirrorState matches the records of mirror whose topic no longer
// names it in mirror.name (deleted, or moved to another mirror). A topic
// that was stopped keeps "<mirror>.removed" after its mirror is deleted,
// and keeps its STOPPED record with it: without the record its next
// leader would find the partition UNKNOWN and run a stop again (an epoch
// bump, ABORT markers for the open transactions of a topic that has been
// writable since, a MIRROR_PID_RESET), and a failback would lose the LME
// it needs to copy only what the clusters do not share.
func (n *Node) orphanedMirrorState(mirror string) func(state.Key) bool {
	return func(k state.Key) bool {
		if k.Mirror != mirror {
			return false
		}
		img := n.quorum.Image()
		t, ok := img.TopicsByID[raftmeta.Uuid(k.TopicID)]
		if !ok {
			return true
		}
		m, _ := img.TopicMirror(t.Name)
		return m != mirror
	}
}

// deleteMirrorStates deletes mirror's orphaned records in the local shards,
// retrying while a shard loads or a write fails, until ctx ends.
func (n *Node) deleteMirrorStates(ctx context.Context, c *state.Coordinator, mirror string) {
	backoff := 50 * time.Millisecond
	total := 0
	for {
		deleted, err := c.Delete(ctx, n.orphanedMirrorState(mirror))
		total += deleted
		if err == nil {
			if total > 0 {
				n.logger.Info("deleted the mirror states of a deleted mirror", "mirror", mirror, "records", total)
			}
			return
		}
		select {
		case <-ctx.Done():
			n.logger.Warn("could not delete every mirror state of a deleted mirror; they stay until the name is deleted again",
				"mirror", mirror, "deleted", total, "err", err)
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}
