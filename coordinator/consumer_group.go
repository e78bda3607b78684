package coordinator

import (
	"sort"
)

// consumerGroupState is a consumer group's state (ConsumerGroup.ConsumerGroupState).
type consumerGroupState int8

const (
	cgEmpty       consumerGroupState = iota // no members
	cgAssigning                             // the group epoch is ahead of the target assignment's
	cgReconciling                           // members are moving to the target assignment
	cgStable                                // every member has its target assignment
	cgDead                                  // deleted
)

// String is the state's name as ListGroups and ConsumerGroupDescribe report it.
func (s consumerGroupState) String() string {
	switch s {
	case cgEmpty:
		return "Empty"
	case cgAssigning:
		return "Assigning"
	case cgReconciling:
		return "Reconciling"
	case cgStable:
		return "Stable"
	}
	return "Dead"
}

// resolvedRegex is a regular expression resolved against the metadata
// image (ResolvedRegularExpression): the matching topics, the image
// version they were read from and when.
type resolvedRegex struct {
	topics    []string // sorted
	version   int64
	timestamp int64
}

// consumerGroup is a KIP-848 consumer group (ConsumerGroup.java). It is
// changed only by replaying records (shard.replayConsumer), whether they
// were read from the log or just decided by a heartbeat, so a reload
// rebuilds exactly the group that was served. Every method runs under the
// shard mutex.
type consumerGroup struct {
	id string
	// groupEpoch is bumped by every change of membership, subscriptions
	// or subscribed topics' metadata; metadataHash summarizes the latter.
	groupEpoch   int32
	metadataHash int64
	// assignmentEpoch is the group epoch the target assignment was
	// computed for.
	assignmentEpoch int32

	members map[string]*consumerMember
	// staticMembers maps instance ids to member ids.
	staticMembers map[string]string
	// target is the target assignment of each member.
	target map[string]assignment
	// partitionEpochs is the epoch of the member owning each partition
	// (assigned or pending revocation): a partition is handed to another
	// member only once its owner released it.
	partitionEpochs map[topicID]map[int32]int32
	// regexes are the resolved regular expressions members subscribe to.
	regexes map[string]resolvedRegex

	// metadataRefreshImage/Epoch note the image offset and group epoch the
	// metadata hash was last checked at: a newer image (topics created,
	// deleted or grown) or a replayed epoch makes the next heartbeat check
	// it again (ModernGroup.hasMetadataExpired, requestMetadataRefresh).
	metadataRefreshImage uint64
	metadataRefreshEpoch int32
	metadataRefreshed    bool
	// lastRegexRefreshMs is when the regexes were last resolved.
	lastRegexRefreshMs int64
}

func newConsumerGroup(id string) *consumerGroup {
	return &consumerGroup{
		id:              id,
		members:         map[string]*consumerMember{},
		staticMembers:   map[string]string{},
		target:          map[string]assignment{},
		partitionEpochs: map[topicID]map[int32]int32{},
		regexes:         map[string]resolvedRegex{},
	}
}

// state is derived from the epochs and members, as ConsumerGroup.maybeUpdateGroupState.
func (g *consumerGroup) state() consumerGroupState {
	switch {
	case len(g.members) == 0:
		return cgEmpty
	case g.groupEpoch != g.assignmentEpoch:
		return cgAssigning
	}
	for _, m := range g.members {
		if !m.isReconciledTo(g.assignmentEpoch) {
			return cgReconciling
		}
	}
	return cgStable
}

func (g *consumerGroup) isEmpty() bool { return len(g.members) == 0 }

func (g *consumerGroup) member(id string) *consumerMember { return g.members[id] }

// staticMember returns the member holding instanceID, nil if none.
func (g *consumerGroup) staticMember(instanceID string) *consumerMember {
	if instanceID == "" {
		return nil
	}
	return g.members[g.staticMembers[instanceID]]
}

// targetOf is a member's target assignment; a static member replacing
// another inherits the replaced member's until the next assignment
// (ConsumerGroup.targetAssignment(memberId, instanceId)).
func (g *consumerGroup) targetOf(memberID, instanceID string) assignment {
	if a, ok := g.target[memberID]; ok {
		return a
	}
	if old := g.staticMember(instanceID); old != nil {
		return g.target[old.id]
	}
	return assignment{}
}

