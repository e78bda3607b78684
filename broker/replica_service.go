package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/replication"
	"github.com/strait-io/strait/wire"
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
