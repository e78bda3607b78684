package coordinator

import (
	"context"
	"log/slog"
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/runtime"
)

// shardState is where a shard is in its life.
type shardState int8

const (
	shardLoading shardState = iota // replaying the partition (or about to, after a failed append): COORDINATOR_LOAD_IN_PROGRESS
	shardActive                    // serving its groups
	shardClosed                    // resigned, failed to load, or replaced: NOT_COORDINATOR
)

// shard is the state of the groups of one __consumer_offsets partition led
// by this broker (GroupCoordinatorShard: GroupMetadataManager and
// OffsetMetadataManager together). Everything below mu is guarded by it.
type shard struct {
	c         *GroupCoordinator
	partition int32
	epoch     int32
	log       *slog.Logger

	ctx    context.Context // cancelled when the shard is unloaded
	cancel context.CancelFunc
	timer  *runtime.Timer[timerKey]
	// writer appends the records queued under mu, which guards its queue
	// (writer.go).
	writer *runtime.Writer

	mu    sync.Mutex
	state shardState
	// loaded is set once load returned. Until then load fills groups and
	// offsets without the lock, and the shard has served no one: unload
	// must leave them alone.
	loaded bool
	groups map[string]*classicGroup
	// consumerGroups are the KIP-848 groups; a group id is in groups or
	// here, never both.
	consumerGroups map[string]*consumerGroup
	// joiningGroup is the new consumer group a heartbeat is deciding on,
	// until its records are replayed (newJoiningGroup).
	joiningGroup *consumerGroup
	// shareGroups are the KIP-932 share groups (share_group*.go); a group
	// id names one group of one type.
	shareGroups map[string]*shareGroup
	offsets     offsetStore
	// pending are the offsets of open transactions (TxnOffsetCommit),
	// committed or dropped by their markers.
	pending pendingOffsets
	// txnGuards are the transactional commits waiting for the transaction
	// coordinator's confirmation (txn_verify.go).
	txnGuards txnGuards
	// nextRecordOffset orders the offsets decided by this shard with
	// those it loaded: past every offset loading read, it gives each
	// record decided since a position that sorts like the offset the log
	// will give it, as the writer appends in decision order
	// (takeRecordOffset).
	nextRecordOffset int64
}

func newShard(c *GroupCoordinator, partition, epoch int32) *shard {
	ctx, cancel := context.WithCancel(context.Background())
	s := &shard{
		c:         c,
		partition: partition,
		epoch:     epoch,
		log:       c.log.With("partition", partition, "epoch", epoch),
		ctx:       ctx,
		cancel:    cancel,
		groups:    map[string]*classicGroup{},
		offsets:   offsetStore{},

		consumerGroups: map[string]*consumerGroup{},
		shareGroups:    map[string]*shareGroup{},
		pending:        newPendingOffsets(),
		txnGuards:      txnGuards{},
	}
	s.timer = runtime.NewTimer[timerKey](c.cfg.Clock, &s.mu)
	s.writer = newShardWriter(s)
	return s
}

// nowMs is the coordinator clock in milliseconds, Kafka's time unit.
func (s *shard) nowMs() int64 { return s.c.cfg.Clock.Now().UnixMilli() }

// Epoch is the leader epoch the shard was loaded at (runtime.Shard).
func (s *shard) Epoch() int32 { return s.epoch }

// Closed reports whether the shard stopped serving: unloaded, replaced or
// failed to load (runtime.Shard).
func (s *shard) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == shardClosed
}

// Run loads the partition and then serves it until the shard is unloaded
// (runtime.Shard).
func (s *shard) Run() {
	err := s.load(s.ctx)
	s.mu.Lock()
	s.loaded = true
	if err != nil {
		if s.state == shardLoading {
			s.log.Error("loading group metadata failed; not coordinating this partition", "err", err)
			s.state = shardClosed
		}
		s.mu.Unlock()
		return
	}
	if s.state != shardLoading { // unloaded while loading
		s.mu.Unlock()
		return
	}
	s.state = shardActive
	s.onLoaded()
	groups := len(s.groups)
	s.mu.Unlock()
	s.log.Debug("loaded group metadata", "groups", groups)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.timer.Run(s.ctx) }()
	go func() { defer wg.Done(); s.writer.Run(s.ctx) }()
	wg.Wait()
}

// onLoaded starts serving loaded groups: every member's session timeout
// starts now, a group over group.max.size (the config may have shrunk)
// rebalances, and offset expiration is scheduled
// (GroupMetadataManager.onLoaded, GroupCoordinatorShard.onLoaded).
func (s *shard) onLoaded() {
	for _, id := range sortedKeysOf(s.groups) {
		g := s.groups[id]
		for _, m := range g.members {
			s.rescheduleHeartbeat(g, m)
		}
		if len(g.members) > int(s.c.cfg.MaxGroupSize) {
			s.prepareRebalance(g, "freshly-loaded group is over group.max.size")
		}
	}
	s.onConsumerGroupsLoaded()
	s.onShareGroupsLoaded()
	s.scheduleExpiration()
}

