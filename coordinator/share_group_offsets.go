package coordinator

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// The share group offset admin APIs (KIP-932): a share group has no
// committed offsets; its "offsets" are the share-partition start offsets
// the share coordinator keeps, read, set and deleted through the
// ShareStatePersister.

// DescribeShareGroupOffsets: v0-1
//
// Behavior (GroupCoordinatorService.describeShareGroupOffsets and
// describeShareGroupAllOffsets):
//   - Null topics describe every partition whose share state the group
//     initialized; an empty list describes nothing.
//   - A topic missing from the image answers start offset -1; so does a
//     partition the share coordinator has no state for (absence of data,
//     not an error, as OffsetFetch).
//   - A failed read of the share coordinator is the group's error.
//
// Version notes:
//   - v1: Lag (KIP-1226): the partition's end offset minus the start
//     offset minus the records delivered past it, -1 when unknown.
func (c *GroupCoordinator) DescribeShareGroupOffsets(ctx context.Context, req *kmsg.DescribeShareGroupOffsetsRequest) *kmsg.DescribeShareGroupOffsetsResponse {
	resp := kmsg.NewPtrDescribeShareGroupOffsetsResponse()
	resp.Version = req.Version
	for _, rg := range req.Groups {
		resp.Groups = append(resp.Groups, c.describeShareGroupOffsets(ctx, rg, req.Version >= 1))
	}
	return resp
}

func (c *GroupCoordinator) describeShareGroupOffsets(ctx context.Context, rg kmsg.DescribeShareGroupOffsetsRequestGroup, withLag bool) kmsg.DescribeShareGroupOffsetsResponseGroup {
	out := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
	out.GroupID = rg.GroupID
	out.Topics = []kmsg.DescribeShareGroupOffsetsResponseGroupTopic{}
	if c.cfg.Share.Persister == nil {
		out.ErrorCode = unsupportedVersion
		return out
	}
	img := c.image()
	var query []SharePartitionID
	names := map[topicID]string{}
	var missing []kmsg.DescribeShareGroupOffsetsResponseGroupTopic
	if rg.Topics == nil {
		s, code := c.lockShard(rg.GroupID)
		if code != 0 {
			out.ErrorCode = code
			return out
		}
		initialized := assignment{}
		if g := s.shareGroups[rg.GroupID]; g != nil {
			initialized = g.partitions.initializedAssignment()
		}
		s.mu.Unlock()
		for _, t := range initialized.sortedTopics() {
			topic := img.TopicsByID[raftmeta.Uuid(t)]
			if topic == nil {
				continue
			}
			names[t] = topic.Name
			for _, p := range initialized[t] {
				query = append(query, SharePartitionID{TopicID: t, Partition: p})
			}
		}
	}
	for _, rt := range rg.Topics {
		topic := img.Topics[rt.Topic]
		if topic == nil {
			mt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			mt.Topic = rt.Topic
			for _, p := range rt.Partitions {
				mp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				mp.Partition, mp.StartOffset = p, -1
				mt.Partitions = append(mt.Partitions, mp)
			}
			missing = append(missing, mt)
			continue
		}
		names[topicID(topic.ID)] = topic.Name
		for _, p := range rt.Partitions {
			query = append(query, SharePartitionID{TopicID: topicID(topic.ID), Partition: p})
		}
	}
	if len(query) > 0 {
		summaries, err := c.cfg.Share.Persister.ReadSummary(ctx, rg.GroupID, query)
		if err != nil {
			c.log.Warn("reading share group state summaries failed", "group", rg.GroupID, "err", err)
			out.ErrorCode = shareErrorCode(err)
			out.ErrorMessage = kmsg.StringPtr(err.Error())
			return out
		}
		out.Topics = c.shareOffsetsTopics(ctx, summaries, names, withLag)
	}
	out.Topics = append(out.Topics, missing...)
	return out
}

