package coordinator

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerProtocolType is ConsumerProtocol.PROTOCOL_TYPE, the protocol type
// of Kafka consumers' groups.
const consumerProtocolType = "consumer"

// classicGroup is a classic-protocol group (ClassicGroup.java). Every
// method runs under the owning shard's mutex. Members are kept in join
// order, so leader succession and the member lists sent to the leader and
// DescribeGroups are deterministic (Kafka uses a HashMap's order).
type classicGroup struct {
	id            string
	state         groupState
	previousState groupState
	// currentStateTimestamp is when the group entered its state (ms), -1
	// when unknown (groups loaded from records that predate the field).
	currentStateTimestamp int64
	protocolType          string // "" until a member joins: a simple group (offsets only)
	protocolName          string // "" when no protocol is selected
	generationID          int32
	leaderID              string // "" when the group has no leader

	members []*member
	byID    map[string]*member
	// staticMembers maps group.instance.id to the current member id.
	staticMembers map[string]string
	// pendingJoinMembers got a member id with MEMBER_ID_REQUIRED and have
	// not joined with it yet (KIP-394).
	pendingJoinMembers map[string]bool
	numAwaitingJoin    int
	// supportedProtocols counts, per protocol name, the members that
	// support it.
	supportedProtocols map[string]int
	// pendingSyncMembers have not sent SyncGroup for this generation.
	pendingSyncMembers map[string]bool
	// subscribedTopics are the topics the members of a "consumer" group
	// subscribe to; subscribedKnown is false when that is unknown.
	subscribedTopics map[string]bool
	subscribedKnown  bool
	// newMemberAdded extends the initial rebalance delay while members
	// keep arriving (group.initial.rebalance.delay.ms).
	newMemberAdded bool
}

func newClassicGroup(id string, state groupState, nowMs int64) *classicGroup {
	return &classicGroup{
		id:                    id,
		state:                 state,
		previousState:         stateDead,
		currentStateTimestamp: nowMs,
		byID:                  map[string]*member{},
		staticMembers:         map[string]string{},
		pendingJoinMembers:    map[string]bool{},
		supportedProtocols:    map[string]int{},
		pendingSyncMembers:    map[string]bool{},
	}
}

func (g *classicGroup) is(s groupState) bool           { return g.state == s }
func (g *classicGroup) isEmpty() bool                  { return g.state == stateEmpty }
func (g *classicGroup) hasMember(id string) bool       { return g.byID[id] != nil }
func (g *classicGroup) member(id string) *member       { return g.byID[id] }
func (g *classicGroup) isLeader(id string) bool        { return g.leaderID != "" && g.leaderID == id }
func (g *classicGroup) isPendingMember(id string) bool { return g.pendingJoinMembers[id] }
func (g *classicGroup) hasStaticMember(instanceID string) bool {
	_, ok := g.staticMembers[instanceID]
	return ok
}
func (g *classicGroup) staticMemberID(instanceID string) string { return g.staticMembers[instanceID] }
func (g *classicGroup) canRebalance() bool                      { return statePreparingRebalance.validPrevious(g.state) }
func (g *classicGroup) usesConsumerProtocol() bool              { return g.protocolType == consumerProtocolType }

// transitionTo moves the group to s, remembering where it came from and
// when (ClassicGroup.transitionTo). An invalid transition is a bug.
func (g *classicGroup) transitionTo(s groupState, nowMs int64) {
	if !s.validPrevious(g.state) {
		panic(fmt.Sprintf("coordinator: group %s cannot move from %s to %s", g.id, g.state, s))
	}
	g.previousState = g.state
	g.state = s
	g.currentStateTimestamp = nowMs
}

// add adds a member; joinCh is its parked JoinGroup, if any.
func (g *classicGroup) add(m *member, joinCh chan *kmsg.JoinGroupResponse) {
	if m.instanceID != nil {
		g.staticMembers[*m.instanceID] = m.id
	}
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	if g.leaderID == "" {
		g.leaderID = m.id
	}
	g.members = append(g.members, m)
	g.byID[m.id] = m
	g.incrementSupportedProtocols(m)
	m.joinCh = joinCh
	if m.isAwaitingJoin() {
		g.numAwaitingJoin++
	}
	delete(g.pendingJoinMembers, m.id)
}

