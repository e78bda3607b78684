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

func (s *Server) handleDescribeConfigs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Admin.DescribeConfigs(ctx, kreq.(*kmsg.DescribeConfigsRequest)), nil
}
