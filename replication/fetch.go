package replication

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/storage"
)

// Fetch: v4-18 (the wire layer gates versions)
//
// Behavior (Kafka's KafkaApis.handleFetchRequest, ReplicaManager.fetchMessages,
// DelayedFetch, FetchSession):
//   - Fetch sessions per KIP-227: epoch 0 creates a session from the
//     response, epoch -1 fetches without one; an incremental fetch names
//     only changed partitions and gets back only partitions with news.
//     Unknown session: FETCH_SESSION_ID_NOT_FOUND; wrong epoch:
//     INVALID_FETCH_SESSION_EPOCH; topic-id usage changed across v13:
//     FETCH_SESSION_TOPIC_ID_ERROR.
//   - Per partition: CurrentLeaderEpoch fencing (FENCED_LEADER_EPOCH,
//     UNKNOWN_LEADER_EPOCH); LastFetchedEpoch divergence (KIP-320/595):
//     DivergingEpoch and no data; OFFSET_OUT_OF_RANGE; consumers read up to
//     the high watermark (read_uncommitted) or the last stable offset
//     (read_committed, with the aborted transactions), followers up to the
//     log end offset.
//   - PartitionMaxBytes and MaxBytes bound the data; the first partition
//     with data returns at least one whole batch.
//   - Long poll: with less than MinBytes available the request waits up
//     to MaxWaitMillis, woken by appends and high watermark moves of its
//     partitions; errors and diverging epochs answer at once.
//   - Record data stays in the segment files: Records is nil and the data
//     is in FetchResult.Slices. PreferredReadReplica is always -1.
//
// Version notes: v7 sessions; v9 CurrentLeaderEpoch; v11 rack (consumers
// may fetch from followers); v12 LastFetchedEpoch, DivergingEpoch,
// CurrentLeader; v13 topic ids; v15 ReplicaState replaces ReplicaID; v16
// NodeEndpoints.

// fetchPartition is one partition's fetch parameters (Kafka's
// FetchRequest.PartitionData with its TopicIdPartition).
type fetchPartition struct {
	key                sessionKey
	topic              string // "" when a v13 topic id does not resolve
	topicID            [16]byte
	partition          int32
	fetchOffset        int64
	logStartOffset     int64 // the follower's, -1 from consumers
	maxBytes           int32
	currentLeaderEpoch int32
	lastFetchedEpoch   int32
}

func (fp *fetchPartition) tp() storage.TopicPartition {
	return storage.TopicPartition{Topic: fp.topic, Partition: fp.partition}
}

// fetchParams are the request-level parameters (Kafka's FetchParams).
type fetchParams struct {
	version   int16
	replicaID int32
	// replicaEpoch is the follower's broker epoch (ReplicaState.Epoch,
	// v15+), -1 when not sent.
	replicaEpoch  int64
	maxWait       time.Duration
	minBytes      int32
	maxBytes      int32
	isolation     storage.FetchIsolation
	requireLeader bool
}

func (p *fetchParams) isFromFollower() bool { return p.replicaID >= 0 }

func (r *ReplicaManager) fetchParams(req *kmsg.FetchRequest) fetchParams {
	replicaID, replicaEpoch := req.ReplicaID, int64(-1)
	if req.Version >= 15 {
		replicaID, replicaEpoch = req.ReplicaState.ID, req.ReplicaState.Epoch
	}
	p := fetchParams{version: req.Version, replicaID: replicaID, replicaEpoch: replicaEpoch,
		maxWait: time.Duration(req.MaxWaitMillis) * time.Millisecond}
	limit := r.cfg.FetchMaxBytes
	switch {
	case replicaID >= 0:
		p.isolation, limit = storage.FetchLogEnd, r.cfg.ReplicaFetchResponseMaxBytes
	case req.IsolationLevel == 1:
		p.isolation = storage.FetchTxnCommitted
	default:
		p.isolation = storage.FetchHighWatermark
	}
	p.maxBytes = min(max(req.MaxBytes, 0), limit)
	p.minBytes = min(max(req.MinBytes, 0), p.maxBytes)
	// Consumers from v11 carry client metadata and may read from a
	// follower (KIP-392); followers and older consumers need the leader
	// (Kafka's FetchParams.fetchOnlyLeader).
	p.requireLeader = replicaID >= 0 || req.Version < 11
	return p
}

