package state

import (
	"context"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// ReadState returns key's record and whether there is one (none:
// partition.EmptyRecord, false). The error is NOT_COORDINATOR or
// COORDINATOR_LOAD_IN_PROGRESS (a *kerr.Error) when this broker cannot
// answer for key.
func (c *Coordinator) ReadState(key Key) (partition.Record, bool, error) {
	rec, found, code := c.read(c.image(), key)
	if code != 0 {
		return partition.EmptyRecord(), false, codeError(code, "")
	}
	return rec, found, nil
}

// read looks key up in its shard: the record, whether there is one, or
// the routing error code.
func (c *Coordinator) read(img *raftmeta.Image, key Key) (partition.Record, bool, int16) {
	s := c.shardFor(img, key)
	if s == nil {
		return partition.EmptyRecord(), false, codeNotCoordinator
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if code := s.stateCode(); code != 0 {
		return partition.EmptyRecord(), false, code
	}
	rec, ok := s.states[key]
	if !ok {
		return partition.EmptyRecord(), false, 0
	}
	return rec, true, 0
}

// ReadMirrorStates: v0 (KIP-1279, key 9406), wire.MirrorService's method.
//
// Behavior:
//   - Topics are named; each resolves to its id through this broker's
//     metadata (a mirror topic has the source's id, so the same request
//     works against the source cluster for the LME). An unknown topic or
//     partition answers UNKNOWN_TOPIC_OR_PARTITION.
//   - Per partition, NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS when
//     this broker cannot answer for its record; the sender routes each
//     partition to the leader of __mirror_state partition PartitionFor.
//   - A partition with no record answers no error, State UNKNOWN (−1) and
//     every other field at its default (−1, null, false): StateEpoch −1
//     "if there is none" (see RecordFromRead, which reads it as
//     partition.EmptyRecord, state epoch 0).
//   - The state comes from memory, which holds only committed writes.
//   - MirrorName "" asks for whatever mirror each topic belongs to: the
//     mirror its mirror.name names in this broker's metadata, stopped
//     ("<mirror>.removed") included. That is how a destination in
//     PREPARING asks its source for the LME of a failback without knowing
//     the name the source used for its own mirror (KIP-1279's
//     QueryLastMirroredEpoch): a topic in no mirror answers no error and
//     State UNKNOWN (no LME), one in a mirror as for that mirror's name.
func (c *Coordinator) ReadMirrorStates(_ context.Context, req *mirrormsg.ReadMirrorStatesRequest) *mirrormsg.ReadMirrorStatesResponse {
	resp := req.ResponseKind().(*mirrormsg.ReadMirrorStatesResponse)
	img := c.image()
	for _, rt := range req.Topics {
		tr := mirrormsg.NewReadMirrorStatesResponseTopicResult()
		tr.Name = rt.Name
		topic := img.Topics[rt.Name]
		mirror := req.MirrorName
		if mirror == "" {
			mirror, _ = img.TopicMirror(rt.Name)
		}
		for _, rp := range rt.Partitions {
			var pr mirrormsg.ReadMirrorStatesResponsePartitionResult
			switch {
			case topic == nil || rp.PartitionIndex < 0 || int(rp.PartitionIndex) >= len(topic.Partitions):
				pr = PartitionResult(partition.EmptyRecord(), false)
				pr.ErrorCode = codeUnknownTopicOrPartition
			case mirror == "":
				// Only reachable with MirrorName "": the topic is in no
				// mirror here, so it has no record.
				pr = PartitionResult(partition.EmptyRecord(), false)
			default:
				rec, found, code := c.read(img, Key{Mirror: mirror, TopicID: topic.ID, Partition: rp.PartitionIndex})
				pr = PartitionResult(rec, found)
				pr.ErrorCode = code
			}
			pr.PartitionIndex = rp.PartitionIndex
			tr.Partitions = append(tr.Partitions, pr)
		}
		resp.Topics = append(resp.Topics, tr)
	}
	return resp
}
