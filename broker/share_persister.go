package broker

import (
	"context"
	"sync"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/coordinator/share"
	replshare "github.com/strait-io/strait/replication/share"
)

// defaultSharePersisters makes the node's share coordinator client the
// persister of both sides of KIP-932 where the options name none: the
// share-partition leaders' and the group coordinator's. Share groups are
// then served as Kafka 4.2 serves them, on by default.
func (n *Node) defaultSharePersisters() {
	if n.opts.SharePersister == nil {
		n.opts.SharePersister = sharePersister{n.ShareStateClient()}
	}
	if n.opts.ShareGroupPersister == nil {
		n.opts.ShareGroupPersister = shareGroupPersister{n.ShareStateClient()}
	}
}

// sharePersister is replication/share's Persister over the node's
// ShareStateClient: the share-partition leaders store their state with the
// share coordinator of __share_group_state, as Kafka's
// DefaultStatePersister does. The two packages' types have the same
// fields; this only converts.
type sharePersister struct{ c *ShareStateClient }

var _ replshare.Persister = sharePersister{}

func shareKey(k replshare.PartitionKey) share.Key {
	return share.Key{GroupID: k.GroupID, TopicID: k.TopicID, Partition: k.Partition}
}

func (p sharePersister) Initialize(ctx context.Context, key replshare.PartitionKey, stateEpoch int32, startOffset int64) error {
	return p.c.Initialize(ctx, shareKey(key), stateEpoch, startOffset)
}

func (p sharePersister) Read(ctx context.Context, key replshare.PartitionKey, leaderEpoch int32) (replshare.PersistedState, error) {
	st, err := p.c.Read(ctx, shareKey(key), leaderEpoch)
	if err != nil {
		return replshare.PersistedState{}, err
	}
	out := replshare.PersistedState{StateEpoch: st.StateEpoch, LeaderEpoch: st.LeaderEpoch, StartOffset: st.StartOffset}
	for _, b := range st.Batches {
		out.Batches = append(out.Batches, replshare.StateBatch(b))
	}
	return out, nil
}

func (p sharePersister) Write(ctx context.Context, key replshare.PartitionKey, st replshare.PersistedState) error {
	in := ShareState{StateEpoch: st.StateEpoch, LeaderEpoch: st.LeaderEpoch, StartOffset: st.StartOffset}
	for _, b := range st.Batches {
		in.Batches = append(in.Batches, share.StateBatch(b))
		// The manager writes the whole state, so the done offsets in it
		// are all there are past the start offset (KIP-1226's count).
		if replshare.RecordState(b.DeliveryState) == replshare.Acknowledged || replshare.RecordState(b.DeliveryState) == replshare.Archived {
			in.DeliveryCompleteCount += int32(b.LastOffset - b.FirstOffset + 1)
		}
	}
	return p.c.Write(ctx, shareKey(key), in)
}

func (p sharePersister) Delete(ctx context.Context, key replshare.PartitionKey) error {
	return p.c.Delete(ctx, shareKey(key))
}

// shareGroupPersister is the group coordinator's ShareStatePersister over
// the node's ShareStateClient: the share group's partitions are
// initialized, summarized and deleted one share-partition at a time, each
// at its own share coordinator, as Kafka's PersisterStateManager sends one
// request per share-partition; they go out together.
type shareGroupPersister struct{ c *ShareStateClient }

var _ coordinator.ShareStatePersister = shareGroupPersister{}

// eachPartition runs call for every partition at once and returns their
// outcomes in order.
func eachPartition[R any](ids []coordinator.SharePartitionID, call func(i int, id coordinator.SharePartitionID) R) []R {
	out := make([]R, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = call(i, id)
		}()
	}
	wg.Wait()
	return out
}

func groupKey(group string, id coordinator.SharePartitionID) share.Key {
	return share.Key{GroupID: group, TopicID: id.TopicID, Partition: id.Partition}
}

func (p shareGroupPersister) InitializeState(ctx context.Context, group string, stateEpoch int32, partitions []coordinator.ShareStateInit) ([]coordinator.SharePartitionResult, error) {
	ids := make([]coordinator.SharePartitionID, len(partitions))
	for i, in := range partitions {
		ids[i] = in.SharePartitionID
	}
	return eachPartition(ids, func(i int, id coordinator.SharePartitionID) coordinator.SharePartitionResult {
		err := p.c.Initialize(ctx, groupKey(group, id), stateEpoch, partitions[i].StartOffset)
		return coordinator.SharePartitionResult{SharePartitionID: id, Err: err}
	}), nil
}

func (p shareGroupPersister) ReadSummary(ctx context.Context, group string, partitions []coordinator.SharePartitionID) ([]coordinator.ShareStateSummary, error) {
	return eachPartition(partitions, func(_ int, id coordinator.SharePartitionID) coordinator.ShareStateSummary {
		sum, err := p.c.Summary(ctx, groupKey(group, id))
		if err != nil {
			return coordinator.ShareStateSummary{SharePartitionID: id, StartOffset: -1, DeliveryCompleteCount: -1, Err: err}
		}
		return coordinator.ShareStateSummary{
			SharePartitionID:      id,
			StateEpoch:            sum.StateEpoch,
			LeaderEpoch:           sum.LeaderEpoch,
			StartOffset:           sum.StartOffset,
			DeliveryCompleteCount: sum.DeliveryCompleteCount,
		}
	}), nil
}

func (p shareGroupPersister) DeleteState(ctx context.Context, group string, partitions []coordinator.SharePartitionID) ([]coordinator.SharePartitionResult, error) {
	return eachPartition(partitions, func(_ int, id coordinator.SharePartitionID) coordinator.SharePartitionResult {
		return coordinator.SharePartitionResult{SharePartitionID: id, Err: p.c.Delete(ctx, groupKey(group, id))}
	}), nil
}
