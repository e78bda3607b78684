package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// UpdateFeatures is forwarded to the active controller; a change that
// succeeded is waited for on this node's image, so the client's next
// ApiVersions here lists the new finalized levels.
func (a admin) UpdateFeatures(ctx context.Context, req *kmsg.UpdateFeaturesRequest) *kmsg.UpdateFeaturesResponse {
	resp := a.n.forward(ctx, req).(*kmsg.UpdateFeaturesResponse)
	if resp.ErrorCode != 0 || req.ValidateOnly {
		return resp
	}
	want := map[string]int16{} // the last update of a feature wins
	for _, u := range req.FeatureUpdates {
		want[u.Feature] = u.MaxVersionLevel
	}
	a.n.waitForImage(ctx, func(img *raftmeta.Image) bool {
		for name, level := range want {
			if img.FeatureLevel(name) != level {
				return false
			}
		}
		return true
	})
	return resp
}
