package coordinator

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

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
// memory (CoordinatorLoaderImpl): offset commits and group metadata,
// tombstones deleting. It runs before the shard serves anything, so it
// needs no lock; unload leaves groups alone until it returned (loaded).
func (s *shard) load(ctx context.Context) error {
	dec := record.NewDecompressor()
	var from int64
	for {
		data, next, end, err := s.c.cfg.Log.Read(ctx, s.partition, from, loadReadBytes)
		if err != nil {
			return fmt.Errorf("reading %s-%d at offset %d: %w", OffsetsTopic, s.partition, from, err)
		}
		it := record.NewIter(data)
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			if b.LastOffset() < from {
				continue // Read starts at the batch holding from
			}
			if b.BaseOffset() >= end {
				break
			}
			if err := s.replayBatch(dec, b); err != nil {
				return fmt.Errorf("replaying %s-%d batch at offset %d: %w", OffsetsTopic, s.partition, b.BaseOffset(), err)
			}
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("reading %s-%d at offset %d: %w", OffsetsTopic, s.partition, from, err)
		}
		if next >= end {
			return nil
		}
		if next <= from {
			return fmt.Errorf("reading %s-%d made no progress at offset %d (log end offset %d)", OffsetsTopic, s.partition, from, end)
		}
		from = next
	}
}

func (s *shard) replayBatch(dec *record.Decompressor, b record.Batch) error {
	if b.IsControl() {
		return nil // transaction markers; transactional offset commits are not supported yet
	}
	if b.IsTransactional() {
		s.log.Warn("skipping a transactional batch: transactional offset commits are not supported yet",
			"offset", b.BaseOffset(), "producer_id", b.ProducerID())
		return nil
	}
	rr, closeRecords, err := dec.OpenRecords(b, maxDecompressedBatch)
	if err != nil {
		return err
	}
	defer closeRecords()
	for rr.Remaining() > 0 {
		rec, err := rr.Next(true)
		if err != nil {
			return err
		}
		d, err := decodeRecord(rec.Key, rec.Value, rec.ValueLen < 0)
		if errors.Is(err, errUnknownRecordType) {
			s.log.Debug("skipping a record of a type this coordinator does not read", "err", err)
			continue
		}
		if err != nil {
			return err
		}
		s.replay(d)
	}
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
