package coordinator

import (
	"context"
	"fmt"
	"slices"

	"github.com/strait-io/strait/raftmeta"
)

// SharePartitionID names one share partition of a group: a topic by id
// and a partition.
type SharePartitionID struct {
	TopicID   [16]byte
	Partition int32
}

// ShareStateInit is a partition to initialize and where it starts: -1
// (Kafka's PartitionFactory.UNINITIALIZED_START_OFFSET) leaves it to the
// share partition, which applies share.auto.offset.reset when it is first
// fetched; AlterShareGroupOffsets gives an offset.
type ShareStateInit struct {
	SharePartitionID
	StartOffset int64
}

// SharePartitionResult is one partition's outcome: Err is nil or the
// error the share coordinator answered, a *kerr.Error where Kafka has a
// code.
type SharePartitionResult struct {
	SharePartitionID
	Err error
}

// ShareStateSummary is ReadShareGroupStateSummary's answer for one
// partition. DeliveryCompleteCount is -1 when unknown (KIP-1226).
type ShareStateSummary struct {
	SharePartitionID
	StateEpoch            int32
	LeaderEpoch           int32
	StartOffset           int64
	DeliveryCompleteCount int32
	Err                   error
}

// ShareStatePersister is the share coordinator as the group coordinator
// uses it: Kafka's Persister (DefaultStatePersister over the
// InitializeShareGroupState, ReadShareGroupStateSummary and
// DeleteShareGroupState RPCs). The broker adapts its share coordinator
// client to it. A returned error fails the whole call; per-partition
// errors are in the results. Calls may block: the coordinator never holds
// a shard's lock across one.
type ShareStatePersister interface {
	// InitializeState sets the share-group state of the partitions at
	// stateEpoch (the group epoch), replacing any state they had.
	InitializeState(ctx context.Context, group string, stateEpoch int32, partitions []ShareStateInit) ([]SharePartitionResult, error)
	// ReadSummary reads the partitions' start offsets and epochs.
	ReadSummary(ctx context.Context, group string, partitions []SharePartitionID) ([]ShareStateSummary, error)
	// DeleteState deletes the partitions' share-group state.
	DeleteState(ctx context.Context, group string, partitions []SharePartitionID) ([]SharePartitionResult, error)
}

// firstPartitionError is the first partition's error, nil if none.
func firstPartitionError(rs []SharePartitionResult) error {
	for _, r := range rs {
		if r.Err != nil {
			return fmt.Errorf("%x-%d: %w", r.TopicID, r.Partition, r.Err)
		}
	}
	return nil
}

// shareInit is the share state a heartbeat (or AlterShareGroupOffsets)
// asks the share coordinator to initialize once its records are written.
type shareInit struct {
	group string
	epoch int32
	parts assignment
	// offsets are the start offsets AlterShareGroupOffsets gives; a
	// partition without one starts at -1.
	offsets map[SharePartitionID]int64
}

func (in shareInit) requests() []ShareStateInit {
	var out []ShareStateInit
	for _, t := range in.parts.sortedTopics() {
		for _, p := range in.parts[t] {
			id := SharePartitionID{TopicID: t, Partition: p}
			start, ok := in.offsets[id]
			if !ok {
				start = -1
			}
			out = append(out, ShareStateInit{SharePartitionID: id, StartOffset: start})
		}
	}
	return out
}

// maybeInitializeShareState is maybeCreateInitializeShareGroupStateRequest:
// the subscribed partitions whose state is neither initialized nor being
// initialized (for less than group.share.initialize.retry.interval.ms)
// are added to the initializing ones, and returned to be initialized.
// Called with mu held.
func (s *shard) maybeInitializeShareState(g *shareGroup, groupEpoch int32, subscribed map[string]int, img *raftmeta.Image, recs *[]shareRecord) *shareInit {
	if len(subscribed) == 0 || len(img.Topics) == 0 {
		return nil
	}
	changes := s.uninitializedShareTopics(g, subscribed, img)
	if len(changes) == 0 {
		return nil
	}
	p := g.partitions.clone()
	p.initializing = combineInitTopics(p.initializing, changes)
	for t := range changes {
		if p.deleting[t] {
			// Kafka's addInitializingTopicsRecords: a topic subscribed
			// again while its state was being deleted is initialized anew.
			s.log.Warn("initializing a topic of a share group found in deleting state as well; removing it from deleting", "group", g.id, "topic", changes[t].name)
			delete(p.deleting, t)
		}
	}
	*recs = append(*recs, newSharePartitionsRecord(g.id, p, img))
	init := &shareInit{group: g.id, epoch: groupEpoch, parts: assignment{}}
	for t, v := range changes {
		init.parts[t] = v.partitions
	}
	return init
}