// remove removes a member or a pending member. A removed leader is
// succeeded by the oldest remaining member.
func (g *classicGroup) remove(id string) {
	if m := g.byID[id]; m != nil {
		delete(g.byID, id)
		g.members = slices.DeleteFunc(g.members, func(x *member) bool { return x == m })
		g.decrementSupportedProtocols(m)
		if m.isAwaitingJoin() {
			g.numAwaitingJoin--
		}
		if m.instanceID != nil {
			delete(g.staticMembers, *m.instanceID)
		}
	}
	if g.isLeader(id) {
		g.leaderID = ""
		if len(g.members) > 0 {
			g.leaderID = g.members[0].id
		}
	}
	delete(g.pendingJoinMembers, id)
	delete(g.pendingSyncMembers, id)
}

// maybeElectNewJoinedLeader keeps the leader if it rejoined, otherwise
// makes the first rejoined member the leader. It is false when the group
// has no leader or no member rejoined.
func (g *classicGroup) maybeElectNewJoinedLeader() bool {
	if g.leaderID == "" {
		return false
	}
	if leader := g.byID[g.leaderID]; leader != nil && leader.isAwaitingJoin() {
		return true
	}
	for _, m := range g.members {
		if m.isAwaitingJoin() {
			g.leaderID = m.id
			return true
		}
	}
	return false
}

// replaceStaticMember gives a static member a new member id, fencing
// whatever request the old id has parked (FENCED_INSTANCE_ID), and keeps
// everything else, including its assignment.
func (g *classicGroup) replaceStaticMember(instanceID, oldID, newID string) *member {
	old := g.byID[oldID]
	g.completeJoin(old, &kmsg.JoinGroupResponse{
		ErrorCode:  fencedInstanceID,
		Generation: -1,
		MemberID:   oldID,
		Members:    []kmsg.JoinGroupResponseMember{},
	})
	g.completeSync(old, &kmsg.SyncGroupResponse{ErrorCode: fencedInstanceID, MemberAssignment: []byte{}})
	nm := &member{
		id:                 newID,
		instanceID:         old.instanceID,
		clientID:           old.clientID,
		clientHost:         old.clientHost,
		rebalanceTimeoutMs: old.rebalanceTimeoutMs,
		sessionTimeoutMs:   old.sessionTimeoutMs,
		protocolType:       old.protocolType,
		protocols:          old.protocols,
		assignment:         old.assignment,
	}
	delete(g.byID, oldID)
	g.byID[newID] = nm
	for i, m := range g.members {
		if m == old {
			g.members[i] = nm
		}
	}
	if g.isLeader(oldID) {
		g.leaderID = newID
	}
	g.staticMembers[instanceID] = newID
	return nm
}

// addPendingMember records a member id handed out with MEMBER_ID_REQUIRED.
func (g *classicGroup) addPendingMember(id string) { g.pendingJoinMembers[id] = true }

func (g *classicGroup) hasAllMembersJoined() bool {
	return len(g.members) == g.numAwaitingJoin && len(g.pendingJoinMembers) == 0
}

// notYetRejoinedMembers are the members without a parked JoinGroup.
func (g *classicGroup) notYetRejoinedMembers() []*member {
	var out []*member
	for _, m := range g.members {
		if !m.isAwaitingJoin() {
			out = append(out, m)
		}
	}
	return out
}

// rebalanceTimeoutMs is the largest of the members' rebalance timeouts.
func (g *classicGroup) rebalanceTimeoutMs() int32 {
	var t int32
	for _, m := range g.members {
		t = max(t, m.rebalanceTimeoutMs)
	}
	return t
}