// shareOffsetsTopics turns summaries into response topics, in the order
// they came, with each partition's lag (computeShareGroupLagAndBuildResponse).
func (c *GroupCoordinator) shareOffsetsTopics(ctx context.Context, summaries []ShareStateSummary, names map[topicID]string, withLag bool) []kmsg.DescribeShareGroupOffsetsResponseGroupTopic {
	out := []kmsg.DescribeShareGroupOffsetsResponseGroupTopic{}
	at := map[topicID]int{}
	for _, sum := range summaries {
		t := topicID(sum.TopicID)
		i, ok := at[t]
		if !ok {
			rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			rt.Topic, rt.TopicID = names[t], sum.TopicID
			out = append(out, rt)
			i = len(out) - 1
			at[t] = i
		}
		rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
		rp.Partition = sum.Partition
		switch {
		case sum.Err != nil:
			// No state is no data, not an error (Kafka's UNINITIALIZED_START_OFFSET, DEFAULT_LEADER_EPOCH).
			rp.StartOffset, rp.LeaderEpoch = -1, 0
		case !withLag || c.cfg.Share.LatestOffset == nil || sum.StartOffset == -1 || sum.DeliveryCompleteCount == -1:
			rp.StartOffset, rp.LeaderEpoch = sum.StartOffset, sum.LeaderEpoch
		default:
			end, err := c.cfg.Share.LatestOffset(ctx, names[t], sum.Partition)
			if err != nil {
				rp.ErrorCode = shareErrorCode(err)
				rp.ErrorMessage = kmsg.StringPtr(err.Error())
				break
			}
			rp.StartOffset, rp.LeaderEpoch = sum.StartOffset, sum.LeaderEpoch
			rp.Lag = end - sum.StartOffset - int64(sum.DeliveryCompleteCount)
		}
		out[i].Partitions = append(out[i].Partitions, rp)
	}
	return out
}

// AlterShareGroupOffsets: v0
//
// Behavior (GroupCoordinatorService.alterShareGroupOffsets,
// GroupMetadataManager.completeAlterShareGroupOffsets):
//   - An empty share group, created if there is none: NON_EMPTY_GROUP
//     for the whole request otherwise (GROUP_ID_NOT_FOUND if the id is a
//     group of another type).
//   - A topic missing from the image, or a partition beyond its count,
//     answers UNKNOWN_TOPIC_OR_PARTITION; the others are written as
//     initializing, then initialized in the share coordinator at their new
//     start offsets (state epoch: the group epoch), then written as
//     initialized.
//   - A partition the share coordinator refused answers its error; a
//     failed call answers the error for the request and every partition.
func (c *GroupCoordinator) AlterShareGroupOffsets(ctx context.Context, req *kmsg.AlterShareGroupOffsetsRequest) *kmsg.AlterShareGroupOffsetsResponse {
	resp := kmsg.NewPtrAlterShareGroupOffsetsResponse()
	resp.Version = req.Version
	fail := func(code int16, msg string) *kmsg.AlterShareGroupOffsetsResponse {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = kmsg.StringPtr(msg)
		}
		return resp
	}
	// "Get or create the share group. If the group exists, check that
	// it's empty. If it is created, it is empty." (Kafka's
	// GroupMetadataManager.alterShareGroupOffsets): a new group is in the
	// shard once its first record is replayed.
	s, g, e := c.lockEmptyShareGroup(req.GroupID, true)
	if e != nil {
		return fail(e.code, e.msg)
	}
	img := c.image()
	init := shareInit{group: g.id, epoch: g.groupEpoch, parts: assignment{}, offsets: map[SharePartitionID]int64{}}
	changes := map[topicID]shareInitTopic{}
	for _, rt := range req.Topics {
		ot := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		ot.Topic = rt.Topic
		topic := img.Topics[rt.Topic]
		if topic != nil {
			ot.TopicID = topic.ID
		}
		for _, rp := range rt.Partitions {
			op := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			op.Partition = rp.Partition
			if topic == nil || rp.Partition < 0 || int(rp.Partition) >= len(topic.Partitions) {
				op.ErrorCode = unknownTopicOrPartition
				op.ErrorMessage = kmsg.StringPtr(kerr.UnknownTopicOrPartition.Description)
			} else {
				t := topicID(topic.ID)
				init.parts[t] = append(init.parts[t], rp.Partition)
				init.offsets[SharePartitionID{TopicID: t, Partition: rp.Partition}] = rp.StartOffset
			}
			ot.Partitions = append(ot.Partitions, op)
		}
		resp.Topics = append(resp.Topics, ot)
	}
	init.parts = normalizeAssignment(init.parts)
	for t, ps := range init.parts {
		changes[t] = shareInitTopic{name: img.TopicsByID[raftmeta.Uuid(t)].Name, partitions: ps, timestampMs: s.nowMs()}
	}
	var done <-chan error
	if len(changes) > 0 {
		p := g.partitions.clone()
		p.initializing = combineInitTopics(p.initializing, changes)
		for t := range changes {
			delete(p.deleting, t)
		}
		done = s.writeShareRecords([]shareRecord{newSharePartitionsRecord(g.id, p, img)}, true)
	}
	s.mu.Unlock()
	if done == nil {
		return resp
	}
	if code := appendErrorCode(awaitAppend(ctx, done)); code != 0 {
		return fail(code, "")
	}
	results, err := c.cfg.Share.Persister.InitializeState(ctx, init.group, init.epoch, init.requests())
	if err != nil {
		c.log.Warn("initializing share group state for AlterShareGroupOffsets failed", "group", init.group, "err", err)
		code := shareErrorCode(err)
		setAlterPartitionErrors(resp, func(t [16]byte, p int32) (int16, bool) { return code, true })
		return fail(code, err.Error())
	}
	failed := map[SharePartitionID]int16{}
	for _, r := range results {
		if r.Err != nil {
			failed[r.SharePartitionID] = shareErrorCode(r.Err)
		}
	}
	if len(failed) > 0 {
		// Kafka leaves them initializing: a heartbeat retries later.
		setAlterPartitionErrors(resp, func(t [16]byte, p int32) (int16, bool) {
			code, ok := failed[SharePartitionID{TopicID: t, Partition: p}]
			return code, ok
		})
		return resp
	}
	if done := c.writeShareStateInitialized(init); done != nil {
		if code := appendErrorCode(awaitAppend(ctx, done)); code != 0 {
			return fail(code, "")
		}
	}
	return resp
}

