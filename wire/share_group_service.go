package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareGroupService is the group coordinator's side of KIP-932 share
// groups: membership (ShareGroupHeartbeat, ShareGroupDescribe) and the
// share-group offset admin APIs. Records are fetched and acknowledged
// with ShareFetch and ShareAcknowledge, which another service serves.
type ShareGroupService interface {
	ShareGroupHeartbeat(ctx context.Context, req *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse
	ShareGroupDescribe(ctx context.Context, req *kmsg.ShareGroupDescribeRequest) *kmsg.ShareGroupDescribeResponse
	DescribeShareGroupOffsets(ctx context.Context, req *kmsg.DescribeShareGroupOffsetsRequest) *kmsg.DescribeShareGroupOffsetsResponse
	AlterShareGroupOffsets(ctx context.Context, req *kmsg.AlterShareGroupOffsetsRequest) *kmsg.AlterShareGroupOffsetsResponse
	DeleteShareGroupOffsets(ctx context.Context, req *kmsg.DeleteShareGroupOffsetsRequest) *kmsg.DeleteShareGroupOffsetsResponse
}

// servesShareGroups is the served check of the share group keys.
func servesShareGroups(svc Services) bool { return svc.ShareGroups != nil }
