package coordinator

import "github.com/strait-io/strait/raftmeta"

// OnMetadataDelta removes the committed offsets of deleted topics from
// every partition this broker coordinates, writing tombstones for them
// (GroupCoordinatorService.onPartitionsDeleted): a topic created again
// under the same name must not inherit them. It does not block on the
// writes.
func (c *GroupCoordinator) OnMetadataDelta(d *raftmeta.Delta) {
	if d == nil || len(d.DeletedTopics) == 0 {
		return
	}
	deleted := map[string]bool{}
	deletedIDs := map[topicID]bool{}
	for _, t := range d.DeletedTopics {
		deleted[t.Name] = true
		deletedIDs[topicID(t.ID)] = true
	}
	for _, s := range c.allShards() {
		s.mu.Lock()
		if s.state == shardActive {
			s.deleteTopicOffsets(deleted)
			s.cleanupDeletedShareTopics(deletedIDs)
		}
		s.mu.Unlock()
	}
}

// deleteTopicOffsets tombstones every offset of the given topics, those
// open transactions committed included (OffsetMetadataManager.onPartitionsDeleted).
// Called with mu held.
func (s *shard) deleteTopicOffsets(topics map[string]bool) {
	var recs []coordRecord
	for _, group := range s.sortedGroupIDsWithOffsets() {
		var tps []topicPartition
		for _, topic := range s.offsets.topics(group) {
			for _, p := range s.offsets.partitions(group, topic) {
				tps = append(tps, topicPartition{topic, p})
			}
		}
		tps = append(tps, s.pending.partitions(group)...)
		seen := map[topicPartition]bool{}
		for _, tp := range tps {
			if !topics[tp.topic] || seen[tp] {
				continue
			}
			seen[tp] = true
			recs = append(recs, newOffsetCommitTombstone(group, tp.topic, tp.partition))
			s.removeOffset(group, tp.topic, tp.partition)
		}
	}
	if len(recs) == 0 {
		return
	}
	s.log.Info("deleting the offsets of deleted topics", "tombstones", len(recs))
	s.append(recs, true, func(err error) {
		if err != nil {
			s.log.Warn("writing tombstones for deleted topics failed", "err", err)
		}
	})
}

// sortedGroupIDsWithOffsets returns the groups with committed offsets or
// open transactions, sorted.
func (s *shard) sortedGroupIDsWithOffsets() []string {
	ids := s.pending.groups()
	for id := range s.offsets {
		if !s.pending.hasGroup(id) {
			ids = append(ids, id)
		}
	}
	sortStrings(ids)
	return ids
}
