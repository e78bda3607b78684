package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListPartitionReassignments: v0
//
// Behavior:
// * Lists the partition reassignments under way (KIP-455): every one for
//   null Topics, else those of the partitions named (unknown ones and
//   those not being reassigned are left out, without an error). Each has
//   its replicas, adding and removing replicas.

func init() {
	register(api{key: 46, min: 0, max: 0, handle: (*Server).handleListPartitionReassignments, served: servesReassignments})
}

// ListPartitionReassignments needs DESCRIBE on the cluster, else the
// request is CLUSTER_AUTHORIZATION_FAILED
// (ControllerApis.handleListPartitionReassignments).
func (s *Server) handleListPartitionReassignments(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListPartitionReassignmentsRequest)
	if s.auth(ctx).cluster(opDescribe) {
		return s.svc.Reassignments.ListPartitionReassignments(ctx, req), nil
	}
	resp := deniedResponse(req, errClusterAuth).(*kmsg.ListPartitionReassignmentsResponse)
	resp.ErrorMessage = kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
	return resp, nil
}
