package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClientQuotaService stores and describes client quotas (KIP-546, keys 48
// and 49); it is part of AdminService. The quotas the server enforces come
// from the metadata image (quota.go).
type ClientQuotaService interface {
	DescribeClientQuotas(ctx context.Context, req *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse
	AlterClientQuotas(ctx context.Context, req *kmsg.AlterClientQuotasRequest) *kmsg.AlterClientQuotasResponse
}
