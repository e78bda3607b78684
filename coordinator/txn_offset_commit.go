package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/runtime"
)

// TxnOffsetCommit: v0-5
//
// Behavior (KafkaApis.handleTxnOffsetCommitRequest,
// GroupCoordinatorService.commitTransactionalOffsets,
// OffsetMetadataManager.commitTransactionalOffset):
//   - Topics missing from the metadata image and partitions past a topic's
//     count answer UNKNOWN_TOPIC_OR_PARTITION; the others INVALID_GROUP_ID
//     for an empty group id, and INVALID_REQUEST without a producer (id or
//     epoch below 0: a transactional batch needs one; Kafka's runtime would
//     write such offsets as a plain commit).
//   - Who may commit (KIP-447 fencing of zombies by group generation): an
//     unknown group with generation -1 is created as a simple group, with
//     a generation it answers ILLEGAL_GENERATION; a member id, instance id
//     or generation (v3+) is checked as OffsetCommit checks it
//     (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION), but
//     without them any group accepts the commit, and a rebalance in
//     progress does not refuse it.
//   - Metadata over offset.metadata.max.bytes: OFFSET_METADATA_TOO_LARGE
//     for that partition.
//   - The offsets are written as OffsetCommit records in one transactional
//     batch of the producer (its id and epoch; the log fences an older
//     epoch with INVALID_PRODUCER_EPOCH), acks=all, before the answer.
//     They are pending under the producer id: OffsetFetch does not return
//     them until the transaction's COMMIT marker makes them the group's
//     offsets, and its ABORT marker drops them (CompleteTransaction).
//
// Version notes:
//   - v2: per-partition CommittedLeaderEpoch (KIP-320).
//   - v3: GenerationID, MemberID, GroupInstanceID (KIP-447); flexible.
//   - v4: TRANSACTION_ABORTABLE (KIP-890) when the verification finds the
//     group's partition outside the transaction; v0-3 get INVALID_TXN_STATE.
//   - v5 (KIP-890 part 2): with transaction.version 2 finalized, the
//     group's partition is added to the transaction by the commit itself
//     (the producer sends no AddOffsetsToTxn), whether or not
//     transaction.partition.verification.enable is on (txn_verify.go).
func (c *GroupCoordinator) TxnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	oc := offsetCommit{
		group:           req.Group,
		generation:      -1,
		unknownGroup:    illegalGeneration,
		retentionMs:     -1,
		transactional:   true,
		transactionalID: req.TransactionalID,
		producer:        runtime.Producer{ID: req.ProducerID, Epoch: req.ProducerEpoch},
		addToTxn:        req.Version >= 5 && c.cfg.Image().TransactionVersion2(),
		apiVersion:      req.Version,
	}
	if req.Version >= 3 {
		oc.generation, oc.memberID, oc.instanceID = req.Generation, req.MemberID, req.InstanceID
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			om := offsetAndMetadata{offset: p.Offset, leaderEpoch: -1, commitTimestamp: -1}
			if req.Version >= 2 {
				om.leaderEpoch = p.LeaderEpoch
			}
			oc.offsets = append(oc.offsets, partitionCommit{topic: t.Topic, partition: p.Partition, metadata: p.Metadata, om: om})
		}
	}
	c.commitOffsets(ctx, &oc)

	resp := kmsg.NewPtrTxnOffsetCommitResponse()
	resp.Version = req.Version
	codes := oc.codes()
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, codes()
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
