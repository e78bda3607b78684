package share

import "github.com/strait-io/strait/raftmeta"

// OnMetadataDelta removes the state of the share-partitions of deleted
// topics from every partition this broker coordinates, with tombstones
// (ShareCoordinatorService.onTopicsDeleted, maybeCleanupShareState): a
// topic's partitions are gone, and so is what share groups consumed of
// them. It does not wait for the writes, since the metadata subscription
// calls it.
func (c *Coordinator) OnMetadataDelta(d *raftmeta.Delta) {
	if d == nil || len(d.DeletedTopics) == 0 {
		return
	}
	deleted := map[raftmeta.Uuid]bool{}
	for _, t := range d.DeletedTopics {
		deleted[t.ID] = true
	}
	for _, s := range c.shards.Shards() {
		s.mu.Lock()
		if s.state == shardActive {
			var recs []shareRecord
			for _, k := range sortedKeys(s.states) {
				if deleted[k.TopicID] {
					recs = append(recs, tombstoneRecord(k))
				}
			}
			if len(recs) > 0 {
				s.commitLocked(recs)
			}
		}
		s.mu.Unlock()
	}
}
