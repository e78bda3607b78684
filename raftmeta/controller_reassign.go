package raftmeta

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterPartitionReassignments: v0-1 (KIP-455,
// ReplicationControlManager.alterPartitionReassignments; the steps are in
// partition_reassign.go).
//
// Behavior:
//   - Per partition: an unknown topic or partition is
//     UNKNOWN_TOPIC_OR_PARTITION.
//   - Replicas null cancels the partition's reassignment:
//     NO_REASSIGNMENT_IN_PROGRESS when there is none; a revert whose ISR
//     would hold only replicas being added is INVALID_REPLICA_ASSIGNMENT
//     unless the topic allows unclean leader election.
//   - Otherwise the target must be a non-empty list of distinct registered
//     brokers (INVALID_REPLICA_ASSIGNMENT, Kafka's messages); Strait also
//     refuses a fenced broker that is not already a replica, which could
//     never catch up, so the move would hang. With v1's
//     AllowReplicationFactorChange false (KIP-860) a target of another size
//     than the partition's (its target, during a move) is
//     INVALID_REPLICATION_FACTOR.
//   - A target that only reorders the replicas, or whose replicas are all
//     in the ISR already, completes at once; one naming the current
//     replicas changes nothing.
//   - Every valid partition's record is appended in one batch; a failed
//     write is its error (NOT_CONTROLLER, REQUEST_TIMED_OUT) for each.
func (c *replicationControl) AlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) *kmsg.AlterPartitionAssignmentsResponse {
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	ctx, cancel := withTimeout(ctx, req.TimeoutMillis)
	defer cancel()
	allowRFChange := req.Version < 1 || req.AllowReplicationFactorChange
	type item struct {
		topic string
		rp    *kmsg.AlterPartitionAssignmentsRequestTopicPartition
	}
	var items []item
	for i := range req.Topics {
		for j := range req.Topics[i].Partitions {
			items = append(items, item{req.Topics[i].Topic, &req.Topics[i].Partitions[j]})
		}
	}
	errs, werr, built := c.writeItems(ctx, make([]*apiError, len(items)), false, func(img *Image, i, _ int) ([]Record, *apiError) {
		rec, e := c.alterPartitionReassignment(img, items[i].topic, items[i].rp, allowRFChange)
		if e != nil {
			c.logger.Info("cannot alter a partition reassignment", "topic", items[i].topic, "partition", items[i].rp.Partition, "err", e.msg)
			return nil, e
		}
		if rec == nil {
			return nil, nil
		}
		return []Record{rec}, nil
	})
	n := 0
	for _, rt := range req.Topics {
		st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode, sp.ErrorMessage = itemResult(errs[n], werr, built)
			n++
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// alterPartitionReassignment builds one partition's record (nil: no
// change) (ReplicationControlManager.alterPartitionReassignment).
func (c *replicationControl) alterPartitionReassignment(img *Image, topic string, rp *kmsg.AlterPartitionAssignmentsRequestTopicPartition, allowRFChange bool) (*PartitionChangeRecord, *apiError) {
	t, ok := img.Topics[topic]
	if !ok {
		return nil, errorf(kerr.UnknownTopicOrPartition, "Unable to find a topic named %s.", topic)
	}
	if rp.Partition < 0 || int(rp.Partition) >= len(t.Partitions) {
		return nil, errorf(kerr.UnknownTopicOrPartition, "Unable to find partition %s:%d.", topic, rp.Partition)
	}
	p := t.Partitions[rp.Partition]
	unclean := c.uncleanLeaderElection(img, topic)
	if rp.Replicas == nil {
		return c.cancelPartitionReassignment(img, p, unclean)
	}
	if _, e := validateManualAssignment(img, rp.Replicas, 0, rp.Partition); e != nil {
		return nil, e
	}
	for _, id := range rp.Replicas {
		if img.Brokers[id].Fenced && !slices.Contains(p.Replicas, id) {
			return nil, errorf(kerr.InvalidReplicaAssignment,
				"The manual partition assignment includes broker %d, but it is fenced: it could not catch up.", id)
		}
	}
	if !allowRFChange {
		current := len(p.Replicas) - len(p.RemovingReplicas)
		if current != len(rp.Replicas) {
			return nil, errorf(kerr.InvalidReplicationFactor,
				"The replication factor is changed from %d to %d", current, len(rp.Replicas))
		}
	}
	ra := newReassignment(p.Replicas, rp.Replicas)
	pc := partitionChange{p: p, mayLead: img.BrokerActive, targetReplicas: ra.replicas,
		targetAdding: nonNil(ra.adding), targetRemoving: nonNil(ra.removing)}
	if unclean {
		pc.election = electUnclean
	}
	return pc.build(), nil
}

// cancelPartitionReassignment reverts a partition to its replicas before
// the reassignment (ReplicationControlManager.cancelPartitionReassignment).
func (c *replicationControl) cancelPartitionReassignment(img *Image, p *Partition, unclean bool) (*PartitionChangeRecord, *apiError) {
	if !p.Reassigning() {
		return nil, errorf(kerr.NoReassignmentInProgress, "%s", kerr.NoReassignmentInProgress.Description)
	}
	rv := revertReassignment(p)
	if rv.unclean && !unclean {
		return nil, errorf(kerr.InvalidReplicaAssignment,
			"Unable to revert partition assignment for %s:%d because it would require an unclean leader election.", p.Topic, p.Index)
	}
	pc := partitionChange{p: p, mayLead: img.BrokerActive, targetISR: rv.isr, targetReplicas: rv.replicas,
		targetAdding: []int32{}, targetRemoving: []int32{}}
	if unclean {
		pc.election = electUnclean
	}
	return pc.build(), nil
}

// ListPartitionReassignments: v0 (ReplicationControlManager.
// listPartitionReassignments), answered from the active controller's
// image once it holds every committed entry (so a reassignment accepted
// anywhere is listed), NOT_CONTROLLER elsewhere.
func (c *replicationControl) ListPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	var resp *kmsg.ListPartitionReassignmentsResponse
	// A write of no records: the write slot's leadership check and sync,
	// and the image a forwarded request's runs share.
	err := c.write(ctx, func(img *Image) []Record {
		resp = ListPartitionReassignments(img, req)
		return nil
	})
	if err != nil || resp == nil {
		resp = req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
		code, msg := writeErrorCode(err)
		if err == nil {
			code, msg = kerr.UnknownServerError.Code, "no image"
		}
		resp.ErrorCode, resp.ErrorMessage = code, &msg
	}
	return resp
}

// ListPartitionReassignments answers ListPartitionReassignments from img.
//
// Behavior:
//   - Null Topics lists every partition being reassigned, by topic name
//     and partition; named topics and partitions list those of them being
//     reassigned. Unknown topics and partitions, and partitions not being
//     reassigned, are left out (Kafka answers no error for them).
//   - Each partition carries its replicas (the target followed by the
//     replicas being removed), the adding and the removing replicas.
func ListPartitionReassignments(img *Image, req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	list := func(t *Topic, partitions []int32) {
		st := kmsg.NewListPartitionReassignmentsResponseTopic()
		st.Topic = t.Name
		for _, i := range partitions {
			if i < 0 || int(i) >= len(t.Partitions) || !t.Partitions[i].Reassigning() {
				continue
			}
			p := t.Partitions[i]
			sp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			sp.Partition = i
			sp.Replicas = slices.Clone(p.Replicas)
			sp.AddingReplicas = nonNil(slices.Clone(p.AddingReplicas))
			sp.RemovingReplicas = nonNil(slices.Clone(p.RemovingReplicas))
			st.Partitions = append(st.Partitions, sp)
		}
		if len(st.Partitions) > 0 {
			resp.Topics = append(resp.Topics, st)
		}
	}
	if req.Topics == nil {
		for _, name := range img.TopicNames() {
			t := img.Topics[name]
			all := make([]int32, len(t.Partitions))
			for i := range all {
				all[i] = int32(i)
			}
			list(t, all)
		}
		return resp
	}
	for _, rt := range req.Topics {
		if t, ok := img.Topics[rt.Topic]; ok {
			list(t, rt.Partitions)
		}
	}
	return resp
}

// nonNil is s, or an empty list for nil: a record field or an answer's
// array that must be present even when empty.
func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}
