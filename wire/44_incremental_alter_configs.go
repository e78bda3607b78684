package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// IncrementalAlterConfigs: v0-1
//
// Behavior:
// * SET, DELETE, APPEND and SUBTRACT (KIP-339) on topic, broker, group
//   (KIP-848, KIP-932) and mirror resources, decided by the controller.
//
// Version notes:
// * v1: flexible versions

func init() { register(api{key: 44, min: 0, max: 1, handle: (*Server).handleIncrementalAlterConfigs}) }

// IncrementalAlterConfigs needs ALTER_CONFIGS on each resource
// (authz_configs.go).
func (s *Server) handleIncrementalAlterConfigs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.Resources, func(r *kmsg.IncrementalAlterConfigsRequestResource) bool {
		return configDenied(c, r.ResourceType, r.ResourceName, opAlterConfigs) == 0
	})
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	if len(req.Resources) > 0 || len(denied) == 0 {
		resp = s.svc.Admin.IncrementalAlterConfigs(ctx, req)
	}
	for _, r := range denied {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		rr.ErrorCode, rr.ErrorMessage = configDeniedError(configDenied(c, r.ResourceType, r.ResourceName, opAlterConfigs))
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}