// Fetch answers a Fetch request, waiting up to MaxWaitMillis for MinBytes.
func (r *ReplicaManager) Fetch(ctx context.Context, req *kmsg.FetchRequest) *FetchResult {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	out := &FetchResult{Resp: resp}
	img := r.currentImage()
	params := r.fetchParams(req)
	parts, forget := requestPartitions(req, img)
	if !knowsFetchPartitions(img, parts) && r.awaitMetadata(ctx) {
		img = r.currentImage()
		parts, forget = requestPartitions(req, img)
	}
	fc := r.sessions.newContext(req.Version, req.SessionID, req.SessionEpoch, params.isFromFollower(), parts, forget, img)
	if fc.kind == sessionErrorContext {
		resp.ErrorCode = fc.errCode
		return out
	}
	results := r.fetchAuthorized(ctx, &params, fc.parts)
	if params.isFromFollower() {
		r.recordLeaderThrottled(fc.parts, results)
	}
	entries := make([]fetchEntry, len(fc.parts))
	for i := range fc.parts {
		entries[i] = fetchEntry{fp: fc.parts[i], res: results[i]}
	}
	entries, resp.SessionID, resp.ErrorCode = fc.generate(r.sessions, entries)
	r.buildFetchResponse(out, &params, entries, r.currentImage(), reqctx.From(ctx).Listener)
	return out
}

// fetchAuthorized reads the partitions the client may read (reqctx's
// ReadAllowed; all without an authorizer) and answers the others
// TOPIC_AUTHORIZATION_FAILED without reading them, so they neither use
// the response's byte budget nor hold the long poll, yet stay in the
// fetch session: once an ACL allows them their data flows without the
// client naming them again (KafkaApis.handleFetchRequest authorizes the
// partitions of the fetch context).
func (r *ReplicaManager) fetchAuthorized(ctx context.Context, params *fetchParams, parts []fetchPartition) []readResult {
	allowed := reqctx.ReadAllowed(ctx)
	if allowed == nil {
		return r.fetchMessages(ctx, params, parts)
	}
	// One check per partition; the split is made only at the first
	// refusal, so a request the client may read whole allocates nothing.
	var (
		results []readResult
		read    []fetchPartition
		at      []int
	)
	for i := range parts {
		if allowed(parts[i].topic, parts[i].topicID) {
			if results != nil {
				read, at = append(read, parts[i]), append(at, i)
			}
			continue
		}
		if results == nil {
			results = make([]readResult, len(parts))
			read = append(read, parts[:i]...)
			for j := range i {
				at = append(at, j)
			}
		}
		results[i] = errorRead(kerr.TopicAuthorizationFailed.Code)
	}
	if results == nil {
		return r.fetchMessages(ctx, params, parts)
	}
	if len(read) > 0 {
		for k, res := range r.fetchMessages(ctx, params, read) {
			results[at[k]] = res
		}
	}
	return results
}