// setAlterPartitionErrors sets the error errOf gives on every partition
// that had none.
func setAlterPartitionErrors(resp *kmsg.AlterShareGroupOffsetsResponse, errOf func(t [16]byte, p int32) (int16, bool)) {
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			if rp.ErrorCode != 0 {
				continue
			}
			if code, ok := errOf(rt.TopicID, rp.Partition); ok {
				rp.ErrorCode = code
				rp.ErrorMessage = kmsg.StringPtr(kerr.ErrorForCode(code).Error())
			}
		}
	}
}

// writeShareStateInitialized writes init's partitions as initialized,
// returning the channel of the append's outcome (nil if nothing to write).
func (c *GroupCoordinator) writeShareStateInitialized(init shareInit) <-chan error {
	s, code := c.lockShard(init.group)
	if code != 0 {
		done := make(chan error, 1)
		done <- kerr.ErrorForCode(code)
		return done
	}
	defer s.mu.Unlock()
	g := s.shareGroups[init.group]
	if g == nil {
		return nil
	}
	recs := s.markShareStateInitialized(g, init.parts)
	if len(recs) == 0 {
		return nil
	}
	return s.writeShareRecords(recs, true)
}

// DeleteShareGroupOffsets: v0
//
// Behavior (GroupCoordinatorService.deleteShareGroupOffsets,
// GroupCoordinatorShard.initiateDeleteShareGroupOffsets):
//   - Only an existing, empty share group: GROUP_ID_NOT_FOUND or
//     NON_EMPTY_GROUP otherwise.
//   - A topic missing from the image, or without initialized state for
//     the group, answers UNKNOWN_TOPIC_OR_PARTITION. The others move to
//     the deleting topics of the group's state partition metadata, the
//     share coordinator deletes their state, and they leave deleting; a
//     topic the share coordinator failed for answers its error and stays
//     deleting (the next request for it retries).
func (c *GroupCoordinator) DeleteShareGroupOffsets(ctx context.Context, req *kmsg.DeleteShareGroupOffsetsRequest) *kmsg.DeleteShareGroupOffsetsResponse {
	resp := kmsg.NewPtrDeleteShareGroupOffsetsResponse()
	resp.Version = req.Version
	s, g, e := c.lockEmptyShareGroup(req.GroupID, false)
	fail := func(code int16, msg string) *kmsg.DeleteShareGroupOffsetsResponse {
		resp.ErrorCode, resp.Topics = code, nil
		if msg != "" {
			resp.ErrorMessage = kmsg.StringPtr(msg)
		}
		return resp
	}
	if e != nil {
		return fail(e.code, e.msg)
	}
	img := c.image()
	p := g.partitions.clone()
	var errTopics []kmsg.DeleteShareGroupOffsetsResponseTopic
	var parts []SharePartitionID
	names := map[topicID]string{}
	for _, rt := range req.Topics {
		topic := img.Topics[rt.Topic]
		if topic == nil {
			errTopics = append(errTopics, deleteOffsetsTopicError(rt.Topic, [16]byte{}, unknownTopicOrPartition, kerr.UnknownTopicOrPartition.Description))
			continue
		}
		t := topicID(topic.ID)
		var ps []int32
		switch {
		case len(p.initialized[t].partitions) > 0:
			ps = p.initialized[t].partitions
			delete(p.initialized, t)
			p.deleting[t] = true
		case p.deleting[t]:
			for i := range len(topic.Partitions) {
				ps = append(ps, int32(i))
			}
		default:
			errTopics = append(errTopics, deleteOffsetsTopicError(rt.Topic, [16]byte{}, unknownTopicOrPartition, "There is no offset information to delete."))
			continue
		}
		names[t] = topic.Name
		for _, n := range ps {
			if !slices.Contains(parts, SharePartitionID{TopicID: t, Partition: n}) {
				parts = append(parts, SharePartitionID{TopicID: t, Partition: n})
			}
		}
	}
	p.exists = true
	done := s.writeShareRecords([]shareRecord{newSharePartitionsRecord(g.id, p, img)}, true)
	s.mu.Unlock()
	if code := appendErrorCode(awaitAppend(ctx, done)); code != 0 {
		return fail(code, "")
	}
	resp.Topics = []kmsg.DeleteShareGroupOffsetsResponseTopic{}
	if len(parts) > 0 {
		results, err := c.cfg.Share.Persister.DeleteState(ctx, req.GroupID, parts)
		if err != nil {
			c.log.Warn("deleting share group state for DeleteShareGroupOffsets failed", "group", req.GroupID, "err", err)
			return fail(shareErrorCode(err), err.Error())
		}
		failed := map[topicID]int16{}
		for _, r := range results {
			if r.Err != nil {
				if _, ok := failed[r.TopicID]; !ok {
					failed[r.TopicID] = shareErrorCode(r.Err)
				}
			}
		}
		var deleted []topicID
		for _, t := range sortedTopicIDs(names) {
			if code, ok := failed[t]; ok {
				errTopics = append(errTopics, deleteOffsetsTopicError(names[t], t, code, kerr.ErrorForCode(code).Error()))
				continue
			}
			deleted = append(deleted, t)
		}
		if len(deleted) > 0 {
			if code := c.finishShareOffsetsDeletion(ctx, req.GroupID, deleted); code != 0 {
				return fail(code, "")
			}
		}
		for _, t := range deleted {
			ot := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
			ot.Topic, ot.TopicID = names[t], t
			resp.Topics = append(resp.Topics, ot)
		}
	}
	resp.Topics = append(resp.Topics, errTopics...)
	return resp
}

