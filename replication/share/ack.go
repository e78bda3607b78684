package share

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// ShareAcknowledge: v1-2 (the wire layer gates versions)
//
// Behavior (Kafka's KafkaApis.handleShareAcknowledgeRequest,
// SharePartitionManager.acknowledge):
//   - GroupId and MemberId must be set; the share session must exist
//     (SHARE_SESSION_NOT_FOUND) at the request's epoch
//     (INVALID_SHARE_SESSION_EPOCH; epoch 0 always is: only a ShareFetch
//     opens a session), which moves it. Epoch -1 acknowledges, then closes
//     the session and gives back the member's other records.
//   - Per partition: batches in order, well formed, with known types
//     (INVALID_REQUEST); the partition's share partition on this broker
//     (UNKNOWN_TOPIC_OR_PARTITION, or NOT_LEADER_OR_FOLLOWER with the
//     current leader); records the member holds (INVALID_RECORD_STATE).
//     The answer waits until the share coordinator stored the new state.
//
// Version notes: v1 (Kafka 4.1) is the first stable version; v2 (Kafka
// 4.2) IsRenewAck and RENEW (type 4) acknowledgements, which restart the
// acquisition lock, and AcquisitionLockTimeoutMs (KIP-1222).

// ShareAcknowledge answers a ShareAcknowledge request.
func (m *Manager) ShareAcknowledge(ctx context.Context, req *kmsg.ShareAcknowledgeRequest) *kmsg.ShareAcknowledgeResponse {
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	group, member := deref(req.GroupID), deref(req.MemberID)
	resp.AcquisitionLockTimeoutMillis = int32(m.groupConfig(group).RecordLockDuration.Milliseconds())
	if !validIDs(group, member) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	key := sessionKey{group, member}
	if code := m.sessions.acknowledged(key, req.ShareSessionEpoch); code != nil {
		resp.ErrorCode = code.Code
		return resp
	}
	var acks []ackPartition
	seen := map[TopicPartition]int{}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			ap := ackPartition{tp: TopicPartition{rt.TopicID, rp.Partition}, batches: ackBatches(rp.AcknowledgementBatches, func(b kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch) (int64, int64, []int8) {
				return b.FirstOffset, b.LastOffset, b.AcknowledgeTypes
			})}
			if i, dup := seen[ap.tp]; dup {
				acks[i] = ap
				continue
			}
			seen[ap.tp] = len(acks)
			acks = append(acks, ap)
		}
	}
	acked := m.acknowledgeAll(ctx, group, member, acks, req.Version >= 2 && req.IsRenewAck)
	if req.ShareSessionEpoch == finalEpoch {
		m.closeSession(key, nil)
	}

	listener := reqctx.From(ctx).Listener
	topics := map[[16]byte]int{}
	leaders := map[int32]*Endpoint{}
	for _, a := range acked {
		ti, ok := topics[a.tp.TopicID]
		if !ok {
			ti = len(resp.Topics)
			topics[a.tp.TopicID] = ti
			rt := kmsg.NewShareAcknowledgeResponseTopic()
			rt.TopicID = a.tp.TopicID
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
		rp.Partition = a.tp.Partition
		rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
		if a.err != nil {
			rp.ErrorCode = a.err.Code
			if needsLeader(a.err) {
				h := m.logs.CurrentLeader(a.tp, listener)
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = h.LeaderID, h.LeaderEpoch
				if h.LeaderID >= 0 && h.Endpoint != nil {
					leaders[h.LeaderID] = h.Endpoint
				}
			}
		}
		resp.Topics[ti].Partitions = append(resp.Topics[ti].Partitions, rp)
	}
	for _, id := range sortedIDs(leaders) {
		ep := leaders[id]
		ne := kmsg.NewShareAcknowledgeResponseNodeEndpoint()
		ne.NodeID, ne.Host, ne.Port, ne.Rack = id, ep.Host, ep.Port, ep.Rack
		resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
	}
	return resp
}

