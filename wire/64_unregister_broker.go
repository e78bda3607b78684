package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// UnregisterBroker: v0
//
// Behavior:
// * Removes a broker's registration (KIP-631; kafka-cluster.sh
//   unregister): it leaves every ISR, new replicas are no longer placed on
//   it and DescribeCluster no longer lists it. An id that is not
//   registered is BROKER_ID_NOT_REGISTERED. The active controller decides;
//   other brokers forward the request to it.

func init() {
	register(api{key: 64, min: 0, max: 0, handle: (*Server).handleUnregisterBroker, served: servesReassignments})
}

// UnregisterBroker needs ALTER on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED (ControllerApis.handleUnregisterBroker).
func (s *Server) handleUnregisterBroker(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.UnregisterBrokerRequest)
	if s.auth(ctx).cluster(opAlter) {
		return s.svc.Reassignments.UnregisterBroker(ctx, req), nil
	}
	return deniedResponse(req, errClusterAuth), nil
}
