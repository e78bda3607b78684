package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeConfigs: v1-4
//
// Behavior:
// * Topic, broker, group and mirror (CLUSTER_MIRROR) resources, with sources, synonyms (v1+) and
//   documentation (v3+).
//
// Version notes:
// * v1: IncludeSynonyms, ConfigSource
// * v3: IncludeDocumentation, ConfigType
// * v4: flexible versions

func init() { register(api{key: 32, min: 1, max: 4, handle: (*Server).handleDescribeConfigs}) }

// DescribeConfigs needs DESCRIBE_CONFIGS on each resource (authz_configs.go).
func (s *Server) handleDescribeConfigs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.Resources, func(r *kmsg.DescribeConfigsRequestResource) bool {
		return configDenied(c, r.ResourceType, r.ResourceName, opDescribeConfigs) == 0
	})
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	if len(req.Resources) > 0 || len(denied) == 0 {
		resp = s.svc.Admin.DescribeConfigs(ctx, req)
	}
	for _, r := range denied {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		rr.ErrorCode, rr.ErrorMessage = configDeniedError(configDenied(c, r.ResourceType, r.ResourceName, opDescribeConfigs))
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}
