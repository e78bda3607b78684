package share

import (
	"math"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Share session epochs (Kafka's ShareRequestMetadata): 0 opens a session,
// -1 closes it; otherwise each request carries the epoch the previous
// answer moved the session to.
const (
	initialEpoch int32 = 0
	finalEpoch   int32 = -1
)

// nextEpoch is Kafka's ShareRequestMetadata.nextEpoch.
func nextEpoch(e int32) int32 {
	switch {
	case e < 0:
		return initialEpoch
	case e == math.MaxInt32:
		return 1
	}
	return e + 1
}

// sessionKey names a share session: one per member per broker.
type sessionKey struct{ group, member string }

// session is a member's share session on this broker (Kafka's
// ShareSession): the partitions it fetches and the epoch its next request
// must carry.
type session struct {
	key sessionKey
	// id numbers the sessions in the order they open: records carry the
	// id they were acquired in (SharePartition.ReleaseMember).
	id    uint64
	epoch int32
	// parts are the session's partitions in the order they were added;
	// needsUpdate says a partition must appear in the next incremental
	// answer even without data (added since: Kafka's
	// CachedSharePartition.requiresUpdateInResponse).
	parts       []TopicPartition
	needsUpdate map[TopicPartition]bool
	// stopWatch stops watching the connection that opened the session;
	// when it closes, the session ends (Kafka's
	// ConnectionDisconnectListener).
	stopWatch func() bool
}

// stop stops watching the session's connection; the cache's lock is held.
func (s *session) stop() {
	if s.stopWatch != nil {
		s.stopWatch()
		s.stopWatch = nil
	}
}

func (s *session) has(tp TopicPartition) bool {
	_, ok := s.needsUpdate[tp]
	return ok
}

func (s *session) add(tp TopicPartition, needsUpdate bool) {
	if !s.has(tp) {
		s.parts = append(s.parts, tp)
		s.needsUpdate[tp] = needsUpdate
	}
}

func (s *session) forget(tp TopicPartition) {
	if !s.has(tp) {
		return
	}
	delete(s.needsUpdate, tp)
	for i, p := range s.parts {
		if p == tp {
			s.parts = append(s.parts[:i], s.parts[i+1:]...)
			break
		}
	}
}

// fetchContext is what a ShareFetch fetches (Kafka's ShareFetchContext):
// a full fetch of the request's partitions (epoch 0), an incremental one
// of the session's, or none (the final epoch).
type fetchContext struct {
	final bool
	sess  *session // nil for a full fetch
	id    uint64   // the session's id
	parts []TopicPartition
}

// sessionCache holds the share sessions (Kafka's ShareSessionCache), at
// most max of them.
type sessionCache struct {
	mu     sync.Mutex
	max    int
	byKey  map[sessionKey]*session
	nextID uint64
}

func newSessionCache(maxSessions int) *sessionCache {
	return &sessionCache{max: maxSessions, byKey: map[sessionKey]*session{}}
}

// newContext opens, updates or checks the session of a ShareFetch (Kafka's
// SharePartitionManager.newContext):
//
//   - epoch 0 replaces the member's session with a new one holding the
//     request's partitions (INVALID_REQUEST when the request carries
//     acknowledgements: there is nothing to acknowledge yet;
//     SHARE_SESSION_LIMIT_REACHED when the cache is full);
//   - epoch -1 needs the session (SHARE_SESSION_NOT_FOUND) and fetches
//     nothing: the caller closes it once the acknowledgements are done;
//   - any other epoch needs the session at that epoch
//     (SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH), adds the
//     request's partitions, drops the forgotten ones and moves the epoch.
//
// A new session is returned for the caller to watch its connection.
func (c *sessionCache) newContext(key sessionKey, epoch int32, parts, forget []TopicPartition, hasAcks bool) (fetchContext, *session, *kerr.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.byKey[key]
	switch epoch {
	case finalEpoch:
		if cur == nil {
			return fetchContext{}, nil, kerr.ShareSessionNotFound
		}
		return fetchContext{final: true}, nil, nil
	case initialEpoch:
		if hasAcks {
			return fetchContext{}, nil, kerr.InvalidRequest
		}
		if cur != nil {
			delete(c.byKey, key)
			cur.stop()
		}
		if len(c.byKey) >= c.max {
			return fetchContext{}, nil, kerr.ShareSessionLimitReached
		}
		c.nextID++
		s := &session{key: key, id: c.nextID, epoch: nextEpoch(initialEpoch), needsUpdate: map[TopicPartition]bool{}}
		for _, tp := range parts {
			s.add(tp, false)
		}
		c.byKey[key] = s
		return fetchContext{id: s.id, parts: append([]TopicPartition(nil), s.parts...)}, s, nil
	}
	if cur == nil {
		return fetchContext{}, nil, kerr.ShareSessionNotFound
	}
	if cur.epoch != epoch {
		return fetchContext{}, nil, kerr.InvalidShareSessionEpoch
	}
	for _, tp := range parts {
		cur.add(tp, true)
	}
	for _, tp := range forget {
		cur.forget(tp)
	}
	cur.epoch = nextEpoch(cur.epoch)
	return fetchContext{sess: cur, id: cur.id, parts: append([]TopicPartition(nil), cur.parts...)}, nil, nil
}

// acknowledged checks and moves the session of a ShareAcknowledge (Kafka's
// acknowledgeSessionUpdate): epoch 0 is INVALID_SHARE_SESSION_EPOCH (only a
// ShareFetch opens a session), -1 needs the session and leaves it to the
// caller to close.
func (c *sessionCache) acknowledged(key sessionKey, epoch int32) *kerr.Error {
	if epoch == initialEpoch {
		return kerr.InvalidShareSessionEpoch
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.byKey[key]
	switch {
	case cur == nil:
		return kerr.ShareSessionNotFound
	case epoch == finalEpoch:
		return nil
	case cur.epoch != epoch:
		return kerr.InvalidShareSessionEpoch
	}
	cur.epoch = nextEpoch(cur.epoch)
	return nil
}

// mustRespond reports whether an incremental answer includes tp (Kafka's
// CachedSharePartition.maybeUpdateResponseData): it has records or an
// error, or joined the session since the last answer.
func (c *sessionCache) mustRespond(s *session, tp TopicPartition, hasData bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	needs, ok := s.needsUpdate[tp]
	if ok && needs {
		s.needsUpdate[tp] = false
	}
	return hasData || needs
}

// remove ends the session of key, only s when s is not nil (a closed
// connection ends its own session, not a newer one), and calls then with
// the removed session (nil when none was) before the member can open
// another: what then gives back is given back before the next session
// acquires anything. then must not call the cache.
func (c *sessionCache) remove(key sessionKey, s *session, then func(removed *session)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.byKey[key]
	if cur == nil || (s != nil && cur != s) {
		then(nil)
		return
	}
	delete(c.byKey, key)
	cur.stop()
	then(cur)
}

// watch sets what stops watching s's connection; when s is gone already,
// it stops at once.
func (c *sessionCache) watch(s *session, stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey[s.key] != s {
		stop()
		return
	}
	s.stopWatch = stop
}

func (c *sessionCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey)
}
