package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeLogDirs: v1-4
//
// Behavior:
// * Answered by the replicas service; this file only routes and gates versions.
//
// Version notes:
// * v1: ThrottleMillis
// * v2: flexible versions
// * v3: top-level ErrorCode
// * v4: TotalBytes and UsableBytes (KIP-827)

func init() { register(api{key: 35, min: 1, max: 4, handle: (*Server).handleDescribeLogDirs}) }

// DescribeLogDirs needs DESCRIBE on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED and no directories
// (KafkaApis.handleDescribeLogDirsRequest).
func (s *Server) handleDescribeLogDirs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeLogDirsRequest)
	if !s.auth(ctx).cluster(opDescribe) {
		return deniedResponse(req, errClusterAuth), nil
	}
	return s.svc.Replicas.DescribeLogDirs(ctx, req), nil
}