// Unload stops serving: groups die, parked requests get NOT_COORDINATOR,
// queued writes fail, and the goroutines stop (GroupMetadataManager.onUnloaded,
// runtime.Shard). Unloading a closed shard only cancels its context again.
func (s *shard) Unload() {
	s.mu.Lock()
	if s.state == shardClosed {
		s.mu.Unlock()
		s.cancel()
		return
	}
	s.state = shardClosed
	now := s.nowMs()
	for _, g := range s.loadedGroups() {
		prev := g.state
		g.transitionTo(stateDead, now)
		switch prev {
		case statePreparingRebalance:
			for _, m := range g.members {
				g.completeJoin(m, &kmsg.JoinGroupResponse{ErrorCode: notCoordinator, Generation: -1, MemberID: m.id})
			}
		case stateCompletingRebalance, stateStable:
			for _, m := range g.members {
				g.completeSync(m, &kmsg.SyncGroupResponse{ErrorCode: notCoordinator, MemberAssignment: []byte{}})
			}
		}
	}
	s.timer.Clear()
	s.writer.FailQueued(runtime.ErrUnloaded)
	s.mu.Unlock()
	s.cancel()
	s.log.Debug("unloaded group metadata")
}

// takeRecordOffset returns the position of a record (an offset commit or
// a transaction marker) decided now, for comparisons with the
// recordOffset of other offsets (Kafka's runtime replays a record at the
// offset its batch will give it; this shard knows the order only, which
// is all OffsetMetadataManager compares). Called with mu held.
func (s *shard) takeRecordOffset() int64 {
	o := s.nextRecordOffset
	s.nextRecordOffset++
	return o
}

// removeOffset applies an offset tombstone: the committed offset goes, and
// so do the open transactions' offsets for the partition
// (OffsetMetadataManager.replay of a tombstone).
func (s *shard) removeOffset(group, topic string, partition int32) {
	s.offsets.remove(group, topic, partition)
	s.pending.remove(group, topic, partition)
}

// group returns a group (nil if none), for callers holding mu.
func (s *shard) group(id string) *classicGroup { return s.groups[id] }

// loadedGroups is groups once load returned, nil while it runs (a shard
// resigned while loading: its groups are load's, and no member waits on
// them). Called with mu held.
func (s *shard) loadedGroups() map[string]*classicGroup {
	if !s.loaded {
		return nil
	}
	return s.groups
}

// getOrCreateGroup returns the group, creating an Empty one if missing
// (GroupMetadataManager.getOrMaybeCreateClassicGroup).
func (s *shard) getOrCreateGroup(id string) *classicGroup {
	g := s.groups[id]
	if g == nil {
		g = newClassicGroup(id, stateEmpty, s.nowMs())
		s.groups[id] = g
	}
	return g
}

// removeConsumerGroup drops a consumer group and its timers.
func (s *shard) removeConsumerGroup(id string) {
	if g := s.consumerGroups[id]; g != nil {
		for mid := range g.members {
			s.cancelConsumerTimers(id, mid)
		}
		delete(s.consumerGroups, id)
	}
}

// holdOrphanedOffsets gives the committed offsets of a group whose
// records were just tombstoned (a group replaced by one of the other
// protocol) a simple group to belong to, as replaying an OffsetCommit
// creates one: Strait writes no record for a new classic group until its
// first rebalance completes, so without it a reload would leave offsets
// that no group, and no OffsetFetch, sees.
func (s *shard) holdOrphanedOffsets(id string) {
	if s.groups[id] == nil && s.consumerGroups[id] == nil && len(s.offsets.topics(id)) > 0 {
		s.getOrCreateGroup(id)
	}
}

// removeGroup drops a group: it goes Dead, so callbacks still holding it
// see that it is gone.
func (s *shard) removeGroup(id string) {
	if g := s.groups[id]; g != nil {
		g.transitionTo(stateDead, s.nowMs())
		delete(s.groups, id)
	}
}

// sortedGroupIDs returns the ids of the classic and consumer groups, sorted.
func (s *shard) sortedGroupIDs() []string {
	ids := make([]string, 0, len(s.groups)+len(s.consumerGroups))
	for id := range s.groups {
		ids = append(ids, id)
	}
	for id := range s.consumerGroups {
		ids = append(ids, id)
	}
	sortStrings(ids)
	return ids
}

func sortStrings(s []string) { sort.Strings(s) }