// requestPartitions reads the request's partitions, deduplicated with the
// last occurrence winning in the first one's place (Kafka keeps them in a
// LinkedHashMap), and the forgotten partitions.
func requestPartitions(req *kmsg.FetchRequest, img *raftmeta.Image) ([]fetchPartition, []sessionKey) {
	usesIDs := req.Version >= 13
	var parts []fetchPartition
	seen := map[sessionKey]int{}
	for i := range req.Topics {
		rt := &req.Topics[i]
		topic := rt.Topic
		if usesIDs {
			topic = ""
			if t, ok := img.TopicsByID[raftmeta.Uuid(rt.TopicID)]; ok {
				topic = t.Name
			}
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			fp := fetchPartition{
				key:                newSessionKey(usesIDs, rt.TopicID, rt.Topic, rp.Partition),
				topic:              topic,
				topicID:            rt.TopicID,
				partition:          rp.Partition,
				fetchOffset:        rp.FetchOffset,
				logStartOffset:     rp.LogStartOffset,
				maxBytes:           rp.PartitionMaxBytes,
				currentLeaderEpoch: rp.CurrentLeaderEpoch,
				lastFetchedEpoch:   rp.LastFetchedEpoch,
			}
			if req.Version < 9 {
				fp.currentLeaderEpoch = -1
			}
			if req.Version < 12 {
				fp.lastFetchedEpoch = -1
			}
			if k, dup := seen[fp.key]; dup {
				parts[k] = fp
				continue
			}
			seen[fp.key] = len(parts)
			parts = append(parts, fp)
		}
	}
	var forget []sessionKey
	for i := range req.ForgottenTopics {
		ft := &req.ForgottenTopics[i]
		for _, p := range ft.Partitions {
			forget = append(forget, newSessionKey(usesIDs, ft.TopicID, ft.Topic, p))
		}
	}
	return parts, forget
}

func newSessionKey(usesIDs bool, id [16]byte, topic string, partition int32) sessionKey {
	if usesIDs {
		return sessionKey{topicID: id, partition: partition}
	}
	return sessionKey{topic: topic, partition: partition}
}

// buildFetchResponse lays the entries out as response topics, consecutive
// partitions of one topic sharing an entry (Kafka's FetchResponse.of), and
// puts each partition's data in the matching Slices cell.
func (r *ReplicaManager) buildFetchResponse(out *FetchResult, params *fetchParams, entries []fetchEntry, img *raftmeta.Image, listener string) {
	resp := out.Resp
	leaders := map[int32]bool{}
	for i := range entries {
		fp, res := &entries[i].fp, &entries[i].res
		n := len(resp.Topics)
		if n == 0 || resp.Topics[n-1].Topic != fp.topic || resp.Topics[n-1].TopicID != fp.topicID {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic, rt.TopicID = fp.topic, fp.topicID
			resp.Topics = append(resp.Topics, rt)
			out.Slices = append(out.Slices, nil)
			n++
		}
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.Partition = fp.partition
		rp.ErrorCode = res.errCode
		rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = res.hw, res.lso, res.logStart
		if res.diverging != nil {
			rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = res.diverging.epoch, res.diverging.endOffset
		}
		for _, t := range res.info.AbortedTxns {
			at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
			at.ProducerID, at.FirstOffset = t.ProducerID, t.FirstOffset
			rp.AbortedTransactions = append(rp.AbortedTransactions, at)
		}
		if params.version >= 12 && res.needsCurrentLeader() {
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = currentLeader(img, fp.tp())
			if rp.CurrentLeader.LeaderID >= 0 {
				leaders[rp.CurrentLeader.LeaderID] = true
			}
		}
		resp.Topics[n-1].Partitions = append(resp.Topics[n-1].Partitions, rp)
		out.Slices[n-1] = append(out.Slices[n-1], res.info.Records)
		if res.info.Records.Size > 0 && !params.isFromFollower() {
			r.metrics.BytesOut(fp.topic, int64(res.info.Records.Size))
		}
	}
	if params.version >= 16 {
		for id := range leaders {
			if ep, b, ok := leaderEndpoint(img, id, listener); ok {
				nb := kmsg.NewFetchResponseBroker()
				nb.NodeID, nb.Host, nb.Port = id, ep.Host, ep.Port
				if b.Rack != "" {
					rack := b.Rack
					nb.Rack = &rack
				}
				resp.Brokers = append(resp.Brokers, nb)
			}
		}
	}
}
