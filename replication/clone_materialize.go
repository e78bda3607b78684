package replication

import (
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// Building a drill clone's replica (storage.CreateCloneLog: linking the
// source's closed segments, copying the segment holding the clone point,
// recovering it) costs up to about a second per GiB of that segment. It
// runs off the metadata-apply path, so other partitions' metadata never
// waits on it: until it is done the partition is not hosted here, and
// clients asking this broker for it get NOT_LEADER_OR_FOLLOWER, which
// they retry. Once the log exists the partition is brought up from the
// newest image as any other (applyDeltaLocked), and its leader settles it
// (clone.go).

// materializeCloneLater starts building tp's log in the background when tp
// is a drill clone's partition without a local log yet, and reports
// whether it did (or one is already under way). r.mu is held.
func (r *ReplicaManager) materializeCloneLater(tp storage.TopicPartition, pp *raftmeta.Partition, img *raftmeta.Image) bool {
	if r.materializing[tp] {
		return true
	}
	if _, clone := img.TopicConfig(tp.Topic)[raftmeta.MirrorCloneConfig]; !clone {
		return false
	}
	if _, ok := r.logs.Log(tp); ok {
		// Built already (a restart): opened as any log. (A log an older
		// topic of the same name left is deleted by createPartition,
		// which then builds the clone in line: rare, after a restart.)
		return false
	}
	cfg, err := r.cfg.LogConfigFor(tp.Topic, img)
	if err != nil {
		return false // createPartition reports it
	}
	id := storage.TopicID(pp.TopicID)
	r.materializing[tp] = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		_, err := r.openLog(tp, id, cfg, img)
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.materializing, tp)
		if err != nil {
			r.logger.Error("cannot build the drill clone's log; the replica is offline", "partition", tp.String(), "err", err)
			next := r.table.Load().clone()
			next.offline[tp] = err
			r.table.Store(next)
			return
		}
		select {
		case <-r.done:
			return // stopping: the log is opened as any other at the next start
		default:
		}
		cur := r.image.Load()
		np, ok := cur.Partition(tp.Topic, tp.Partition)
		if !ok || np.TopicID != pp.TopicID {
			// Deleted (or re-created) while it was built.
			if err := r.logs.DeleteLog(tp); err != nil {
				r.logger.Error("deleting a drill clone's log built for a deleted topic", "partition", tp.String(), "err", err)
			}
			if !ok {
				return
			}
		}
		r.applyDeltaLocked(&raftmeta.Delta{ChangedPartitions: []*raftmeta.Partition{np}}, cur)
	}()
	return true
}
