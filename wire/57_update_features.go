package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// UpdateFeatures: v0-2 (KIP-584, KIP-778)
//
// Behavior:
// * Needs ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED for the
//   whole request (ControllerApis.handleUpdateFeatures).
// * Forwarded to the active controller from any broker, which checks and
//   writes the levels (raftmeta's controller_features.go has the rules);
//   the answer comes once this broker applied them, so its next
//   ApiVersions lists them.
//
// Version notes:
// * v1: UpgradeType replaces AllowDowngrade; ValidateOnly
// * v2: no per-feature results on success

func init() {
	register(api{key: 57, min: 0, max: 2, handle: (*Server).handleUpdateFeatures})
}

func (s *Server) handleUpdateFeatures(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.UpdateFeaturesRequest)
	if !s.auth(ctx).cluster(opAlter) {
		return deniedOnCluster(req), nil
	}
	return s.svc.Admin.UpdateFeatures(ctx, req), nil
}
