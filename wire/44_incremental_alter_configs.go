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

func (s *Server) handleIncrementalAlterConfigs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Admin.IncrementalAlterConfigs(ctx, kreq.(*kmsg.IncrementalAlterConfigsRequest)), nil
}
