package raftmeta

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// leaderRecoveryRecovering is LeaderRecoveryState.RECOVERING.
const leaderRecoveryRecovering int8 = 1

// AlterPartition: v0-3 (ReplicationControlManager.alterPartition), the ISR
// changes partition leaders ask for.
//
// Behavior:
//   - An unregistered broker or another broker epoch is
//     STALE_BROKER_EPOCH for the whole request.
//   - Topics by name up to v1, by id from v2: an unknown one is
//     UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID for each partition; an
//     unknown partition UNKNOWN_TOPIC_OR_PARTITION.
//   - Epochs above the controller's are NOT_CONTROLLER (this controller is
//     behind: the leader should find the new one); a lower leader epoch is
//     FENCED_LEADER_EPOCH; a requester that is not the leader
//     INVALID_REQUEST; a lower partition epoch INVALID_UPDATE_VERSION.
//   - The new ISR must be distinct replicas holding the leader
//     (INVALID_REQUEST); leader recovery state RECOVERING is refused
//     (INVALID_REQUEST: Strait never elects a recovering leader).
//   - Each ISR member must be registered, unfenced, not shutting down and,
//     when v3 gives its epoch (not -1), at that epoch: else
//     INELIGIBLE_REPLICA (OPERATION_NOT_ATTEMPTED up to v1).
//   - A valid change appends a PartitionChangeRecord with the new ISR:
//     partition epoch +1, leader and leader epoch unchanged. The answer
//     carries the resulting state (also for a request that changes
//     nothing).
//   - An ISR holding every target replica of a reassignment completes it
//     in the same record (partition_reassign.go). If that moves the
//     leadership away from the requester, the record is written and the
//     answer is NEW_LEADER_ELECTED (FENCED_LEADER_EPOCH up to v1), as
//     Kafka's.
func (c *replicationControl) AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	var stale bool
	var topics []kmsg.AlterPartitionResponseTopic
	err := c.write(ctx, func(img *Image) []Record {
		topics = nil
		if b, ok := img.Brokers[req.BrokerID]; !ok || b.Epoch != req.BrokerEpoch {
			stale = true
			return nil
		}
		var records []Record
		for _, rt := range req.Topics {
			st := kmsg.NewAlterPartitionResponseTopic()
			st.Topic, st.TopidID = rt.Topic, rt.TopicID
			var t *Topic
			unknown := kerr.UnknownTopicOrPartition
			if req.Version > 1 {
				t = img.TopicsByID[Uuid(rt.TopicID)]
				unknown = kerr.UnknownTopicID
			} else {
				t = img.Topics[rt.Topic]
			}
			for _, rp := range rt.Partitions {
				sp := kmsg.NewAlterPartitionResponseTopicPartition()
				sp.Partition = rp.Partition
				if t == nil {
					sp.ErrorCode = unknown.Code
					st.Partitions = append(st.Partitions, sp)
					continue
				}
				p, rec, e := c.alterPartition(img, req, t, &rp)
				if e != nil {
					sp.ErrorCode = e.Code
					st.Partitions = append(st.Partitions, sp)
					continue
				}
				if rec != nil {
					records = append(records, rec)
					if rec.Leader != NoLeaderChange && rec.Leader != req.BrokerID {
						// The change completed a reassignment that moved
						// the leadership away: the record is written, and
						// the leader learns it lost the partition.
						sp.ErrorCode = leaderMovedCode(req.Version)
						st.Partitions = append(st.Partitions, sp)
						continue
					}
					p = p.apply(rec)
				}
				sp.LeaderID = p.Leader
				sp.LeaderEpoch = p.LeaderEpoch
				sp.ISR = slices.Clone(p.ISR)
				sp.PartitionEpoch = p.PartitionEpoch
				st.Partitions = append(st.Partitions, sp)
			}
			topics = append(topics, st)
		}
		return records
	})
	if resp.ErrorCode = brokerWriteCode(err, stale); resp.ErrorCode == 0 {
		resp.Topics = topics
	}
	return resp
}

// alterPartition validates one partition's change
// (validateAlterPartitionData) and builds its record (nil: no change).
func (c *replicationControl) alterPartition(img *Image, req *kmsg.AlterPartitionRequest, t *Topic, rp *kmsg.AlterPartitionRequestTopicPartition) (*Partition, *PartitionChangeRecord, *kerr.Error) {
	if rp.Partition < 0 || int(rp.Partition) >= len(t.Partitions) {
		return nil, nil, kerr.UnknownTopicOrPartition
	}
	p := t.Partitions[rp.Partition]
	switch {
	case rp.LeaderEpoch > p.LeaderEpoch, rp.PartitionEpoch > p.PartitionEpoch:
		return nil, nil, kerr.NotController
	case rp.LeaderEpoch < p.LeaderEpoch:
		return nil, nil, kerr.FencedLeaderEpoch
	case req.BrokerID != p.Leader:
		return nil, nil, kerr.InvalidRequest
	case rp.PartitionEpoch < p.PartitionEpoch:
		return nil, nil, kerr.InvalidUpdateVersion
	}
	type member struct {
		id    int32
		epoch int64
	}
	var isr []member
	if req.Version >= 3 {
		for _, m := range rp.NewEpochISR {
			isr = append(isr, member{m.BrokerID, m.BrokerEpoch})
		}
	} else {
		for _, id := range rp.NewISR {
			isr = append(isr, member{id, -1})
		}
	}
	ids := make([]int32, 0, len(isr))
	for _, m := range isr {
		if !slices.Contains(p.Replicas, m.id) || slices.Contains(ids, m.id) {
			return nil, nil, kerr.InvalidRequest
		}
		ids = append(ids, m.id)
	}
	if !slices.Contains(ids, p.Leader) || rp.LeaderRecoveryState == leaderRecoveryRecovering {
		return nil, nil, kerr.InvalidRequest
	}
	for _, m := range isr {
		b, ok := img.Brokers[m.id]
		if !ok || b.Fenced || b.InControlledShutdown || (m.epoch != -1 && m.epoch != b.Epoch) {
			if req.Version > 1 {
				return nil, nil, kerr.IneligibleReplica
			}
			return nil, nil, kerr.OperationNotAttempted
		}
	}
	pc := partitionChange{
		p:         p,
		mayLead:   img.BrokerActive,
		targetISR: ids,
	}
	if c.uncleanLeaderElection(img, t.Name) {
		pc.election = electUnclean
	}
	return p, pc.build(), nil
}

// leaderMovedCode is the AlterPartition error of a change that elected
// another leader.
func leaderMovedCode(version int16) int16 {
	if version > 1 {
		return kerr.NewLeaderElected.Code
	}
	return kerr.FencedLeaderEpoch.Code
}
