package state

import (
	"context"
	"fmt"
	"sync"

	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// writeEntry is one write on its way through the coordinator.
type writeEntry struct {
	in         fenceInput
	code       int16
	msg        string
	stateEpoch int32
}

// WriteState stores one state and returns the state epoch stored; see
// WriteStates.
func (c *Coordinator) WriteState(ctx context.Context, w Write) (int32, error) {
	r := c.WriteStates(ctx, []Write{w})[0]
	return r.StateEpoch, r.Err
}

// WriteStates stores states for callers on this broker (a partition
// leader whose coordinator is local), with the fencing and durability of
// WriteMirrorStates; results are in the order of writes. Record.PrevState
// is stored as given.
func (c *Coordinator) WriteStates(ctx context.Context, writes []Write) []WriteResult {
	entries := make([]*writeEntry, len(writes))
	for i, w := range writes {
		entries[i] = &writeEntry{in: fenceInput{w: w}}
	}
	c.write(ctx, c.image(), entries)
	out := make([]WriteResult, len(entries))
	for i, e := range entries {
		out[i] = WriteResult{StateEpoch: e.stateEpoch, Err: codeError(e.code, e.msg)}
	}
	return out
}

// WriteMirrorStates: v0 (KIP-1279, key 9407), wire.MirrorService's method.
//
// Behavior:
//   - Topics are named and resolve to ids through this broker's metadata;
//     unknown ones answer UNKNOWN_TOPIC_OR_PARTITION.
//   - Per partition: NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS for
//     routing, then the fencing of fence.go (FENCED_LEADER_EPOCH,
//     UNKNOWN_LEADER_EPOCH, INVALID_CLUSTER_MIRROR_STATES,
//     INVALID_REQUEST). StateEpoch is the expected (stored) state epoch,
//     LeaderEpoch the writer's; −1 skips either check.
//   - The accepted partitions of one __mirror_state partition are appended
//     as one batch, acks=all; the response comes once it is committed,
//     with the stored state epoch (expected + 1) per partition. A failed
//     append fails every partition of its batch (runtime.AppendErrorCode) and the
//     shard reloads from its log before it serves again.
//   - PrevState, which v0 does not carry, is derived from the record
//     replaced (derivePrevState).
func (c *Coordinator) WriteMirrorStates(ctx context.Context, req *mirrormsg.WriteMirrorStatesRequest) *mirrormsg.WriteMirrorStatesResponse {
	resp := req.ResponseKind().(*mirrormsg.WriteMirrorStatesResponse)
	img := c.image()
	var entries []*writeEntry
	for _, rt := range req.Topics {
		topic := img.Topics[rt.TopicName]
		for _, rp := range rt.Partitions {
			e := &writeEntry{stateEpoch: -1}
			if topic == nil {
				e.code, e.msg = codeUnknownTopicOrPartition, fmt.Sprintf("unknown topic %q", rt.TopicName)
			} else {
				key := Key{Mirror: req.MirrorName, TopicID: topic.ID, Partition: rp.PartitionIndex}
				e.in = fenceInput{w: RecordFromWrite(key, rp), derivePrev: true}
			}
			entries = append(entries, e)
		}
	}
	c.write(ctx, img, entries)
	i := 0
	for _, rt := range req.Topics {
		tr := mirrormsg.NewWriteMirrorStatesResponseTopicResult()
		tr.TopicName = rt.TopicName
		for _, rp := range rt.Partitions {
			e := entries[i]
			i++
			pr := mirrormsg.NewWriteMirrorStatesResponsePartitionResult()
			pr.PartitionIndex = rp.PartitionIndex
			pr.ErrorCode, pr.StateEpoch = e.code, e.stateEpoch
			if e.code != 0 {
				msg := e.msg
				if msg == "" {
					msg = mirrormsg.TypedErrorForCode(e.code).Description
				}
				pr.ErrorMessage = &msg
			}
			tr.Partitions = append(tr.Partitions, pr)
		}
		resp.Topics = append(resp.Topics, tr)
	}
	return resp
}

// write routes entries (those without an error code yet) to their shards
// and writes each shard's group, shards in parallel.
func (c *Coordinator) write(ctx context.Context, img *raftmeta.Image, entries []*writeEntry) {
	n := c.numPartitions(img)
	groups := map[*shard][]*writeEntry{}
	var order []*shard
	for _, e := range entries {
		e.stateEpoch = -1
		if e.code != 0 {
			continue
		}
		key := e.in.w.Key
		t := img.TopicsByID[key.TopicID]
		if t == nil || key.Partition < 0 || int(key.Partition) >= len(t.Partitions) {
			e.code, e.msg = codeUnknownTopicOrPartition, fmt.Sprintf("unknown partition %d of topic id %s", key.Partition, raftmeta.Uuid(key.TopicID))
			continue
		}
		e.in.currentLeaderEpoch, e.in.currentKnown = t.Partitions[key.Partition].LeaderEpoch, true
		s := c.shard(key.PartitionFor(n))
		if s == nil {
			e.code = codeNotCoordinator
			continue
		}
		if _, ok := groups[s]; !ok {
			order = append(order, s)
		}
		groups[s] = append(groups[s], e)
	}
	if len(order) == 1 {
		order[0].write(ctx, groups[order[0]])
		return
	}
	var wg sync.WaitGroup
	for _, s := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.write(ctx, groups[s])
		}()
	}
	wg.Wait()
}

// write fences entries against the shard's records, appends the accepted
// ones as one batch and, once it is committed, stores them in memory. The
// whole runs under writeMu, so no other write or load interleaves between
// the state-epoch check and the map update.
func (s *shard) write(ctx context.Context, entries []*writeEntry) {
	// A loading shard answers at once: its load holds writeMu until the
	// replay is done, and the write must not wait behind it.
	s.mu.Lock()
	code := s.stateCode()
	s.mu.Unlock()
	if code != 0 {
		for _, e := range entries {
			e.code = code
		}
		return
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()

	s.mu.Lock()
	if code := s.stateCode(); code != 0 {
		s.mu.Unlock()
		for _, e := range entries {
			e.code = code
		}
		return
	}
	// A key written twice in one request is fenced against its first
	// write, as if the writes had come one after the other.
	pending := map[Key]partition.Record{}
	var recs []stateRecord
	var accepted []*writeEntry
	for _, e := range entries {
		key := e.in.w.Key
		stored, found := pending[key]
		if !found {
			stored, found = s.states[key]
		}
		rec, code, msg := fence(stored, found, e.in)
		if code != 0 {
			e.code, e.msg = code, msg
			continue
		}
		pending[key] = rec
		recs = append(recs, stateRecord{key: key, value: &rec})
		accepted = append(accepted, e)
	}
	s.mu.Unlock()
	if len(recs) == 0 {
		return
	}

	if err := s.appendLocked(ctx, recs); err != nil {
		code := runtime.AppendErrorCode(err)
		if s.ctx.Err() != nil {
			code = codeNotCoordinator // resigned while appending
		}
		for _, e := range accepted {
			e.code, e.msg = code, fmt.Sprintf("appending to %s-%d: %v", raftmeta.MirrorStateTopic, s.partition, err)
		}
		s.reloadLocked(err)
		return
	}
	s.mu.Lock()
	if s.state == shardActive {
		for _, r := range recs {
			s.states[r.key] = *r.value
		}
	}
	s.mu.Unlock()
	for i, e := range accepted {
		e.stateEpoch = recs[i].value.StateEpoch
	}
}