// validateMember checks that the member exists and, for a static member,
// that the instance id maps to it (ClassicGroup.validateMember): error
// codes UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID, 0 when valid.
func (g *classicGroup) validateMember(memberID string, instanceID *string) int16 {
	if instanceID != nil {
		existing, ok := g.staticMembers[*instanceID]
		if !ok {
			return unknownMemberID
		}
		if existing != memberID {
			return fencedInstanceID
		}
	}
	if !g.hasMember(memberID) {
		return unknownMemberID
	}
	return 0
}

// selectProtocol picks the protocol every member supports with the most
// votes, each member voting for its most preferred candidate. Ties go to
// the protocol that got its first vote earliest in join order (Kafka
// breaks ties by HashMap order).
func (g *classicGroup) selectProtocol() string {
	candidates := map[string]bool{}
	for name, n := range g.supportedProtocols {
		if n == len(g.members) {
			candidates[name] = true
		}
	}
	votes := map[string]int{}
	var order []string
	for _, m := range g.members {
		v := m.vote(candidates)
		if _, seen := votes[v]; !seen {
			order = append(order, v)
		}
		votes[v]++
	}
	best := ""
	for _, name := range order {
		if best == "" || votes[name] > votes[best] {
			best = name
		}
	}
	return best
}

func (g *classicGroup) incrementSupportedProtocols(m *member) {
	for _, p := range m.protocols {
		g.supportedProtocols[p.Name]++
	}
}

func (g *classicGroup) decrementSupportedProtocols(m *member) {
	for _, p := range m.protocols {
		g.supportedProtocols[p.Name]--
	}
}

// supportsProtocols reports whether a member with this protocol type and
// protocols may join: an empty group takes any non-empty type and protocol
// list; otherwise the type must match and one protocol must be supported
// by every current member.
func (g *classicGroup) supportsProtocols(protocolType string, protocols []kmsg.JoinGroupRequestProtocol) bool {
	if g.is(stateEmpty) {
		return protocolType != "" && len(protocols) > 0
	}
	if g.protocolType != protocolType {
		return false
	}
	for _, p := range protocols {
		if g.supportedProtocols[p.Name] == len(g.members) {
			return true
		}
	}
	return false
}

// updateMember replaces a member's protocols and timeouts and parks its
// new JoinGroup (ClassicGroup.updateMember). A JoinGroup already parked
// for the same member is answered first: the client gave up on it.
func (g *classicGroup) updateMember(m *member, protocols []kmsg.JoinGroupRequestProtocol, rebalanceTimeoutMs, sessionTimeoutMs int32, joinCh chan *kmsg.JoinGroupResponse) {
	g.decrementSupportedProtocols(m)
	m.protocols = protocols
	g.incrementSupportedProtocols(m)
	m.rebalanceTimeoutMs = rebalanceTimeoutMs
	m.sessionTimeoutMs = sessionTimeoutMs
	switch {
	case joinCh != nil && !m.isAwaitingJoin():
		g.numAwaitingJoin++
	case joinCh == nil && m.isAwaitingJoin():
		g.numAwaitingJoin--
	case joinCh != nil && m.isAwaitingJoin():
		m.joinCh <- &kmsg.JoinGroupResponse{ErrorCode: rebalanceInProgress, Generation: -1, MemberID: m.id}
	}
	m.joinCh = joinCh
}

// completeJoin answers a member's parked JoinGroup; false if none is.
func (g *classicGroup) completeJoin(m *member, resp *kmsg.JoinGroupResponse) bool {
	if !m.isAwaitingJoin() {
		return false
	}
	m.joinCh <- resp
	m.joinCh = nil
	g.numAwaitingJoin--
	return true
}

// setAwaitingSync parks a member's SyncGroup, answering one already parked.
func (g *classicGroup) setAwaitingSync(m *member, ch chan *kmsg.SyncGroupResponse) {
	if m.syncCh != nil {
		m.syncCh <- &kmsg.SyncGroupResponse{ErrorCode: rebalanceInProgress, MemberAssignment: []byte{}}
	}
	m.syncCh = ch
}

// completeSync answers a member's parked SyncGroup; false if none is.
func (g *classicGroup) completeSync(m *member, resp *kmsg.SyncGroupResponse) bool {
	if !m.isAwaitingSync() {
		return false
	}
	m.syncCh <- resp
	m.syncCh = nil
	return true
}

