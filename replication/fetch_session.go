package replication

import (
	"container/list"
	crand "crypto/rand"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/strait-io/strait/storage/clock"
)

// Fetch session metadata values (Kafka's FetchMetadata, KIP-227).
const (
	invalidSessionID int32 = 0
	initialEpoch     int32 = 0
	finalEpoch       int32 = -1
)

// nextEpoch is FetchMetadata.nextEpoch: epochs wrap to 1, never to 0.
func nextEpoch(prev int32) int32 {
	switch {
	case prev < 0:
		return finalEpoch
	case prev == math.MaxInt32:
		return 1
	}
	return prev + 1
}

// sessionKey identifies a partition in a session: by topic id when the
// session uses ids (fetch v13+), by name otherwise (Kafka's
// CachedPartition.equals).
type sessionKey struct {
	topicID   [16]byte
	topic     string
	partition int32
}

// cachedPartition is a partition's entry in a session (Kafka's
// CachedPartition): the last request parameters, and the last high
// watermark and log start offset sent, which decide whether an incremental
// response must include it.
type cachedPartition struct {
	key                   sessionKey
	topic                 string
	topicID               [16]byte
	partition             int32
	maxBytes              int32
	fetchOffset           int64
	leaderEpoch           int32
	fetcherLogStartOffset int64
	lastFetchedEpoch      int32
	highWatermark         int64
	localLogStartOffset   int64
}

func (c *cachedPartition) updateRequestParams(fp *fetchPartition) {
	c.maxBytes = fp.maxBytes
	c.fetchOffset = fp.fetchOffset
	c.fetcherLogStartOffset = fp.logStartOffset
	c.leaderEpoch = fp.currentLeaderEpoch
	c.lastFetchedEpoch = fp.lastFetchedEpoch
}

func (c *cachedPartition) reqData() fetchPartition {
	return fetchPartition{
		key:                c.key,
		topic:              c.topic,
		topicID:            c.topicID,
		partition:          c.partition,
		fetchOffset:        c.fetchOffset,
		logStartOffset:     c.fetcherLogStartOffset,
		maxBytes:           c.maxBytes,
		currentLeaderEpoch: c.leaderEpoch,
		lastFetchedEpoch:   c.lastFetchedEpoch,
	}
}

// maybeUpdateResponseData decides whether an incremental response must
// carry the partition and records what it carries (Kafka's
// CachedPartition.maybeUpdateResponseData): new data, a moved high
// watermark or log start offset, an error or a diverging epoch.
func (c *cachedPartition) maybeUpdateResponseData(res *readResult) bool {
	must := res.info.Records.Size > 0
	if c.highWatermark != res.hw {
		must = true
		c.highWatermark = res.hw
	}
	if c.localLogStartOffset != res.logStart {
		must = true
		c.localLogStartOffset = res.logStart
	}
	if res.errCode != 0 {
		// Forget the high watermark so the partition is sent again once
		// the error clears.
		c.highWatermark = -1
		must = true
	}
	if res.diverging != nil {
		must = true
	}
	return must
}

// fetchSession is one incremental fetch session (Kafka's FetchSession).
type fetchSession struct {
	id           int32
	privileged   bool
	usesTopicIDs bool
	creationMs   int64

	// Guarded by the cache's mu.
	lastUsedMs int64
	cachedSize int

	// mu guards the fields below. Lock order: cache.mu before mu.
	mu    sync.Mutex
	epoch int32
	// order keeps the partitions in fetch order; a partition that returned
	// data moves to the back, so a later request reads the others first.
	order *list.List // of *cachedPartition
	index map[sessionKey]*list.Element
}

func (s *fetchSession) sizeLocked() int { return s.order.Len() }

// updateLocked applies an incremental request: new and changed partitions, then
// forgotten ones (Kafka's FetchSession.update). s.mu must be held.
func (s *fetchSession) updateLocked(parts []fetchPartition, forget []sessionKey) {
	for i := range parts {
		fp := &parts[i]
		if e, ok := s.index[fp.key]; ok {
			e.Value.(*cachedPartition).updateRequestParams(fp)
			continue
		}
		c := &cachedPartition{key: fp.key, topic: fp.topic, topicID: fp.topicID, partition: fp.partition,
			highWatermark: -1, localLogStartOffset: -1}
		c.updateRequestParams(fp)
		s.index[fp.key] = s.order.PushBack(c)
	}
	for _, k := range forget {
		if e, ok := s.index[k]; ok {
			s.order.Remove(e)
			delete(s.index, k)
		}
	}
}

