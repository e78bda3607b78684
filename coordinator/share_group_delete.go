package coordinator

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
)

// Deleting share groups (GroupCoordinatorService.deleteGroups): before a
// share group's records are tombstoned with the other groups', its share
// state is deleted from the share coordinator. Every partition it
// initialized (or was initializing, or still deleting from an earlier
// attempt) moves to the deleting topics of its state partition metadata,
// written before the share coordinator is asked; a group whose state the
// share coordinator could not delete keeps that record and answers the
// error, and a later DeleteGroups retries.

// shareErrorCode is the Kafka error code of a persister error.
func shareErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return kerr.RequestTimedOut.Code
	}
	return unknownServerError
}

// deleteShareGroupsState deletes the share state of the share groups among
// ids and returns the error code of each share group that must not be
// deleted now (NON_EMPTY_GROUP, or the share coordinator's error). Groups
// that are not share groups are left to DeleteGroups.
func (c *GroupCoordinator) deleteShareGroupsState(ctx context.Context, ids []string) map[string]int16 {
	out := map[string]int16{}
	type deletion struct {
		group string
		parts []SharePartitionID
	}
	var todo []deletion
	waits := map[string]<-chan error{}
	for _, id := range ids {
		s := c.shard(PartitionFor(id, c.cfg.NumPartitions))
		if s == nil {
			continue
		}
		s.mu.Lock()
		g := s.shareGroups[id]
		switch {
		case s.stateErrorCode() != 0 || g == nil:
		case !g.isEmpty():
			out[id] = nonEmptyGroup
		case c.cfg.Share.Persister == nil:
			// Its share state could not be deleted: the group stays.
			out[id] = unsupportedVersion
		case g.partitions.exists:
			rec, parts := s.shareGroupDeletingRecord(g)
			waits[id] = s.writeShareRecords([]shareRecord{rec}, true)
			if len(parts) > 0 {
				todo = append(todo, deletion{group: id, parts: parts})
			}
		}
		s.mu.Unlock()
	}
	for _, id := range sortedKeysOf(waits) {
		if code := appendErrorCode(awaitAppend(ctx, waits[id])); code != 0 {
			out[id] = code
		}
	}
	for _, d := range todo {
		if _, failed := out[d.group]; failed {
			continue
		}
		results, err := c.cfg.Share.Persister.DeleteState(ctx, d.group, d.parts)
		if err == nil {
			err = firstPartitionError(results)
		}
		if err != nil {
			c.log.Warn("deleting a share group's state failed; the group is kept", "group", d.group, "err", err)
			out[d.group] = shareErrorCode(err)
		}
	}
	return out
}

// shareGroupDeletingRecord is shareGroupBuildPartitionDeleteRequest: the
// record moving every initializing and initialized topic, and those of
// the deleting ones still in the image (retried whole), to deleting, and
// the partitions to delete from the share coordinator.
func (s *shard) shareGroupDeletingRecord(g *shareGroup) (shareRecord, []SharePartitionID) {
	img := s.c.image()
	candidates := combineInitTopics(g.partitions.initialized, g.partitions.initializing)
	for t := range g.partitions.deleting {
		topic := img.TopicsByID[raftmeta.Uuid(t)]
		if topic == nil {
			s.log.Warn("a deleting topic of a share group is not in the metadata image; ignoring it", "group", g.id, "topic_id", raftmeta.Uuid(t).String())
			continue
		}
		all := make([]int32, len(topic.Partitions))
		for i := range all {
			all[i] = int32(i)
		}
		candidates = combineInitTopics(candidates, map[topicID]shareInitTopic{t: {name: topic.Name, partitions: all}})
	}
	p := newSharePartitionsState()
	p.exists = true
	var parts []SharePartitionID
	for _, t := range sortedTopicIDs(candidates) {
		p.deleting[t] = true
		for _, n := range candidates[t].partitions {
			parts = append(parts, SharePartitionID{TopicID: t, Partition: n})
		}
	}
	return newSharePartitionsRecord(g.id, p, img), parts
}

// deleteShareGroupRecords removes an empty share group, returning its
// tombstones (ShareGroup.createGroupTombstoneRecords). Called with mu held.
func (s *shard) deleteShareGroupRecords(g *shareGroup) []coordRecord {
	var recs []coordRecord
	for _, r := range shareGroupTombstones(g) {
		if err := s.replayShare(r); err != nil {
			s.log.Error("deleting a share group", "group", g.id, "err", err)
		}
		recs = append(recs, r.encode())
	}
	return recs
}