// uninitializedShareTopics is subscribedTopicsChangeMap: each subscribed
// topic's partitions neither initialized nor freshly initializing.
func (s *shard) uninitializedShareTopics(g *shareGroup, subscribed map[string]int, img *raftmeta.Image) map[topicID]shareInitTopic {
	now := s.nowMs()
	retry := s.c.cfg.Share.InitializeRetryInterval.Milliseconds()
	fresh := map[topicID]shareInitTopic{}
	for t, v := range g.partitions.initializing {
		if now-v.timestampMs < retry {
			fresh[t] = v
		}
	}
	have := combineInitTopics(g.partitions.initialized, fresh)
	out := map[topicID]shareInitTopic{}
	for _, name := range sortedKeysOf(subscribed) {
		topic := img.Topics[name]
		if topic == nil {
			continue
		}
		id := topicID(topic.ID)
		done := have[id].partitions
		var missing []int32
		for p := range int32(len(topic.Partitions)) {
			if !slices.Contains(done, p) {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			out[id] = shareInitTopic{name: name, partitions: missing, timestampMs: now}
		}
	}
	return out
}

// initializedAssignmentPending reports whether initialized partitions of a
// subscribed topic are not (all) in the target assignment, so the group
// epoch must move for them to be assigned
// (GroupMetadataManager.initializedAssignmentPending).
func (s *shard) initializedAssignmentPending(g *shareGroup) bool {
	if g.isEmpty() || len(g.partitions.initialized) == 0 {
		return false
	}
	subscribed := g.subscribedTopicNames(nil, nil)
	if len(subscribed) == 0 {
		return false
	}
	assigned := assignment{}
	for _, a := range g.target {
		assigned = unionAssignments(assigned, a)
	}
	img := s.c.image()
	for t, v := range g.partitions.initialized {
		if img.TopicsByID[raftmeta.Uuid(t)] == nil {
			// A topic deleted while this shard did not see it go (Kafka
			// compares by name alone): nothing can assign it, so it must
			// not bump the epoch at every heartbeat.
			continue
		}
		if subscribed[v.name] > 0 && !slices.Equal(assigned[t], v.partitions) {
			return true
		}
	}
	return false
}

// initializeShareState asks the share coordinator to initialize what a
// heartbeat wrote as initializing, then writes the partitions as
// initialized, or drops them from initializing if it failed
// (GroupCoordinatorService.persisterInitialize): the next heartbeat
// assigns them, or asks again. It runs on its own goroutine and gives up
// when the shard is unloaded.
func (s *shard) initializeShareState(init shareInit) {
	ctx, cancel := context.WithTimeout(s.ctx, s.c.cfg.Share.InitializeRetryInterval)
	defer cancel()
	results, err := s.c.cfg.Share.Persister.InitializeState(ctx, init.group, init.epoch, init.requests())
	if err == nil {
		err = firstPartitionError(results)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != shardActive {
		return
	}
	g := s.shareGroups[init.group]
	if g == nil {
		return
	}
	var recs []shareRecord
	if err != nil {
		s.log.Warn("initializing share group state failed; the next heartbeat retries", "group", init.group, "err", err)
		recs = s.uninitializeShareState(g, init.parts)
	} else {
		recs = s.markShareStateInitialized(g, init.parts)
	}
	if len(recs) > 0 {
		s.writeShareRecords(recs, false)
	}
}

// markShareStateInitialized is GroupMetadataManager.initializeShareGroupState:
// the partitions move from initializing to initialized.
func (s *shard) markShareStateInitialized(g *shareGroup, parts assignment) []shareRecord {
	if len(parts) == 0 {
		return nil
	}
	img := s.c.image()
	now := s.nowMs()
	added := map[topicID]shareInitTopic{}
	for t, ps := range parts {
		name := "<UNKNOWN>"
		if topic := img.TopicsByID[raftmeta.Uuid(t)]; topic != nil {
			name = topic.Name
		}
		added[t] = shareInitTopic{name: name, partitions: ps, timestampMs: now}
	}
	p := g.partitions.clone()
	p.initialized = combineInitTopics(p.initialized, added)
	p.initializing = removeInitPartitions(p.initializing, parts)
	return []shareRecord{newSharePartitionsRecord(g.id, p, img)}
}

// uninitializeShareState is GroupMetadataManager.uninitializeShareGroupState:
// the partitions leave initializing, so the next heartbeat asks again.
func (s *shard) uninitializeShareState(g *shareGroup, parts assignment) []shareRecord {
	if len(g.partitions.initializing) == 0 || len(parts) == 0 {
		return nil
	}
	p := g.partitions.clone()
	p.initializing = removeInitPartitions(p.initializing, parts)
	return []shareRecord{newSharePartitionsRecord(g.id, p, s.c.image())}
}

// cleanupDeletedShareTopics drops deleted topics from every share group's
// state partition metadata (GroupMetadataManager.maybeCleanupShareGroupState;
// the share coordinator deletes their state itself). Called with mu held.
func (s *shard) cleanupDeletedShareTopics(deleted map[topicID]bool) {
	img := s.c.image()
	var recs []shareRecord
	for _, id := range sortedKeysOf(s.shareGroups) {
		g := s.shareGroups[id]
		p := g.partitions.clone()
		changed := false
		for t := range deleted {
			_, a := p.initializing[t]
			_, b := p.initialized[t]
			if a || b || p.deleting[t] {
				delete(p.initializing, t)
				delete(p.initialized, t)
				delete(p.deleting, t)
				changed = true
			}
		}
		if changed {
			recs = append(recs, newSharePartitionsRecord(id, p, img))
		}
	}
	if len(recs) > 0 {
		s.log.Info("removing deleted topics from share groups' state metadata", "records", len(recs))
		s.writeShareRecords(recs, false)
	}
}
