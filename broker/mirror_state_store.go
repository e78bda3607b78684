package broker

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/manager"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/mirror/state"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// mirrorStateStore is the mirror manager's StateStore: each record goes to
// its coordinator, the leader of its __mirror_state partition
// (state.CoordinatorFor) — this broker's coordinator directly when that is
// this broker, else ReadMirrorStates / WriteMirrorStates to the broker
// that is, as the prototype's MirrorMetadataManager routes partition state
// to its coordinator.
type mirrorStateStore struct{ n *Node }

var _ manager.StateStore = mirrorStateStore{}

// coordinator returns the node coordinating key, or a retriable error.
func (s mirrorStateStore) coordinator(img *raftmeta.Image, key state.Key) (int32, error) {
	id, ok := state.CoordinatorFor(img, key)
	if !ok {
		return -1, fmt.Errorf("no leader for the %s partition of %s: %w", raftmeta.MirrorStateTopic, key, kerr.CoordinatorNotAvailable)
	}
	return id, nil
}

// topicName is the name of key's topic in img.
func topicName(img *raftmeta.Image, key state.Key) (string, error) {
	t, ok := img.TopicsByID[raftmeta.Uuid(key.TopicID)]
	if !ok {
		return "", fmt.Errorf("topic id %s: %w", raftmeta.Uuid(key.TopicID), kerr.UnknownTopicOrPartition)
	}
	return t.Name, nil
}

func (s mirrorStateStore) ReadState(ctx context.Context, key state.Key) (partition.Record, error) {
	img := s.n.quorum.Image()
	id, err := s.coordinator(img, key)
	if err != nil {
		return partition.EmptyRecord(), err
	}
	if id == s.n.cfg.NodeID {
		rec, _, err := s.n.mirrorStates.ReadState(key)
		return rec, err
	}
	name, err := topicName(img, key)
	if err != nil {
		return partition.EmptyRecord(), err
	}
	req := mirrormsg.NewPtrReadMirrorStatesRequest()
	req.MirrorName = key.Mirror
	td := mirrormsg.NewReadMirrorStatesRequestTopicData()
	td.Name = name
	pd := mirrormsg.NewReadMirrorStatesRequestPartitionData()
	pd.PartitionIndex = key.Partition
	td.Partitions = append(td.Partitions, pd)
	req.Topics = append(req.Topics, td)
	kresp, err := s.n.peers.request(ctx, id, req)
	if err != nil {
		return partition.EmptyRecord(), err
	}
	resp := kresp.(*mirrormsg.ReadMirrorStatesResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return partition.EmptyRecord(), fmt.Errorf("ReadMirrorStates from broker %d for %s: %d topics in the answer: %w", id, key, len(resp.Topics), kerr.UnknownServerError)
	}
	pr := resp.Topics[0].Partitions[0]
	if err := state.CodeError(pr.ErrorCode, ""); err != nil {
		return partition.EmptyRecord(), fmt.Errorf("ReadMirrorStates from broker %d for %s: %w", id, key, err)
	}
	return state.RecordFromRead(pr), nil
}

func (s mirrorStateStore) WriteState(ctx context.Context, key state.Key, rec partition.Record, expected int32) (int32, error) {
	img := s.n.quorum.Image()
	id, err := s.coordinator(img, key)
	if err != nil {
		return -1, err
	}
	if id == s.n.cfg.NodeID {
		return s.n.mirrorStates.WriteState(ctx, state.Write{Key: key, Record: rec, ExpectedStateEpoch: expected})
	}
	name, err := topicName(img, key)
	if err != nil {
		return -1, err
	}
	req := mirrormsg.NewPtrWriteMirrorStatesRequest()
	req.MirrorName = key.Mirror
	tm := mirrormsg.NewWriteMirrorStatesRequestTopicMetadata()
	tm.TopicName = name
	tm.Partitions = append(tm.Partitions, state.WritePartition(key.Partition, rec, expected))
	req.Topics = append(req.Topics, tm)
	kresp, err := s.n.peers.request(ctx, id, req)
	if err != nil {
		return -1, err
	}
	resp := kresp.(*mirrormsg.WriteMirrorStatesResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return -1, fmt.Errorf("WriteMirrorStates to broker %d for %s: %d topics in the answer: %w", id, key, len(resp.Topics), kerr.UnknownServerError)
	}
	pr := resp.Topics[0].Partitions[0]
	msg := ""
	if pr.ErrorMessage != nil {
		msg = *pr.ErrorMessage
	}
	if err := state.CodeError(pr.ErrorCode, msg); err != nil {
		return -1, fmt.Errorf("WriteMirrorStates to broker %d for %s: %w", id, key, err)
	}
	return pr.StateEpoch, nil
}
