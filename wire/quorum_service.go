package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// QuorumService serves the metadata quorum's admin APIs (KIP-595's
// DescribeQuorum, KIP-853's AddRaftVoter and RemoveRaftVoter): the active
// controller answers them, and a broker that is not it forwards them, as
// Kafka's brokers forward them to the controller.
type QuorumService interface {
	DescribeQuorum(ctx context.Context, req *kmsg.DescribeQuorumRequest) *kmsg.DescribeQuorumResponse
	AddRaftVoter(ctx context.Context, req *kmsg.AddRaftVoterRequest) *kmsg.AddRaftVoterResponse
	RemoveRaftVoter(ctx context.Context, req *kmsg.RemoveRaftVoterRequest) *kmsg.RemoveRaftVoterResponse
}

// servesQuorum is the served check of the quorum keys.
func servesQuorum(svc Services) bool { return svc.Quorum != nil }
