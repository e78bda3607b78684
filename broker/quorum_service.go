package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// quorumService is wire.QuorumService: the active controller answers the
// metadata quorum's admin APIs, so every node forwards them to it (Kafka's
// brokers forward DescribeQuorum, AddRaftVoter and RemoveRaftVoter).
type quorumService struct{ n *Node }

func (s quorumService) DescribeQuorum(ctx context.Context, req *kmsg.DescribeQuorumRequest) *kmsg.DescribeQuorumResponse {
	return s.n.forward(ctx, req).(*kmsg.DescribeQuorumResponse)
}

func (s quorumService) AddRaftVoter(ctx context.Context, req *kmsg.AddRaftVoterRequest) *kmsg.AddRaftVoterResponse {
	return s.n.forward(ctx, req).(*kmsg.AddRaftVoterResponse)
}

func (s quorumService) RemoveRaftVoter(ctx context.Context, req *kmsg.RemoveRaftVoterRequest) *kmsg.RemoveRaftVoterResponse {
	return s.n.forward(ctx, req).(*kmsg.RemoveRaftVoterResponse)
}
