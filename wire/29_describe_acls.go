package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeACLs: v1-3
//
// Behavior:
// * ACLs are stored in the metadata log; enforcement comes with the security work.
//
// Version notes:
// * v1: PatternType (KIP-290)
// * v2: flexible versions
// * v3: USER_READ_ONLY style operations

func init() { register(api{key: 29, min: 1, max: 3, handle: (*Server).handleDescribeACLs}) }

// DescribeAcls needs DESCRIBE on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED (AclApis.handleDescribeAcls).
func (s *Server) handleDescribeACLs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeACLsRequest)
	if !s.auth(ctx).cluster(opDescribe) {
		return deniedOnCluster(req), nil
	}
	return s.svc.Admin.DescribeACLs(ctx, req), nil
}
