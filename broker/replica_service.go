package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
	fsasl "github.com/twmb/franz-go/pkg/sasl"

	"github.com/strait-io/strait/replication"
	"github.com/strait-io/strait/wire"
	"github.com/strait-io/strait/wire/kclient"
)

// replicaService is wire.ReplicaService over the replica manager, which
// may not import wire (DESIGN.md's flow: wire -> broker -> replication).
// Only Fetch differs: each package owns its FetchResult, with the same
// fields, so the answer converts without a copy.
type replicaService struct{ *replication.ReplicaManager }

var _ wire.ReplicaService = replicaService{}

func (s replicaService) Fetch(ctx context.Context, req *kmsg.FetchRequest) *wire.FetchResult {
	return (*wire.FetchResult)(s.ReplicaManager.Fetch(ctx, req))
}

// dialLeader connects a follower's fetcher to its leader with wire/kclient
// over the inter-broker listener's dialer, logging in with mechanism on a
// SASL_* listener (nil: none). The fetcher is done with each answer before
// it sends the next request (replication.LeaderConn), so the connection
// reads every answer into the same buffer instead of allocating one per
// round trip.
func (n *Node) dialLeader(mechanism fsasl.Mechanism) func(replication.LeaderConnConfig) replication.LeaderConn {
	dial := n.interBrokerDialer()
	return func(c replication.LeaderConnConfig) replication.LeaderConn {
		return kclient.New(kclient.Config{
			Addr:                c.Addr,
			ClientID:            c.ClientID,
			Timeout:             c.Timeout,
			Dialer:              dial,
			SASL:                mechanism,
			ReuseResponseBuffer: true,
		})
	}
}
