package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterPartitionReassignments: v0-1
//
// Behavior:
// * Moves each named partition to its target replicas (KIP-455): the
//   replicas being added catch up as followers, then the controller
//   completes the move; a null replica list cancels the partition's
//   reassignment. The active controller decides (per-partition errors:
//   UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT,
//   NO_REASSIGNMENT_IN_PROGRESS); other brokers forward the request to it.
// * The answer comes once the move has started, not when it completes:
//   ListPartitionReassignments follows it.
//
// Version notes:
// * v1: AllowReplicationFactorChange (KIP-860): false refuses a target of
//   another size, INVALID_REPLICATION_FACTOR

func init() {
	register(api{key: 45, min: 0, max: 1, handle: (*Server).handleAlterPartitionReassignments, served: servesReassignments})
}

// AlterPartitionReassignments needs ALTER on the cluster, else the request
// and every partition named are CLUSTER_AUTHORIZATION_FAILED
// (ControllerApis.handleAlterPartitionReassignments and the request's
// getErrorResponse).
func (s *Server) handleAlterPartitionReassignments(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterPartitionAssignmentsRequest)
	if s.auth(ctx).cluster(opAlter) {
		return s.svc.Reassignments.AlterPartitionReassignments(ctx, req), nil
	}
	resp := deniedResponse(req, errClusterAuth).(*kmsg.AlterPartitionAssignmentsResponse)
	msg := kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
	resp.ErrorMessage = msg
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, errClusterAuth, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
