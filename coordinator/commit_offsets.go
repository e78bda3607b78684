package coordinator

import (
	"context"

	"github.com/strait-io/strait/coordinator/runtime"
)

// offsetCommit is an OffsetCommit or a TxnOffsetCommit, whatever its
// version: who commits, and the offsets in request order, each with its
// answer once commitOffsets returns.
type offsetCommit struct {
	group      string
	memberID   string
	instanceID *string
	generation int32
	// apiVersion is the request's version: OffsetCommit's (members of
	// consumer groups must use v9+) or TxnOffsetCommit's (the errors of a
	// refused verification depend on it).
	apiVersion int16
	// unknownGroup answers a commit with a generation to a group that
	// does not exist.
	unknownGroup int16
	// retentionMs is OffsetCommit v2-v4's retention, -1 for none.
	retentionMs int64
	// transactional commits are pending in producer's transaction
	// (TxnOffsetCommit).
	transactional   bool
	transactionalID string
	// addToTxn: the commit adds the group's partition to the transaction
	// (TxnOffsetCommit v5 under transaction.version 2, KIP-890 part 2)
	// rather than verifying it is in it.
	addToTxn bool
	producer runtime.Producer
	// forwardOnly is a mirror's group offset sync writing into a group
	// that may have live members (mirrormsg.ForwardOnlyCommitTag): no
	// member checks, and each partition is written only if its offset is
	// greater than the committed one, decided under the shard's lock.
	forwardOnly bool
	offsets     []partitionCommit
}

// partitionCommit is one partition's offset and answer.
type partitionCommit struct {
	topic     string
	partition int32
	metadata  *string
	// om has the offset, the leader epoch (-1 for none) and the commit
	// timestamp (-1 for now).
	om   offsetAndMetadata
	code int16
	// kept is the committed offset a forward-only commit left in place
	// (its offset was not greater), -1 when it was written or refused.
	kept int64
}

// codes returns a function that yields the partitions' answers in order,
// for building a response in the request's order.
func (oc *offsetCommit) codes() func() int16 {
	i := 0
	return func() int16 {
		i++
		return oc.offsets[i-1].code
	}
}

// commitOffsets validates and writes oc's offsets, and sets each
// partition's answer (OffsetMetadataManager.commitOffset and
// commitTransactionalOffset, with KafkaApis' topic checks):
//   - topics missing from the metadata image and partitions past a
//     topic's count answer UNKNOWN_TOPIC_OR_PARTITION, the others the
//     request's error if it has one;
//   - metadata over offset.metadata.max.bytes answers
//     OFFSET_METADATA_TOO_LARGE;
//   - the other offsets are written in one batch, acks=all, before it
//     returns: plain records taking effect at once, or the producer's
//     transactional batch whose offsets are pending until its marker. The
//     effect is eager: a failed append reloads the shard.
func (c *GroupCoordinator) commitOffsets(ctx context.Context, oc *offsetCommit) {
	img := c.image()
	var valid []*partitionCommit
	for i := range oc.offsets {
		pc := &oc.offsets[i]
		topic := img.Topics[pc.topic]
		if topic == nil || pc.partition < 0 || int(pc.partition) >= len(topic.Partitions) {
			pc.code = unknownTopicOrPartition
			continue
		}
		valid = append(valid, pc)
	}
	setAll := func(code int16) {
		for _, pc := range valid {
			pc.code = code
		}
	}
	switch {
	case len(valid) == 0:
		return
	case oc.transactional && oc.group == "":
		setAll(invalidGroupID)
		return
	case oc.transactional && (oc.producer.ID < 0 || oc.producer.Epoch < 0):
		setAll(invalidRequest)
		return
	}

	verified, code := c.verifyTxnCommit(ctx, oc)
	if code != 0 {
		setAll(code)
		return
	}
	s, code := c.lockShard(oc.group)
	if code != 0 {
		if verified != nil {
			verified.done(oc.producer.ID)
		}
		setAll(code)
		return
	}
	if !verified.stillVerified(s, oc.producer.ID) {
		s.mu.Unlock()
		setAll(invalidTxnState)
		return
	}
	code, partitionCode := s.validateOffsetCommit(oc)
	if code != 0 {
		s.mu.Unlock()
		setAll(code)
		return
	}
	if g := s.group(oc.group); g != nil && !oc.transactional && (g.is(stateStable) || g.is(statePreparingRebalance)) {
		// A commit keeps a classic member's session alive.
		if m := g.member(oc.memberID); m != nil {
			s.rescheduleHeartbeat(g, m)
		}
	}

	now := s.nowMs()
	var recs []coordRecord
	var written []*partitionCommit
	for _, pc := range valid {
		if partitionCode != nil {
			if pc.code = partitionCode(topicID(img.Topics[pc.topic].ID), pc.partition); pc.code != 0 {
				continue
			}
		}
		if oc.forwardOnly {
			// The compare of the compare-and-set: under s.mu, as every
			// commit's put, so no commit lands between it and the put.
			if cur, ok := s.offsets.get(oc.group, pc.topic, pc.partition); ok && cur.offset >= pc.om.offset {
				pc.kept = cur.offset
				continue
			}
		}
		om := pc.om
		if pc.metadata != nil {
			om.metadata = *pc.metadata
		}
		if javaLength(om.metadata) > int(c.cfg.OffsetMetadataMaxBytes) {
			pc.code = offsetMetadataTooLarge
			continue
		}
		if om.commitTimestamp == -1 {
			om.commitTimestamp = now
		}
		om.expireTimestamp = -1
		if oc.retentionMs != -1 {
			om.expireTimestamp = now + oc.retentionMs
		}
		om.recordOffset = s.takeRecordOffset()
		recs = append(recs, newOffsetCommitRecord(oc.group, pc.topic, pc.partition, om))
		if oc.transactional {
			s.pending.stage(oc.producer.ID, oc.group, pc.topic, pc.partition, om)
		} else {
			s.offsets.put(oc.group, pc.topic, pc.partition, om)
		}
		written = append(written, pc)
	}
	if len(recs) == 0 {
		s.mu.Unlock()
		return
	}
	done := make(chan error, 1)
	report := func(err error) { done <- err }
	if oc.transactional {
		s.writer.AppendTransactional(oc.producer, runtimeRecords(recs), true, report)
	} else {
		s.writer.Append(runtimeRecords(recs), true, report)
	}
	s.mu.Unlock()

	if code := appendErrorCode(awaitAppend(ctx, done)); code != 0 {
		for _, pc := range written {
			pc.code = code
		}
	}
}
