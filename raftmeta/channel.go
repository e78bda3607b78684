package raftmeta

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ControllerChannel gives a Sender (ctrlrpc.Client) the typed calls other
// packages need, e.g. replication's ControllerChannel interface.
type ControllerChannel struct{ Sender }

// AlterPartition sends an AlterPartition request to the active controller
// (the partition leaders' ISR changes). A partition answering
// NOT_CONTROLLER (the controller is behind the leader's epochs) is retried
// on the next controller like a top-level one.
func (c ControllerChannel) AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error) {
	resp, err := c.Send(ctx, req)
	if err != nil {
		return nil, err
	}
	ap, ok := resp.(*kmsg.AlterPartitionResponse)
	if !ok {
		return nil, fmt.Errorf("raftmeta: AlterPartition answered by %T", resp)
	}
	return ap, nil
}
