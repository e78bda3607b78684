package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteGroups: v0-2
//
// Behavior:
//   - Only Empty groups can be deleted, classic, consumer or share groups (NON_EMPTY_GROUP otherwise;
//     GROUP_ID_NOT_FOUND if there is no such group). A deletion writes a
//     tombstone for every committed offset and one for the group, with
//     acks=all, before it is answered (GroupCoordinatorShard.deleteGroups).
//   - A share group's share state is deleted from the share coordinator
//     first; if that fails the group stays and answers the error.
func (c *GroupCoordinator) DeleteGroups(ctx context.Context, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := kmsg.NewPtrDeleteGroupsResponse()
	resp.Version = req.Version
	// Group the requested ids by shard, so each shard writes one batch.
	type pending struct {
		idx  []int
		done <-chan error
	}
	var waits []pending
	for _, id := range req.Groups {
		r := kmsg.NewDeleteGroupsResponseGroup()
		r.Group = id
		resp.Groups = append(resp.Groups, r)
	}
	// Share groups first lose their share state (share_group_delete.go).
	shareErrs := c.deleteShareGroupsState(ctx, req.Groups)
	byShard := map[*shard][]int{}
	var order []*shard
	for i, id := range req.Groups {
		s := c.shard(PartitionFor(id, c.cfg.NumPartitions))
		if s == nil {
			resp.Groups[i].ErrorCode = notCoordinator
			continue
		}
		if _, ok := byShard[s]; !ok {
			order = append(order, s)
		}
		byShard[s] = append(byShard[s], i)
	}
	for _, s := range order {
		idx := byShard[s]
		s.mu.Lock()
		if code := s.stateErrorCode(); code != 0 {
			s.mu.Unlock()
			for _, i := range idx {
				resp.Groups[i].ErrorCode = code
			}
			continue
		}
		var recs []coordRecord
		var deleted []int
		for _, i := range idx {
			id := req.Groups[i]
			if code, ok := shareErrs[id]; ok {
				resp.Groups[i].ErrorCode = code
				continue
			}
			if sg := s.shareGroups[id]; sg != nil {
				if !sg.isEmpty() {
					resp.Groups[i].ErrorCode = nonEmptyGroup
					continue
				}
				recs = append(recs, s.deleteShareGroupRecords(sg)...)
				deleted = append(deleted, i)
				continue
			}
			if cg := s.consumerGroups[id]; cg != nil {
				if !cg.isEmpty() {
					resp.Groups[i].ErrorCode = nonEmptyGroup
					continue
				}
				recs = append(recs, s.deleteConsumerGroupRecords(cg)...)
				deleted = append(deleted, i)
				continue
			}
			g := s.group(id)
			switch {
			case g == nil || g.is(stateDead):
				resp.Groups[i].ErrorCode = groupIDNotFound
				continue
			case !g.isEmpty():
				resp.Groups[i].ErrorCode = nonEmptyGroup
				continue
			}
			recs = append(recs, s.deleteGroupRecords(id)...)
			deleted = append(deleted, i)
		}
		if len(recs) > 0 {
			waits = append(waits, pending{idx: deleted, done: s.appendAndWait(recs, true)})
		}
		s.mu.Unlock()
	}
	for _, w := range waits {
		if code := appendErrorCode(awaitAppend(ctx, w.done)); code != 0 {
			for _, i := range w.idx {
				resp.Groups[i].ErrorCode = code
			}
		}
	}
	return resp
}

// deleteGroupRecords removes an empty classic group and its offsets from
// memory and returns the tombstones that remove them from the log.
func (s *shard) deleteGroupRecords(id string) []coordRecord {
	recs := s.deleteAllOffsetsRecords(id)
	if g := s.group(id); g != nil {
		s.timer.Cancel(joinKey(g))
		s.timer.Cancel(syncKey(g))
	}
	s.removeGroup(id)
	return append(recs, newGroupMetadataTombstone(id))
}

// deleteConsumerGroupRecords removes an empty consumer group and its
// offsets, returning the tombstones (GroupCoordinatorShard.deleteGroups:
// the offsets', then ConsumerGroup.createGroupTombstoneRecords).
func (s *shard) deleteConsumerGroupRecords(g *consumerGroup) []coordRecord {
	recs := s.deleteAllOffsetsRecords(g.id)
	for _, r := range groupTombstones(g) {
		if err := s.replayConsumer(r); err != nil {
			s.log.Error("deleting a consumer group", "group", g.id, "err", err)
		}
		recs = append(recs, encodeCGRecord(r))
	}
	return recs
}

// deleteAllOffsetsRecords removes a group's offsets from memory and
// returns their tombstones: one for each committed offset and one for each
// partition only open transactions committed for (their offsets go too,
// OffsetMetadataManager.deleteAllOffsets).
func (s *shard) deleteAllOffsetsRecords(id string) []coordRecord {
	var recs []coordRecord
	for _, topic := range s.offsets.topics(id) {
		for _, p := range s.offsets.partitions(id, topic) {
			recs = append(recs, newOffsetCommitTombstone(id, topic, p))
			s.removeOffset(id, topic, p)
		}
	}
	for _, tp := range s.pending.partitions(id) {
		recs = append(recs, newOffsetCommitTombstone(id, tp.topic, tp.partition))
		s.removeOffset(id, tp.topic, tp.partition)
	}
	return recs
}
