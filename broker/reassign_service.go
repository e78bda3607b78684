package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// reassignService is wire.ReassignmentService: every request goes to the
// active controller, as Kafka's brokers forward keys 45, 46 and 64 to it.
// The list is the controller's too, so a reassignment accepted through any
// broker is listed by every broker at once.
type reassignService struct{ n *Node }

func (r reassignService) AlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) *kmsg.AlterPartitionAssignmentsResponse {
	return r.n.forward(ctx, req).(*kmsg.AlterPartitionAssignmentsResponse)
}

func (r reassignService) ListPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	return r.n.forward(ctx, req).(*kmsg.ListPartitionReassignmentsResponse)
}

// UnregisterBroker returns once this node applied the unregistration, so
// the client's next DescribeCluster here no longer lists the broker.
func (r reassignService) UnregisterBroker(ctx context.Context, req *kmsg.UnregisterBrokerRequest) *kmsg.UnregisterBrokerResponse {
	resp := r.n.forward(ctx, req).(*kmsg.UnregisterBrokerResponse)
	if resp.ErrorCode == 0 {
		r.n.waitForImage(ctx, func(img *raftmeta.Image) bool {
			_, registered := img.Brokers[req.BrokerID]
			return !registered
		})
	}
	return resp
}
