package raftmeta

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

// brokerSession is what the active controller knows of one broker's
// heartbeats (BrokerHeartbeatManager.BrokerHeartbeatState). It is not in
// the metadata log: a new active controller starts every session afresh,
// as Kafka's does when ClusterControlManager activates.
type brokerSession struct {
	lastContact time.Time
	// metadataOffset is the offset the broker last reported having
	// applied (-1: none yet).
	metadataOffset int64
	// controlledShutdownOffset is the first offset after the batch that
	// put the broker in controlled shutdown (-1: not shutting down). The
	// broker may stop once every active broker has applied it, so that
	// none still sends clients to it.
	controlledShutdownOffset int64
}

// sessions tracks broker sessions on the active controller
// (BrokerHeartbeatManager). It is used only inside Controller.write's
// build functions, which run one at a time, so it needs no lock.
type sessions struct {
	clock   clock.Clock
	timeout time.Duration // <= 0: sessions never expire
	// term is the raft term the sessions were started for; a controller
	// that becomes leader again starts them again.
	term          uint64
	brokers       map[int32]*brokerSession
	lastRebalance time.Time
}

func newSessions(clk clock.Clock, timeout time.Duration) *sessions {
	return &sessions{clock: clk, timeout: timeout, brokers: map[int32]*brokerSession{}}
}

// activate starts a session for every registered broker, as if each had
// just heartbeated (ClusterControlManager.activate): a broker that died
// with the previous controller is fenced one session timeout later.
func (s *sessions) activate(term uint64, img *Image) {
	now := s.clock.Now()
	s.term = term
	s.brokers = make(map[int32]*brokerSession, len(img.Brokers))
	for id := range img.Brokers {
		s.brokers[id] = &brokerSession{lastContact: now, metadataOffset: -1, controlledShutdownOffset: -1}
	}
	s.lastRebalance = now
}

// get returns a broker's session, starting one if needed.
func (s *sessions) get(id int32) *brokerSession {
	b, ok := s.brokers[id]
	if !ok {
		b = &brokerSession{lastContact: s.clock.Now(), metadataOffset: -1, controlledShutdownOffset: -1}
		s.brokers[id] = b
	}
	return b
}

// register starts a new session for a new incarnation of a broker
// (BrokerHeartbeatManager.remove + register).
func (s *sessions) register(id int32) {
	delete(s.brokers, id)
	s.get(id)
}

// touch records a heartbeat (BrokerHeartbeatManager.touch); a fenced
// broker leaves controlled shutdown.
func (s *sessions) touch(id int32, fenced bool, metadataOffset int64) {
	b := s.get(id)
	b.lastContact = s.clock.Now()
	b.metadataOffset = metadataOffset
	if fenced {
		b.controlledShutdownOffset = -1
	}
}

// staleBroker returns the unfenced broker whose session expired longest
// ago (BrokerHeartbeatManager.findOneStaleBroker; ties go to the lowest
// id). Kafka fences one broker at a time, so that each fencing's elections
// see the ones before.
func (s *sessions) staleBroker(img *Image) (int32, bool) {
	if s.timeout <= 0 {
		return 0, false
	}
	now := s.clock.Now()
	var stale []int32
	for id, b := range img.Brokers {
		if b.Fenced {
			continue
		}
		if now.Sub(s.get(id).lastContact) > s.timeout {
			stale = append(stale, id)
		}
	}
	if len(stale) == 0 {
		return 0, false
	}
	slices.SortFunc(stale, func(a, b int32) int {
		return cmp.Or(s.brokers[a].lastContact.Compare(s.brokers[b].lastContact), cmp.Compare(a, b))
	})
	return stale[0], true
}

// lowestActiveOffset is the lowest metadata offset reported by an active
// broker (unfenced, not shutting down), MaxInt64 if there is none
// (BrokerHeartbeatManager.lowestActiveOffset).
func (s *sessions) lowestActiveOffset(img *Image) int64 {
	lowest := int64(math.MaxInt64)
	for id := range img.Brokers {
		if img.BrokerActive(id) {
			lowest = min(lowest, s.get(id).metadataOffset)
		}
	}
	return lowest
}
