package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterConfigs: v0-2
//
// Behavior:
// * Replaces the dynamic configs of a topic, broker, group or mirror
//   resource; topic configs take effect on the logs.
//
// Version notes:
// * v1: same as v0
// * v2: flexible versions

func init() { register(api{key: 33, min: 0, max: 2, handle: (*Server).handleAlterConfigs}) }

// AlterConfigs needs ALTER_CONFIGS on each resource (authz_configs.go).
func (s *Server) handleAlterConfigs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterConfigsRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.Resources, func(r *kmsg.AlterConfigsRequestResource) bool {
		return configDenied(c, r.ResourceType, r.ResourceName, opAlterConfigs) == 0
	})
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	if len(req.Resources) > 0 || len(denied) == 0 {
		resp = s.svc.Admin.AlterConfigs(ctx, req)
	}
	for _, r := range denied {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		rr.ErrorCode, rr.ErrorMessage = configDeniedError(configDenied(c, r.ResourceType, r.ResourceName, opAlterConfigs))
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}