func deleteOffsetsTopicError(topic string, id [16]byte, code int16, msg string) kmsg.DeleteShareGroupOffsetsResponseTopic {
	ot := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
	ot.Topic, ot.TopicID, ot.ErrorCode, ot.ErrorMessage = topic, id, code, kmsg.StringPtr(msg)
	return ot
}

// finishShareOffsetsDeletion removes the deleted topics from the group's
// deleting topics (GroupMetadataManager.completeDeleteShareGroupOffsets).
func (c *GroupCoordinator) finishShareOffsetsDeletion(ctx context.Context, group string, deleted []topicID) int16 {
	s, code := c.lockShard(group)
	if code != 0 {
		return code
	}
	g := s.shareGroups[group]
	if g == nil {
		s.mu.Unlock()
		return 0
	}
	p := g.partitions.clone()
	for _, t := range deleted {
		delete(p.deleting, t)
	}
	done := s.writeShareRecords([]shareRecord{newSharePartitionsRecord(g.id, p, c.image())}, true)
	s.mu.Unlock()
	return appendErrorCode(awaitAppend(ctx, done))
}

// lockEmptyShareGroup returns the empty share group id names (a new one
// if create and there is none), its shard locked, or why the offsets of id
// cannot be altered or deleted: share groups not served, INVALID_GROUP_ID,
// the shard's error, GROUP_ID_NOT_FOUND or NON_EMPTY_GROUP
// (ShareGroup.validateOffsetsAlterable).
func (c *GroupCoordinator) lockEmptyShareGroup(id string, create bool) (*shard, *shareGroup, *cgError) {
	switch {
	case c.cfg.Share.Persister == nil:
		return nil, nil, &cgError{code: unsupportedVersion}
	case id == "":
		return nil, nil, &cgError{code: invalidGroupID}
	}
	s, code := c.lockShard(id)
	if code != 0 {
		return nil, nil, &cgError{code: code}
	}
	g, e := s.getOrMaybeCreateShareGroup(id, create)
	if e == nil && !g.isEmpty() {
		e = cgErrorf(nonEmptyGroup, "%s", kerr.NonEmptyGroup.Description)
	}
	if e != nil {
		s.mu.Unlock()
		return nil, nil, e
	}
	return s, g, nil
}
