package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
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
//     group (KIP-848). The generation is the member epoch of a consumer
//     group's member: STALE_MEMBER_EPOCH when it is not the member's
//     current epoch; a member of a consumer group committing with an
//     older version gets UNSUPPORTED_VERSION.
func (c *GroupCoordinator) OffsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	oc := offsetCommit{group: req.Group, memberID: req.MemberID, generation: req.Generation, apiVersion: req.Version, unknownGroup: illegalGeneration, retentionMs: -1}
	if req.Version < 1 {
		oc.generation, oc.memberID = -1, ""
	}
	if req.Version >= 7 {
		oc.instanceID = req.InstanceID
	}
	if req.Version >= 9 {
		oc.unknownGroup = groupIDNotFound
	}
	if req.Version >= 2 && req.Version <= 4 {
		oc.retentionMs = req.RetentionTimeMillis
	}
	// The wire layer lets only CLUSTER_ACTION send the tag.
	oc.forwardOnly = mirrormsg.IsForwardOnly(req)
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			om := offsetAndMetadata{offset: p.Offset, leaderEpoch: -1, commitTimestamp: -1}
			if req.Version >= 6 {
				om.leaderEpoch = p.LeaderEpoch
			}
			if req.Version == 1 {
				om.commitTimestamp = p.Timestamp
			}
			oc.offsets = append(oc.offsets, partitionCommit{topic: t.Topic, partition: p.Partition, metadata: p.Metadata, om: om, kept: -1})
		}
	}
	c.commitOffsets(ctx, &oc)

	resp := kmsg.NewPtrOffsetCommitResponse()
	resp.Version = req.Version
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			pc := &oc.offsets[i]
			i++
			rp.Partition, rp.ErrorCode = p.Partition, pc.code
			if pc.kept >= 0 {
				mirrormsg.SetKept(&rp, pc.kept)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// validateOffsetCommit checks who may commit (OffsetMetadataManager.validateOffsetCommit,
// validateTransactionalOffsetCommit and ClassicGroup.validateOffsetCommit),
// creating a simple group for a generation -1 commit to an unknown group;
// a commit with a generation to an unknown group answers unknownGroup.
// A transactional commit (TxnOffsetCommit, KIP-447) without member id and
// generation is accepted whatever the group's state, as its versions
// before 3 carry neither, and is not held back by a rebalance.
//
// A consumer group's member committing at an epoch older than its own is
// checked partition by partition (KIP-1251): partitionCode, when not nil,
// answers each partition.
func (s *shard) validateOffsetCommit(oc *offsetCommit) (code int16, partitionCode func(t topicID, partition int32) int16) {
	groupID, memberID, instanceID, generation, unknownGroup, transactional :=
		oc.group, oc.memberID, oc.instanceID, oc.generation, oc.unknownGroup, oc.transactional
	if s.isShareGroup(groupID) {
		return groupIDNotFound, nil
	}
	if oc.forwardOnly {
		return s.validateForwardOnlyCommit(groupID), nil
	}
	if cg := s.consumerGroups[groupID]; cg != nil {
		code, older := cg.validateOffsetCommit(memberID, instanceID, generation, transactional, oc.apiVersion)
		stale := staleMemberEpoch
		if transactional {
			// GroupMetadataManager.validateTransactionalOffsetCommit.
			stale = illegalGeneration
		}
		if code == staleMemberEpoch {
			code = stale
		}
		if code != 0 || older == nil {
			return code, nil
		}
		return 0, func(t topicID, p int32) int16 {
			if !older.mayCommitAt(t, p, generation) {
				return stale
			}
			return 0
		}
	}
	g := s.group(groupID)
	if g == nil {
		if generation >= 0 {
			return unknownGroup, nil
		}
		g = s.getOrCreateGroup(groupID)
	}
	return g.validateOffsetCommit(memberID, instanceID, generation, transactional), nil
}

// validateForwardOnlyCommit checks a mirror sync's forward-only commit
// (mirrormsg.ForwardOnlyCommitTag): it names no member, and is taken
// whatever the group's members and state, as it only ever moves a
// partition's committed offset forward; a group it does not know is
// created as a simple group, as a generation -1 commit does. A group being
// unloaded (Dead) answers COORDINATOR_NOT_AVAILABLE for a retry.
func (s *shard) validateForwardOnlyCommit(groupID string) int16 {
	if s.consumerGroups[groupID] != nil {
		return 0
	}
	g := s.group(groupID)
	if g == nil {
		g = s.getOrCreateGroup(groupID)
	}
	if g.is(stateDead) {
		return coordinatorNotAvailable
	}
	return 0
}

// validateOffsetCommit is ClassicGroup.validateOffsetCommit.
func (g *classicGroup) validateOffsetCommit(memberID string, instanceID *string, generation int32, transactional bool) int16 {
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
	} else if !transactional && !g.is(stateEmpty) {
		// No member id and no generation: only an empty group accepts it.
		return unknownMemberID
	}
	if !transactional && g.is(stateCompletingRebalance) {
		// The member has its new generation from JoinGroup but not its
		// assignment: have it finish the rebalance first.
		return rebalanceInProgress
	}
	return 0
}

// validateOffsetCommit checks a commit to a consumer group
// (ConsumerGroup.validateOffsetCommit): an empty group takes commits
// without a member (the admin client, consumers assigning partitions
// themselves), a transactional commit without member fields is taken
// whatever the group; otherwise the member must exist (UNKNOWN_MEMBER_ID),
// use OffsetCommit v9+ (UNSUPPORTED_VERSION) and commit at its current
// epoch or an older one: a newer one is STALE_MEMBER_EPOCH; at an older
// one the member is returned, to be checked partition by partition
// (KIP-1251, Kafka 4.3: a commit sent before the member learned its new
// epoch is not refused for the partitions it kept).
func (g *consumerGroup) validateOffsetCommit(memberID string, instanceID *string, epoch int32, transactional bool, apiVersion int16) (int16, *consumerMember) {
	if epoch < 0 && g.isEmpty() {
		return 0, nil
	}
	if transactional && epoch == -1 && memberID == "" && instanceID == nil {
		return 0, nil
	}
	m := g.member(memberID)
	if m == nil {
		return unknownMemberID, nil
	}
	if !transactional && apiVersion < 9 {
		return unsupportedVersion, nil
	}
	switch {
	case epoch > m.memberEpoch || epoch < 0:
		return staleMemberEpoch, nil
	case epoch < m.memberEpoch:
		return 0, m
	}
	return 0, nil
}

// mayCommitAt reports whether the member may commit partition p of t at
// an epoch older than its own: the partition is still the member's and
// was given to it at that epoch or before (KIP-1251).
func (m *consumerMember) mayCommitAt(t topicID, p int32, epoch int32) bool {
	given, ok := m.assignmentEpochs[t][p]
	return ok && (m.assigned.contains(t, p) || m.pendingRevocation.contains(t, p)) && epoch >= given
}
