package coordinator

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/storage/record"
)

const (
	// loadReadBytes is how much each Read asks for while loading.
	loadReadBytes = 1 << 20
	// maxDecompressedBatch bounds a compressed batch read while loading
	// (the coordinator writes uncompressed batches; others may not).
	maxDecompressedBatch = 64 << 20
)

// load replays the partition's records up to its log end offset into
// memory (CoordinatorLoaderImpl, runtime.Loader): offset commits and group
// metadata, tombstones deleting; the offset commits of transactional
// batches stay pending under their producer until the transaction's
// COMMIT or ABORT marker, and a transaction still open at the log end
// stays pending until its marker is written. It runs before the shard
// serves anything, so it needs no lock; unload leaves groups alone until
// it returned (loaded).
func (s *shard) load(ctx context.Context) error {
	l := runtime.Loader{
		Log:           s.c.cfg.Log,
		Topic:         OffsetsTopic,
		ReadBytes:     loadReadBytes,
		MaxBatchBytes: maxDecompressedBatch,
	}
	return l.Replay(ctx, s.partition, runtime.Playback{Record: s.replayRecord, EndTxnMarker: s.replayEndTxnMarker})
}

// replayRecord decodes and replays one record read while loading,
// skipping record types this coordinator does not read.
func (s *shard) replayRecord(b runtime.BatchContext, offset int64, rec record.Record) error {
	s.nextRecordOffset = offset + 1
	d, err := decodeRecordAt(rec.Key, rec.Value, rec.ValueLen < 0, s.nowMs())
	if errors.Is(err, errUnknownRecordType) {
		s.log.Debug("skipping a record of a type this coordinator does not read", "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	if d.consumer != nil {
		return s.replayConsumer(*d.consumer)
	}
	if d.share != nil {
		return s.replayShare(*d.share)
	}
	pid := noProducer
	if b.Transactional {
		pid = b.ProducerID
	}
	s.replay(d, pid, offset)
	return nil
}

// replayEndTxnMarker ends a producer's transaction as its marker, read
// while loading, says (OffsetMetadataManager.replayEndTransactionMarker).
func (s *shard) replayEndTxnMarker(m runtime.EndTxnMarker) error {
	s.nextRecordOffset = m.Offset + 1
	s.endTxn(m.ProducerID, m.Commit, m.Offset)
	return nil
}

// noProducer is the producer of the records the shard writes for itself
// (RecordBatch.NO_PRODUCER_ID).
const noProducer = record.NoProducerID

// replay applies one record at recordOffset, written by producer pid's
// transaction or, with pid noProducer, by the shard itself
// (GroupCoordinatorShard.replay, OffsetMetadataManager.replay).
func (s *shard) replay(d decodedRecord, pid int64, recordOffset int64) {
	switch {
	case d.offsetKey != nil:
		k := d.offsetKey
		if d.offsetValue == nil {
			s.removeOffset(k.Group, k.Topic, k.Partition)
			return
		}
		// A group that only commits offsets (no membership) still exists:
		// an Empty "simple" group without a protocol type.
		if s.consumerGroups[k.Group] == nil {
			s.getOrCreateGroup(k.Group)
		}
		v := d.offsetValue
		om := offsetAndMetadata{
			offset:          v.Offset,
			leaderEpoch:     v.LeaderEpoch,
			metadata:        v.Metadata,
			commitTimestamp: v.CommitTimestamp,
			expireTimestamp: v.ExpireTimestamp,
			recordOffset:    recordOffset,
		}
		if pid != noProducer {
			s.pending.stage(pid, k.Group, k.Topic, k.Partition, om)
			return
		}
		s.offsets.put(k.Group, k.Topic, k.Partition, om)
	case d.groupKey != nil:
		if d.groupValue == nil {
			s.removeGroup(d.groupKey.Group)
			s.holdOrphanedOffsets(d.groupKey.Group)
			return
		}
		s.groups[d.groupKey.Group] = groupFromRecord(d.groupKey.Group, d.groupValue)
	}
}

// groupFromRecord rebuilds a group from its GroupMetadataValue
// (GroupMetadataManager.replay): Stable if it has members, else Empty;
// each member supports only the selected protocol, with its subscription
// as metadata.
func groupFromRecord(id string, v *kmsg.GroupMetadataValue) *classicGroup {
	state := stateEmpty
	if len(v.Members) > 0 {
		state = stateStable
	}
	g := newClassicGroup(id, state, v.CurrentStateTimestamp)
	g.generationID = v.Generation
	g.protocolType = v.ProtocolType
	if v.Protocol != nil {
		g.protocolName = *v.Protocol
	}
	if v.Leader != nil {
		g.leaderID = *v.Leader
	}
	for _, mm := range v.Members {
		rebalance := mm.RebalanceTimeoutMillis
		if rebalance == -1 {
			rebalance = mm.SessionTimeoutMillis
		}
		g.add(&member{
			id:                 mm.MemberID,
			instanceID:         mm.InstanceID,
			clientID:           mm.ClientID,
			clientHost:         mm.ClientHost,
			rebalanceTimeoutMs: rebalance,
			sessionTimeoutMs:   mm.SessionTimeoutMillis,
			protocolType:       v.ProtocolType,
			protocols:          []kmsg.JoinGroupRequestProtocol{{Name: g.protocolName, Metadata: mm.Subscription}},
			assignment:         mm.Assignment,
		}, nil)
	}
	g.computeSubscribedTopics()
	return g
}
