package replication

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// ListOffsets: v1-11 (the wire layer gates versions)
//
// Behavior (Kafka's ReplicaManager.fetchOffset, Partition.fetchOffsetForTimestamp):
//   - Timestamp -1 (latest): consumers get the high watermark
//     (read_uncommitted) or last stable offset (read_committed), replicas
//     (ReplicaID >= 0) the log end offset, with the current leader epoch.
//   - -2 earliest, -3 max timestamp (v7+, KIP-734), -4 earliest local (v8+,
//     KIP-405), -5 latest tiered (v9+, KIP-1005; nothing is tiered: -1);
//     other negative values or a special value below its version:
//     UNSUPPORTED_VERSION.
//   - A timestamp finds the first record at or after it; a consumer is not
//     shown an offset at or past what it may fetch (answer -1/-1).
//   - CurrentLeaderEpoch fencing; a partition listed twice: INVALID_REQUEST;
//     only the leader answers, except to ReplicaID -2 (debugging).
//   - Right after an election, while the high watermark is below the
//     epoch's start, consumers get OFFSET_NOT_AVAILABLE (v5+, else
//     LEADER_NOT_AVAILABLE).
//
// Version notes: v2 IsolationLevel; v4 CurrentLeaderEpoch, LeaderEpoch; v6
// flexible; v7-v9 special timestamps; v10 TimeoutMillis (ignored: no remote
// storage).

const debuggingReplicaID = -2

var timestampMinVersion = map[int64]int16{
	storage.EarliestTimestamp:      1,
	storage.LatestTimestamp:        1,
	storage.MaxTimestamp:           7,
	storage.EarliestLocalTimestamp: 8,
	storage.LatestTieredTimestamp:  9,
}

// ListOffsets answers offsets by timestamp.
func (r *ReplicaManager) ListOffsets(ctx context.Context, req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	img := r.currentImage()
	counts := map[storage.TopicPartition]int{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			counts[storage.TopicPartition{Topic: t.Topic, Partition: p.Partition}]++
		}
	}
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, rp := range t.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			tp := storage.TopicPartition{Topic: t.Topic, Partition: rp.Partition}
			switch {
			case counts[tp] > 1:
				sp.ErrorCode = kerr.InvalidRequest.Code
			case timestampUnsupported(rp.Timestamp, req.Version):
				sp.ErrorCode = kerr.UnsupportedVersion.Code
			default:
				r.listOffset(req, img, tp, &rp, &sp)
			}
			rt.Partitions = append(rt.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func timestampUnsupported(ts int64, version int16) bool {
	if ts >= 0 {
		return false
	}
	v, ok := timestampMinVersion[ts]
	return !ok || version < v
}

func (r *ReplicaManager) listOffset(req *kmsg.ListOffsetsRequest, img *raftmeta.Image, tp storage.TopicPartition, rp *kmsg.ListOffsetsRequestTopicPartition, sp *kmsg.ListOffsetsResponseTopicPartition) {
	fail := func(err error) {
		sp.ErrorCode = errorCode(err)
		if sp.ErrorCode == kerr.OffsetNotAvailable.Code && req.Version < 5 {
			sp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
	}
	p, err := r.getPartitionOrError(tp, img)
	if err != nil {
		fail(err)
		return
	}
	current := int32(-1)
	if req.Version >= 4 {
		current = rp.CurrentLeaderEpoch
	}
	log, st, err := p.localLogWithEpoch(current, req.ReplicaID != debuggingReplicaID)
	if err != nil {
		fail(err)
		return
	}
	isClient := req.ReplicaID < 0 && req.ReplicaID != debuggingReplicaID
	lastFetchable := log.LogEndOffset()
	if isClient {
		lastFetchable = log.HighWatermark()
		if req.IsolationLevel == 1 {
			lastFetchable = log.LastStableOffset()
		}
	}
	// After an election the high watermark may lag the epoch's start;
	// answering from it could go backwards (Kafka's OffsetNotAvailable).
	var lagging error
	if isClient && p.epochStartOffset(st) > log.HighWatermark() {
		lagging = kerr.OffsetNotAvailable
	}
	switch rp.Timestamp {
	case storage.LatestTimestamp:
		if lagging != nil {
			fail(lagging)
			return
		}
		sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, lastFetchable, st.leaderEpoch
		return
	case storage.EarliestTimestamp, storage.EarliestLocalTimestamp:
		found, _, err := log.FetchOffsetByTimestamp(rp.Timestamp)
		if err != nil {
			fail(err)
			return
		}
		sp.Timestamp, sp.Offset, sp.LeaderEpoch = found.Timestamp, found.Offset, found.LeaderEpoch
		return
	}
	found, ok, err := log.FetchOffsetByTimestamp(rp.Timestamp)
	if err != nil {
		fail(err)
		return
	}
	if !ok || found.Offset >= lastFetchable {
		if lagging != nil {
			fail(lagging)
			return
		}
		sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
		return
	}
	sp.Timestamp, sp.Offset, sp.LeaderEpoch = found.Timestamp, found.Offset, found.LeaderEpoch
}
