package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ReassignmentService serves partition reassignment (KIP-455: keys 45 and
// 46) and broker unregistration (KIP-631: key 64). It is optional: while
// Services.Reassignments is nil those keys are neither advertised nor
// accepted. Per-partition failures are error codes in the responses.
type ReassignmentService interface {
	// AlterPartitionReassignments starts, changes or (a null replica list)
	// cancels the reassignment of each partition named.
	AlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) *kmsg.AlterPartitionAssignmentsResponse
	// ListPartitionReassignments lists the reassignments under way.
	ListPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse
	// UnregisterBroker removes a broker's registration.
	UnregisterBroker(ctx context.Context, req *kmsg.UnregisterBrokerRequest) *kmsg.UnregisterBrokerResponse
}

// servesReassignments is the served check of keys 45, 46 and 64.
func servesReassignments(svc Services) bool { return svc.Reassignments != nil }
