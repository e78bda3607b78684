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

func (s *Server) handleAlterConfigs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Admin.AlterConfigs(ctx, kreq.(*kmsg.AlterConfigsRequest)), nil
}
