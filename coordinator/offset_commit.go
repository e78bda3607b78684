package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit: v2-9 (v0-1 are served too where they make sense)
//
// Behavior:
//   - Topics missing from the metadata image and partitions past a topic's
//     count answer UNKNOWN_TOPIC_OR_PARTITION (KafkaApis.handleOffsetCommitRequest).
//   - The commits are written as one batch of OffsetCommitKey/Value records
//     with acks=all before the response.
//   - Generation -1 with no member id commits for a group without members
//     (a "simple" group, created on demand), as consumers that assign
//     partitions themselves and admin clients do.
//
// Version notes:
//   - v1: per-partition commit Timestamp.
//   - v2-4: RetentionTimeMillis (-1: the broker's retention).
//   - v6: LeaderEpoch (KIP-320).
//   - v7: GroupInstanceID (KIP-345).
//   - v9: GROUP_ID_NOT_FOUND instead of ILLEGAL_GENERATION for a missing
//     group (KIP-848).
func (c *GroupCoordinator) OffsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := kmsg.NewPtrOffsetCommitResponse()
	resp.Version = req.Version

	// Build the response skeleton; valid holds the positions of partitions
	// that exist.
	type pos struct{ t, p int }
	var valid []pos
	img := c.image()
	for ti, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		topic := img.Topics[t.Topic]
		for pi, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			if topic == nil || p.Partition < 0 || int(p.Partition) >= len(topic.Partitions) {
				rp.ErrorCode = unknownTopicOrPartition
			} else {
				valid = append(valid, pos{ti, pi})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	setAll := func(code int16) *kmsg.OffsetCommitResponse {
		for _, v := range valid {
			resp.Topics[v.t].Partitions[v.p].ErrorCode = code
		}
		return resp
	}
	if len(valid) == 0 {
		return resp
	}

	s, code := c.lockShard(req.Group)
	if code != 0 {
		return setAll(code)
	}
	generation, memberID := req.Generation, req.MemberID
	if req.Version < 1 {
		generation, memberID = -1, ""
	}
	var instanceID *string
	if req.Version >= 7 {
		instanceID = req.InstanceID
	}
	if code := s.validateOffsetCommit(req.Group, memberID, instanceID, generation, req.Version); code != 0 {
		s.mu.Unlock()
		return setAll(code)
	}
	g := s.group(req.Group)
	if g.is(stateStable) || g.is(statePreparingRebalance) {
		// A commit keeps a classic member's session alive.
		if m := g.member(memberID); m != nil {
			s.rescheduleHeartbeat(g, m)
		}
	}

	now := s.nowMs()
	expire := int64(-1)
	if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
		expire = now + req.RetentionTimeMillis
	}
	var recs []coordRecord
	var written []pos
	for _, v := range valid {
		t := &req.Topics[v.t]
		p := &t.Partitions[v.p]
		metadata := ""
		if p.Metadata != nil {
			metadata = *p.Metadata
		}
		if javaLength(metadata) > int(c.cfg.OffsetMetadataMaxBytes) {
			resp.Topics[v.t].Partitions[v.p].ErrorCode = offsetMetadataTooLarge
			continue
		}
		om := offsetAndMetadata{
			offset:          p.Offset,
			leaderEpoch:     -1,
			metadata:        metadata,
			commitTimestamp: now,
			expireTimestamp: expire,
		}
		if req.Version >= 6 {
			om.leaderEpoch = p.LeaderEpoch
		}
		if req.Version == 1 && p.Timestamp != -1 {
			om.commitTimestamp = p.Timestamp
		}
		recs = append(recs, newOffsetCommitRecord(req.Group, t.Topic, p.Partition, om))
		s.offsets.put(req.Group, t.Topic, p.Partition, om)
		written = append(written, v)
	}
	if len(recs) == 0 {
		s.mu.Unlock()
		return resp
	}
	done := s.appendAndWait(recs, true)
	s.mu.Unlock()

	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if code := appendErrorCode(err); code != 0 {
		for _, v := range written {
			resp.Topics[v.t].Partitions[v.p].ErrorCode = code
		}
	}
	return resp
}

// validateOffsetCommit checks who may commit (OffsetMetadataManager.validateOffsetCommit
// and ClassicGroup.validateOffsetCommit), creating a simple group for a
// generation -1 commit to an unknown group.
func (s *shard) validateOffsetCommit(groupID, memberID string, instanceID *string, generation int32, version int16) int16 {
	g := s.group(groupID)
	if g == nil {
		if generation >= 0 {
			if version >= 9 {
				return groupIDNotFound
			}
			return illegalGeneration
		}
		g = s.getOrCreateGroup(groupID)
	}
	if g.is(stateDead) {
		return coordinatorNotAvailable
	}
	if generation < 0 && g.is(stateEmpty) {
		// The admin client, or a consumer not using group management.
		return 0
	}
	if generation >= 0 || memberID != "" || instanceID != nil {
		if code := g.validateMember(memberID, instanceID); code != 0 {
			return code
		}
		if generation != g.generationID {
			return illegalGeneration
		}
	} else if !g.is(stateEmpty) {
		// No member id and no generation: only an empty group accepts it.
		return unknownMemberID
	}
	if g.is(stateCompletingRebalance) {
		// The member has its new generation from JoinGroup but not its
		// assignment: have it finish the rebalance first.
		return rebalanceInProgress
	}
	return 0
}
