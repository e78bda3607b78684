package mirrorit

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MemberCommit commits offs as cl's consumer group member (its group,
// member id and generation) and returns the first error, of the request
// or of a partition. The group offset sync tests use it for a consumer
// that stays in its group on the destination.
func MemberCommit(ctx context.Context, cl *kgo.Client, offs map[string]map[int32]kgo.EpochOffset) error {
	var err error
	cl.CommitOffsetsSync(ctx, offs, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, e error) {
		if err = e; err != nil {
			return
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if err == nil {
					err = kerr.ErrorForCode(rp.ErrorCode)
				}
			}
		}
	})
	return err
}
