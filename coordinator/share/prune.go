package share

import (
	"context"
	"time"
)

// pruneTracker knows which records of a __share_group_state partition are
// still needed: for every share-partition, its latest committed snapshot
// and what follows it (Kafka's ShareCoordinatorOffsetsManager). Every
// record below the oldest of those snapshots describes state a later
// snapshot replaced, so it may be deleted; since records are appended
// with a delete cleanup policy and no retention, nothing else removes
// them. It is fed committed records in log order: those replayed on load,
// and those a live shard wrote once their append is acknowledged.
type pruneTracker struct {
	// pins is, per live share-partition, the offset of its latest
	// snapshot (or of its first update, for one whose snapshot the log
	// does not hold): nothing it needs lies below.
	pins map[Key]int64
	// end is the offset after the last committed record.
	end int64
	// pruned is the log start offset the last prune set.
	pruned int64
}

func newPruneTracker() pruneTracker { return pruneTracker{pins: map[Key]int64{}} }

// committed records that r is in the log at offset.
func (t *pruneTracker) committed(r shareRecord, offset int64) {
	switch {
	case r.tombstone:
		delete(t.pins, r.key)
	case r.typ == recordTypeSnapshot:
		t.pins[r.key] = offset
	default:
		if _, ok := t.pins[r.key]; !ok {
			t.pins[r.key] = offset
		}
	}
	t.end = max(t.end, offset+1)
}

// redundantBelow is the offset below which the partition holds nothing
// any share-partition needs: the oldest pin, or, with no share-partition
// left, everything committed.
func (t *pruneTracker) redundantBelow() int64 {
	low := t.end
	for _, o := range t.pins {
		low = min(low, o)
	}
	return low
}

// runBackground prunes every active shard's partition each PruneInterval
// and snapshots its cold share-partitions each
// ColdPartitionSnapshotInterval (ShareCoordinatorService's periodic
// jobs), until the coordinator closes.
func (c *Coordinator) runBackground() {
	prune := time.NewTicker(c.cfg.PruneInterval)
	defer prune.Stop()
	cold := time.NewTicker(c.cfg.ColdPartitionSnapshotInterval)
	defer cold.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-prune.C:
			for _, s := range c.shards.Shards() {
				s.prune()
			}
		case <-cold.C:
			for _, s := range c.shards.Shards() {
				s.snapshotColdPartitions()
			}
		}
	}
}

// prune deletes the records of the partition below redundantBelow, if
// that moved since the last prune (ShareCoordinatorService.performRecordPruning).
func (s *shard) prune() {
	s.mu.Lock()
	if s.state != shardActive {
		s.mu.Unlock()
		return
	}
	below := s.pruning.redundantBelow()
	if below <= s.pruning.pruned {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(s.ctx, s.c.cfg.WriteTimeout)
	defer cancel()
	if err := s.c.cfg.Log.DeleteRecords(ctx, s.partition, below); err != nil {
		if s.ctx.Err() == nil {
			s.log.Warn("pruning the share-group state partition failed", "below", below, "err", err)
		}
		return
	}
	s.mu.Lock()
	s.pruning.pruned = max(s.pruning.pruned, below)
	s.mu.Unlock()
	s.log.Debug("pruned the share-group state partition", "below", below)
}

// snapshotColdPartitions writes a new snapshot of every share-partition
// whose last one is older than ColdPartitionSnapshotInterval, so that the
// records before it can be pruned (ShareCoordinatorShard.snapshotColdPartitions):
// the same state with the next snapshot epoch and the write time now.
// When every share-partition's snapshot is already such a rewrite, the
// partition is quiet and nothing is written.
func (s *shard) snapshotColdPartitions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != shardActive || len(s.states) == 0 {
		return
	}
	rewritten := 0
	for _, st := range s.states {
		if st.createTimestamp != st.writeTimestamp {
			rewritten++
		}
	}
	if rewritten == len(s.states) {
		return
	}
	now := s.c.nowMs()
	var recs []shareRecord
	for _, k := range sortedKeys(s.states) {
		st := s.states[k]
		if now-st.writeTimestamp < s.c.cfg.ColdPartitionSnapshotInterval.Milliseconds() {
			continue
		}
		v := st.snapshotOf()
		v.SnapshotEpoch++
		v.WriteTimestamp = now
		recs = append(recs, snapshotRecord(k, v))
	}
	if len(recs) > 0 {
		s.commitLocked(recs)
	}
}
