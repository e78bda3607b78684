package wire

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// DescribeCluster: v0-1
//
// Behavior:
// * Brokers with their endpoint on the request's listener, the cluster id
//   and the active controller, from the metadata image (KIP-700).
// * Cluster authorized operations are all operations: ACLs are stored but
//   not yet enforced.
//
// Version notes:
// * v0: KIP-700
// * v1: EndpointType (KIP-919)

func init() { register(api{key: 60, min: 0, max: 1, handle: (*Server).handleDescribeCluster}) }

func (s *Server) handleDescribeCluster(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	img := s.svc.Cluster.Image()
	info := reqctx.From(ctx)
	if req.Version >= 1 && req.EndpointType != 1 {
		// Only the broker endpoint type is served; controllers are not
		// exposed to clients (KIP-919's UNSUPPORTED_ENDPOINT_TYPE).
		resp.ErrorCode = 119 // UNSUPPORTED_ENDPOINT_TYPE
		return resp, nil
	}
	resp.ClusterID = img.ClusterID
	resp.ControllerID = s.svc.Cluster.ControllerID()
	ids := make([]int32, 0, len(img.Brokers))
	for id := range img.Brokers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		b := img.Brokers[id]
		if b.Fenced {
			continue
		}
		ep, ok := endpointFor(b, info.Listener)
		if !ok {
			continue
		}
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port = id, ep.Host, ep.Port
		if b.Rack != "" {
			rb.Rack = kmsg.StringPtr(b.Rack)
		}
		resp.Brokers = append(resp.Brokers, rb)
	}
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = allClusterOperations
		if ops, ok := s.auth(ctx).authorizedOps(resCluster, authz.ClusterName); ok {
			resp.ClusterAuthorizedOperations = ops
		}
	}
	return resp, nil
}