// ackPartition is one partition's acknowledgement batches.
type ackPartition struct {
	tp      TopicPartition
	batches []AckBatch
}

// ackResult is how one partition's acknowledgements ended: nil is success.
type ackResult struct {
	tp  TopicPartition
	err *kerr.Error
}

// ackBatches converts the request batches of either API.
func ackBatches[B any](in []B, get func(B) (int64, int64, []int8)) []AckBatch {
	out := make([]AckBatch, 0, len(in))
	for _, b := range in {
		first, last, types := get(b)
		ab := AckBatch{First: first, Last: last, Types: make([]AckType, len(types))}
		for i, t := range types {
			ab.Types[i] = AckType(t)
		}
		out = append(out, ab)
	}
	return out
}

// checkAckBatches is Kafka's KafkaApis.validateAcknowledgementBatches: each
// batch well formed, none starting before the previous one ends, types
// ACCEPT..REJECT and GAP, RENEW too when the request says IsRenewAck.
func checkAckBatches(batches []AckBatch, renew bool) *kerr.Error {
	prevEnd := int64(-1)
	for _, b := range batches {
		if err := checkAckBatch(b); err != nil || b.First < prevEnd {
			return kerr.InvalidRequest
		}
		for _, t := range b.Types {
			if t == AckRenew && !renew {
				return kerr.InvalidRequest
			}
		}
		prevEnd = b.Last
	}
	return nil
}

// acknowledgeAll applies each partition's acknowledgements and waits
// until the writes carrying them end (Kafka answers once the share
// coordinator stored the state). Partitions are staged first, so their
// writes go out together.
func (m *Manager) acknowledgeAll(ctx context.Context, group, member string, acks []ackPartition, renew bool) []ackResult {
	res := make([]ackResult, len(acks))
	waits := make([]*writeWait, len(acks))
	lock := m.groupConfig(group).RecordLockDuration
	readable := reqctx.ReadAllowed(ctx)
	for i, a := range acks {
		res[i].tp = a.tp
		if readable != nil && !readable("", a.tp.TopicID) {
			// Kafka refuses the acknowledgements of a topic the
			// member may not READ (KafkaApis.handleShareAcknowledgeRequest).
			res[i].err = kerr.TopicAuthorizationFailed
			continue
		}
		if err := checkAckBatches(a.batches, renew); err != nil {
			res[i].err = err
			continue
		}
		if len(a.batches) == 0 {
			continue
		}
		e := m.loaded(PartitionKey{group, a.tp.TopicID, a.tp.Partition})
		if e == nil {
			res[i].err = m.absent(a.tp)
			continue
		}
		e.mu.Lock()
		if e.gone != nil {
			e.mu.Unlock()
			res[i].err = errorCode(e.gone)
			continue
		}
		seq, err := e.sp.Acknowledge(m.clock.Now(), member, lock, a.batches)
		if err == nil && seq != 0 {
			waits[i] = e.waitForLocked(seq)
		}
		e.mu.Unlock()
		res[i].err = err
		if waits[i] != nil {
			m.flush(e)
		}
	}
	for i, w := range waits {
		if w == nil {
			continue
		}
		select {
		case <-w.done:
			if w.err != nil {
				res[i].err = persisterError(w.err)
			}
		case <-ctx.Done():
			res[i].err = kerr.RequestTimedOut
		}
	}
	return res
}

// absent is the error for acknowledging a partition whose share partition
// this broker does not hold: where it is led elsewhere, the client should
// go there; otherwise Kafka's UNKNOWN_TOPIC_OR_PARTITION.
func (m *Manager) absent(tp TopicPartition) *kerr.Error {
	if _, err := m.logs.Leader(tp); err != nil {
		return errorCode(err)
	}
	return kerr.UnknownTopicOrPartition
}

// needsLeader reports whether an answer with err tells the client the
// partition's current leader (KIP-951).
func needsLeader(err *kerr.Error) bool {
	return err == kerr.NotLeaderForPartition || err == kerr.FencedLeaderEpoch
}
