package state

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/strait-io/strait/raftmeta"
)

// DeleteMirror tombstones every record of mirror in the partitions this
// broker coordinates; see Delete.
func (c *Coordinator) DeleteMirror(ctx context.Context, mirror string) (int, error) {
	return c.Delete(ctx, func(k Key) bool { return k.Mirror == mirror })
}

// Delete writes a tombstone for every record matching match in the
// partitions this broker coordinates (one batch per partition, acks=all)
// and drops them from memory once committed. It returns how many records
// it deleted. Each broker deletes in the partitions it leads: the broker
// calls it when a mirror is deleted (RemoveMirrorRecord) or a mirror topic
// is removed, on every broker; a partition loading or changing leader
// meanwhile keeps its records (the error says which), which a later call
// removes. Loading partitions are not waited for.
func (c *Coordinator) Delete(ctx context.Context, match func(Key) bool) (int, error) {
	deleted := 0
	var errs []error
	for _, s := range c.allShards() {
		n, err := s.delete(ctx, match)
		deleted += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return deleted, errors.Join(errs...)
}

func (s *shard) delete(ctx context.Context, match func(Key) bool) (int, error) {
	unavailable := func(code int16) (int, error) {
		if code == codeNotCoordinator {
			return 0, nil // no longer ours: the new leader's business
		}
		return 0, fmt.Errorf("deleting from %s-%d: %w", raftmeta.MirrorStateTopic, s.partition, codeError(code, ""))
	}
	// A loading shard answers at once, as in write: its load holds
	// writeMu until the replay is done.
	s.mu.Lock()
	code := s.stateCode()
	s.mu.Unlock()
	if code != 0 {
		return unavailable(code)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	if code := s.stateCode(); code != 0 {
		s.mu.Unlock()
		return unavailable(code)
	}
	var recs []stateRecord
	for k := range s.states {
		if match(k) {
			recs = append(recs, stateRecord{key: k})
		}
	}
	s.mu.Unlock()
	if len(recs) == 0 {
		return 0, nil
	}
	// Map order is random; a sorted batch makes the log reproducible.
	slices.SortFunc(recs, func(a, b stateRecord) int { return cmp.Compare(a.key.String(), b.key.String()) })
	if err := s.appendLocked(ctx, recs); err != nil {
		s.reloadLocked(err)
		return 0, fmt.Errorf("deleting %d records from %s-%d: %w", len(recs), raftmeta.MirrorStateTopic, s.partition, err)
	}
	s.mu.Lock()
	if s.state == shardActive {
		for _, r := range recs {
			delete(s.states, r.key)
		}
	}
	s.mu.Unlock()
	return len(recs), nil
}