// initNextGeneration starts the next generation: with members, select the
// protocol and await their SyncGroups; without, become Empty.
func (g *classicGroup) initNextGeneration(nowMs int64) {
	g.generationID++
	if len(g.members) > 0 {
		g.protocolName = g.selectProtocol()
		g.computeSubscribedTopics()
		g.transitionTo(stateCompletingRebalance, nowMs)
	} else {
		g.protocolName = ""
		g.computeSubscribedTopics()
		g.transitionTo(stateEmpty, nowMs)
	}
	clear(g.pendingSyncMembers)
}

// currentMembers is the member list the leader receives in its JoinGroup
// response: every member with its metadata for the selected protocol.
func (g *classicGroup) currentMembers() []kmsg.JoinGroupResponseMember {
	out := make([]kmsg.JoinGroupResponseMember, 0, len(g.members))
	for _, m := range g.members {
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = m.id
		jm.InstanceID = m.instanceID
		jm.ProtocolMetadata = m.metadata(g.protocolName)
		out = append(out, jm)
	}
	return out
}

// assignments maps member ids to their current assignments.
func (g *classicGroup) assignments() map[string][]byte {
	out := make(map[string][]byte, len(g.members))
	for _, m := range g.members {
		out[m.id] = m.assignment
	}
	return out
}

// computeSubscribedTopics parses the members' consumer protocol
// subscriptions (the v0 prefix every version shares: version, topics) to
// learn which topics a "consumer" group consumes; unknown for other
// protocol types, or when a subscription does not parse
// (ClassicGroup.computeSubscribedTopics).
func (g *classicGroup) computeSubscribedTopics() {
	g.subscribedTopics, g.subscribedKnown = nil, false
	if g.protocolType != consumerProtocolType {
		return
	}
	if len(g.members) == 0 {
		g.subscribedTopics, g.subscribedKnown = map[string]bool{}, true
		return
	}
	if g.protocolName == "" {
		return
	}
	topics := map[string]bool{}
	for _, m := range g.members {
		ts, ok := parseSubscriptionTopics(m.metadata(g.protocolName))
		if !ok {
			return
		}
		for _, t := range ts {
			topics[t] = true
		}
	}
	g.subscribedTopics, g.subscribedKnown = topics, true
}

// isSubscribedToTopic reports whether the group consumes topic; when that
// is unknown, a "consumer" group is assumed to (ClassicGroup.isSubscribedToTopic).
func (g *classicGroup) isSubscribedToTopic(topic string) bool {
	if g.subscribedKnown {
		return g.subscribedTopics[topic]
	}
	return g.usesConsumerProtocol()
}

// parseSubscriptionTopics reads the topics of a ConsumerProtocolSubscription:
// int16 version, then (v0 schema) an int32 count of int16-length strings.
func parseSubscriptionTopics(b []byte) ([]string, bool) {
	if len(b) < 6 {
		return nil, false
	}
	n := int32(binary.BigEndian.Uint32(b[2:]))
	b = b[6:]
	if n < 0 || int(n) > len(b)/2 {
		return nil, false
	}
	topics := make([]string, 0, n)
	for range n {
		if len(b) < 2 {
			return nil, false
		}
		l := int16(binary.BigEndian.Uint16(b))
		b = b[2:]
		if l < 0 || int(l) > len(b) {
			return nil, false
		}
		topics = append(topics, string(b[:l]))
		b = b[l:]
	}
	return topics, true
}

// newMemberID is Kafka's generateMemberId: the group.instance.id (static
// members) or the client id, a dash, and a random UUID.
func newMemberID(clientID string, instanceID *string) string {
	prefix := clientID
	if instanceID != nil {
		prefix = *instanceID
	}
	return prefix + "-" + randomUUID()
}

// randomUUID is a version 4 UUID in its canonical text form, as Java's
// UUID.randomUUID().toString().
func randomUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (Go 1.24+)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