// fetchSessionCache holds the sessions of this broker (Kafka's
// FetchSessionCacheShard; one shard is enough below thousands of
// sessions). Eviction scans the sessions, which only happens when the
// cache is full and a new session is asked for.
type fetchSessionCache struct {
	maxEntries int
	evictionMs int64
	clock      clock.Clock

	mu        sync.Mutex
	sessions  map[int32]*fetchSession
	rng       *rand.Rand
	evictions int64
}

func newFetchSessionCache(maxEntries int, evictionMs int64, clk clock.Clock) *fetchSessionCache {
	var seed [16]byte
	_, _ = crand.Read(seed[:])
	return &fetchSessionCache{
		maxEntries: maxEntries,
		evictionMs: evictionMs,
		clock:      clk,
		sessions:   map[int32]*fetchSession{},
		rng:        rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:]))),
	}
}

func (c *fetchSessionCache) nowMs() int64 { return c.clock.Now().UnixMilli() }

func (c *fetchSessionCache) get(id int32) (*fetchSession, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[id]
	return s, ok
}

func (c *fetchSessionCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}

func (c *fetchSessionCache) remove(id int32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.sessions[id]
	delete(c.sessions, id)
	return ok
}

// maybeCreateSession adds a session built by build when there is room or
// a session can be evicted for it, and returns its id, or 0 (Kafka's
// maybeCreateSession).
func (c *fetchSessionCache) maybeCreateSession(privileged, usesTopicIDs bool, size int, build func() *fetchSession) int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.nowMs()
	if c.maxEntries <= 0 || (len(c.sessions) >= c.maxEntries && !c.tryEvictLocked(privileged, size, now)) {
		return invalidSessionID
	}
	s := build()
	s.id = c.newSessionIDLocked()
	s.privileged, s.usesTopicIDs = privileged, usesTopicIDs
	s.creationMs, s.lastUsedMs, s.cachedSize = now, now, size
	s.epoch = nextEpoch(initialEpoch)
	c.sessions[s.id] = s
	return s.id
}

func (c *fetchSessionCache) newSessionIDLocked() int32 {
	for {
		id := c.rng.Int32N(math.MaxInt32) + 1
		if _, taken := c.sessions[id]; !taken {
			return id
		}
	}
}

// tryEvictLocked makes room for a new session (Kafka's tryEvict): the least
// recently used session goes if it has been idle longer than the eviction
// time; otherwise the least valuable evictable session goes if the new one
// is worth more. Sessions are compared by (privileged, size, id); a session
// younger than the eviction time can only be evicted by a privileged
// (follower) session, and then only if it is not privileged itself.
func (c *fetchSessionCache) tryEvictLocked(privileged bool, size int, now int64) bool {
	var lru *fetchSession
	for _, s := range c.sessions {
		if lru == nil || s.lastUsedMs < lru.lastUsedMs || (s.lastUsedMs == lru.lastUsedMs && s.id < lru.id) {
			lru = s
		}
	}
	if lru == nil {
		return false
	}
	if now-lru.lastUsedMs > c.evictionMs {
		delete(c.sessions, lru.id)
		c.evictions++
		return true
	}
	var victim *fetchSession
	for _, s := range c.sessions {
		old := now-s.creationMs > c.evictionMs
		if !(old || (privileged && !s.privileged)) {
			continue
		}
		if victim == nil || evictableLess(s, victim) {
			victim = s
		}
	}
	// The new session's key has id 0, below every real id, so it must be
	// strictly more valuable to win.
	if victim == nil || !evictableLess(victim, &fetchSession{privileged: privileged, cachedSize: size, id: 0}) {
		return false
	}
	delete(c.sessions, victim.id)
	c.evictions++
	return true
}

// evictableLess orders sessions by Kafka's EvictableKey: unprivileged
// before privileged, then smaller first, then by id.
func evictableLess(a, b *fetchSession) bool {
	if a.privileged != b.privileged {
		return !a.privileged
	}
	if a.cachedSize != b.cachedSize {
		return a.cachedSize < b.cachedSize
	}
	return a.id < b.id
}
