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
// metadata, tombstones deleting. It runs before the shard serves anything,
// so it needs no lock; unload leaves groups alone until it returned
// (loaded). Transaction markers are not asked for: with transactional
// batches skipped there is no pending offset for them to complete.
func (s *shard) load(ctx context.Context) error {
	l := runtime.Loader{
		Log:           s.c.cfg.Log,
		Topic:         OffsetsTopic,
		ReadBytes:     loadReadBytes,
		MaxBatchBytes: maxDecompressedBatch,
		Accept:        s.acceptBatch,
	}
	return l.Replay(ctx, s.partition, runtime.Playback{Record: s.replayRecord})
}

// acceptBatch tells the loader whether to replay a data batch: not a
// transactional one, as transactional offset commits are not supported yet
// (control batches, the transaction markers, the loader skips itself while
// load asks for no markers).
func (s *shard) acceptBatch(b record.Batch) bool {
	if b.IsTransactional() {
		s.log.Warn("skipping a transactional batch: transactional offset commits are not supported yet",
			"offset", b.BaseOffset(), "producer_id", b.ProducerID())
		return false
	}
	return true
}

// replayRecord decodes and replays one record read while loading,
// skipping record types this coordinator does not read. Every batch it
// sees is non-transactional (acceptBatch), so the batch context and the
// record's offset do not matter yet; transactional offset commits (KIP-447)
// will keep a record of a transactional batch pending under its producer
// id until the marker (OffsetMetadataManager.replay).
func (s *shard) replayRecord(_ runtime.BatchContext, _ int64, rec record.Record) error {
	d, err := decodeRecord(rec.Key, rec.Value, rec.ValueLen < 0)
	if errors.Is(err, errUnknownRecordType) {
		s.log.Debug("skipping a record of a type this coordinator does not read", "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	s.replay(d)
	return nil
}

// replay applies one record (GroupCoordinatorShard.replay).
func (s *shard) replay(d decodedRecord) {
	switch {
	case d.offsetKey != nil:
		k := d.offsetKey
		if d.offsetValue == nil {
			s.offsets.remove(k.Group, k.Topic, k.Partition)
			return
		}
		// A group that only commits offsets (no membership) still exists:
		// an Empty "simple" group without a protocol type.
		s.getOrCreateGroup(k.Group)
		v := d.offsetValue
		s.offsets.put(k.Group, k.Topic, k.Partition, offsetAndMetadata{
			offset:          v.Offset,
			leaderEpoch:     v.LeaderEpoch,
			metadata:        v.Metadata,
			commitTimestamp: v.CommitTimestamp,
			expireTimestamp: v.ExpireTimestamp,
		})
	case d.groupKey != nil:
		if d.groupValue == nil {
			s.removeGroup(d.groupKey.Group)
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
