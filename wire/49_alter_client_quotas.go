package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterClientQuotas: v0-v1 (KIP-546)
//
// Behavior:
// * Forwarded to the active controller, which checks each entry
//   (INVALID_REQUEST for a bad entity, key or value, UNSUPPORTED_VERSION
//   for an unknown entity type) and appends a ClientQuotaRecord per key
//   that changes; ValidateOnly appends nothing. Every broker applies the
//   quotas from its image (quota.go).
//
// Version notes:
// * v1: flexible

func init() {
	register(api{key: 49, min: 0, max: 1, handle: (*Server).handleAlterClientQuotas})
}

// AlterClientQuotas needs ALTER_CONFIGS on the cluster, else every entry's
// result is CLUSTER_AUTHORIZATION_FAILED
// (ControllerApis.handleAlterClientQuotas).
func (s *Server) handleAlterClientQuotas(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterClientQuotasRequest)
	if s.auth(ctx).cluster(opAlterConfigs) {
		return s.svc.Admin.AlterClientQuotas(ctx, req), nil
	}
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	for _, entry := range req.Entries {
		r := kmsg.NewAlterClientQuotasResponseEntry()
		r.ErrorCode, r.ErrorMessage = errClusterAuth, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		for _, e := range entry.Entity {
			re := kmsg.NewAlterClientQuotasResponseEntryEntity()
			re.Type, re.Name = e.Type, e.Name
			r.Entity = append(r.Entity, re)
		}
		resp.Entries = append(resp.Entries, r)
	}
	return resp, nil
}
