package broker

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/wire/clientquota"
)

// DescribeClientQuotas answers from this node's image, as Kafka's brokers
// answer from their metadata cache.
func (a admin) DescribeClientQuotas(ctx context.Context, req *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse {
	return a.n.quorum.Controller().DescribeClientQuotas(ctx, req)
}

// AlterClientQuotas is forwarded to the active controller; it returns once this node applied the entries that
// succeeded, so the client's next request here (a DescribeClientQuotas,
// or a produce under the new quota) sees them.
func (a admin) AlterClientQuotas(ctx context.Context, req *kmsg.AlterClientQuotasRequest) *kmsg.AlterClientQuotasResponse {
	resp := a.n.forward(ctx, req).(*kmsg.AlterClientQuotasResponse)
	if req.ValidateOnly || len(resp.Entries) != len(req.Entries) {
		return resp
	}
	a.n.waitForImage(ctx, func(img *raftmeta.Image) bool {
		for i, entry := range req.Entries {
			if resp.Entries[i].ErrorCode != 0 {
				continue
			}
			entity, err := raftmeta.AlteredQuotaEntity(entry)
			if err != nil {
				continue
			}
			values := img.ClientQuotas[entity]
			for _, op := range entry.Ops {
				v, set := values[op.Key]
				if op.Remove == set || (!op.Remove && v != op.Value) {
					return false
				}
			}
		}
		return true
	})
	return resp
}

// clientQuotaWindow is the sampling of client quota rates:
// quota.window.num windows of quota.window.size.seconds.
func clientQuotaWindow(cfg *config.Config) clientquota.Window {
	return clientquota.Window{Samples: int(cfg.QuotaWindowNum), Size: time.Duration(cfg.QuotaWindowSizeSeconds) * time.Second}
}