// currentPartitionEpoch is the epoch of the partition's owner, -1 if it is free.
func (g *consumerGroup) currentPartitionEpoch(t topicID, p int32) int32 {
	if e, ok := g.partitionEpochs[t][p]; ok {
		return e
	}
	return -1
}

// updateMember installs m, moving its partitions' ownership
// (ConsumerGroup.updateMember).
func (g *consumerGroup) updateMember(m consumerMember) {
	if old := g.members[m.id]; old != nil {
		g.releasePartitions(old)
		if old.instanceID != "" && old.instanceID != m.instanceID && g.staticMembers[old.instanceID] == m.id {
			delete(g.staticMembers, old.instanceID)
		}
	}
	g.members[m.id] = &m
	if m.instanceID != "" {
		g.staticMembers[m.instanceID] = m.id
	}
	g.claimPartitions(&m)
}

// removeMember drops a member and frees its partitions.
func (g *consumerGroup) removeMember(id string) {
	old := g.members[id]
	if old == nil {
		return
	}
	g.releasePartitions(old)
	delete(g.members, id)
	if old.instanceID != "" && g.staticMembers[old.instanceID] == id {
		delete(g.staticMembers, old.instanceID)
	}
}

func (g *consumerGroup) claimPartitions(m *consumerMember) {
	for _, a := range []assignment{m.assigned, m.pendingRevocation} {
		for t, ps := range a {
			byP := g.partitionEpochs[t]
			if byP == nil {
				byP = map[int32]int32{}
				g.partitionEpochs[t] = byP
			}
			for _, p := range ps {
				byP[p] = m.memberEpoch
			}
		}
	}
}

func (g *consumerGroup) releasePartitions(m *consumerMember) {
	for _, a := range []assignment{m.assigned, m.pendingRevocation} {
		for t, ps := range a {
			byP := g.partitionEpochs[t]
			for _, p := range ps {
				if e, ok := byP[p]; ok && e == m.memberEpoch {
					delete(byP, p)
				}
			}
			if len(byP) == 0 {
				delete(g.partitionEpochs, t)
			}
		}
	}
}

// subscribedRegexCounts counts the members subscribed to each regex.
func (g *consumerGroup) subscribedRegexCounts() map[string]int {
	out := map[string]int{}
	for _, m := range g.members {
		if m.subscribedTopicRegex != "" {
			out[m.subscribedTopicRegex]++
		}
	}
	return out
}

// numRegexSubscribers counts the members subscribed to regex.
func (g *consumerGroup) numRegexSubscribers(regex string) int {
	return g.subscribedRegexCounts()[regex]
}

// subscribedTopicNames is every topic a member subscribes to, by name or
// through a resolved regex, with the old member replaced by the updated
// one (either may be nil) (ConsumerGroup.computeSubscribedTopicNames).
func (g *consumerGroup) subscribedTopicNames(old, updated *consumerMember) map[string]bool {
	out := map[string]bool{}
	regexes := map[string]bool{}
	add := func(m *consumerMember) {
		for _, t := range m.subscribedTopicNames {
			out[t] = true
		}
		if m.subscribedTopicRegex != "" {
			regexes[m.subscribedTopicRegex] = true
		}
	}
	for id, m := range g.members {
		if old != nil && id == old.id {
			continue
		}
		add(m)
	}
	if updated != nil {
		add(updated)
	}
	for re := range regexes {
		for _, t := range g.regexes[re].topics {
			out[t] = true
		}
	}
	return out
}

// isSubscribedToTopic reports whether a member consumes topic, which keeps
// its committed offsets from expiring and from OffsetDelete.
func (g *consumerGroup) isSubscribedToTopic(topic string) bool {
	return g.subscribedTopicNames(nil, nil)[topic]
}

// sortedMemberIDs returns the member ids in order.
func (g *consumerGroup) sortedMemberIDs() []string {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// preferredServerAssignor is the assignor most members ask for, ties to
// the first by name; "" if none asks (ConsumerGroup.computePreferredServerAssignor).
func (g *consumerGroup) preferredServerAssignor(old, updated *consumerMember) string {
	counts := map[string]int{}
	for id, m := range g.members {
		if (old != nil && id == old.id) || m.serverAssignor == "" {
			continue
		}
		counts[m.serverAssignor]++
	}
	if updated != nil && updated.serverAssignor != "" {
		counts[updated.serverAssignor]++
	}
	best := ""
	for name, n := range counts {
		if best == "" || n > counts[best] || (n == counts[best] && name < best) {
			best = name
		}
	}
	return best
}
