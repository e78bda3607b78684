package raftmeta

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/ctrlrpc"
)

// ServeControllerRequest implements ctrlrpc.Handler: the requests the
// CONTROLLER listener answers (ControllerApis). Brokers send the cluster
// RPCs; admin requests come forwarded from the broker a client sent them
// to (Kafka's ForwardingManager, without an Envelope until authentication
// exists). Every write answers NOT_CONTROLLER on a node that is not the
// active controller, which sends the channel's client to the next one.
// Another request closes the connection. A forwarded request (one with a
// ctrlrpc.ForwardID) is carried out once however often it is retried
// (controller_forwarded.go).
func (c *Controller) ServeControllerRequest(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if resp := c.serveQuorumRequest(ctx, req); resp != nil {
		return resp, nil
	}
	if id, ok := ctrlrpc.ForwardIDFrom(ctx); ok {
		return c.serveForwarded(ctx, id, req)
	}
	return c.serveRequest(ctx, req)
}

// serveRequest answers a request (see ServeControllerRequest).
func (c *Controller) serveRequest(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	switch req := req.(type) {
	case *kmsg.BrokerRegistrationRequest:
		return c.BrokerRegistration(ctx, req), nil
	case *kmsg.BrokerHeartbeatRequest:
		return c.BrokerHeartbeat(ctx, req), nil
	case *kmsg.AlterPartitionRequest:
		return c.AlterPartition(ctx, req), nil
	case *kmsg.AllocateProducerIDsRequest:
		return c.allocateProducerIDs(ctx, req), nil
	case *kmsg.CreateTopicsRequest:
		return c.CreateTopics(ctx, req), nil
	case *kmsg.DeleteTopicsRequest:
		return c.DeleteTopics(ctx, req), nil
	case *kmsg.CreatePartitionsRequest:
		return c.CreatePartitions(ctx, req), nil
	case *kmsg.AlterConfigsRequest:
		return c.AlterConfigs(ctx, req), nil
	case *kmsg.IncrementalAlterConfigsRequest:
		return c.IncrementalAlterConfigs(ctx, req), nil
	case *kmsg.CreateACLsRequest:
		return c.CreateACLs(ctx, req), nil
	case *kmsg.DeleteACLsRequest:
		return c.DeleteACLs(ctx, req), nil
	case *kmsg.ElectLeadersRequest:
		return c.ElectLeaders(ctx, req), nil
	case *kmsg.AlterUserSCRAMCredentialsRequest:
		return c.AlterUserScramCredentials(ctx, req), nil
	case *kmsg.AlterClientQuotasRequest:
		return c.AlterClientQuotas(ctx, req), nil
	case *kmsg.UpdateFeaturesRequest:
		return c.UpdateFeatures(ctx, req), nil
	case *kmsg.AlterPartitionAssignmentsRequest:
		return c.AlterPartitionReassignments(ctx, req), nil
	case *kmsg.ListPartitionReassignmentsRequest:
		return c.replication.ListPartitionReassignments(ctx, req), nil
	case *kmsg.UnregisterBrokerRequest:
		return c.UnregisterBroker(ctx, req), nil
	}
	// The KIP-1279 mirror RPCs (controller_mirrors.go).
	if resp := c.serveMirrorRequest(ctx, req); resp != nil {
		return resp, nil
	}
	return nil, fmt.Errorf("raftmeta: %s is not a controller request", kmsg.NameForKey(req.Key()))
}

// requestingNode is the node a request came from: the sender named in a
// forwarded request's client id (ctrlrpc.NodeClientID), else this node.
// Broker config resources are checked against it, as Kafka's broker checks
// them before forwarding (ConfigAdminManager.preprocess).
func (c *Controller) requestingNode(ctx context.Context) int32 {
	if ri, ok := ctrlrpc.InfoFrom(ctx); ok {
		if id, ok := ctrlrpc.ParseNodeClientID(ri.ClientID); ok {
			return id
		}
	}
	return c.cfg.NodeID
}

var _ ctrlrpc.Handler = (*Controller)(nil)
