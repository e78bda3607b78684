package replication

import (
	"container/list"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
)

// fetchContextKind is which of Kafka's FetchContext classes a request gets.
type fetchContextKind int8

const (
	// sessionlessContext: fetch v<7, a FINAL_EPOCH full fetch, or an
	// incremental fetch that forgot every partition.
	sessionlessContext fetchContextKind = iota
	// fullContext: epoch 0; a new session is created from the response.
	fullContext
	// incrementalContext: an existing session at the expected epoch.
	incrementalContext
	// sessionErrorContext: the request's session is unknown or out of step.
	sessionErrorContext
)

// fetchContext is the session side of one Fetch (Kafka's FetchContext and
// FetchManager.newContext).
type fetchContext struct {
	kind         fetchContextKind
	errCode      int16
	reqEpoch     int32
	session      *fetchSession
	privileged   bool
	usesTopicIDs bool
	// parts are the partitions to read, in order: the request's for full
	// and sessionless contexts, the whole session's for incremental ones.
	parts []fetchPartition
}

// fetchEntry is one partition of the response being built.
type fetchEntry struct {
	fp  fetchPartition
	res readResult
}

// newContext resolves the request's session (Kafka's FetchManager.newContext).
// parts are the request's partitions (deduplicated, in order) and forget
// the ForgottenTopics; img resolves topic ids of session partitions.
func (c *fetchSessionCache) newContext(version int16, sessionID, epoch int32, privileged bool,
	parts []fetchPartition, forget []sessionKey, img *raftmeta.Image) *fetchContext {
	usesIDs := version >= 13
	fc := &fetchContext{reqEpoch: epoch, privileged: privileged, usesTopicIDs: usesIDs}
	if version < 7 {
		fc.kind, fc.parts = sessionlessContext, parts
		return fc
	}
	if epoch == initialEpoch || epoch == finalEpoch {
		// A full fetch closes the session it names.
		if sessionID != invalidSessionID {
			c.remove(sessionID)
		}
		fc.kind, fc.parts = fullContext, parts
		if epoch == finalEpoch {
			fc.kind = sessionlessContext
		}
		return fc
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[sessionID]
	if !ok {
		fc.kind, fc.errCode = sessionErrorContext, kerr.FetchSessionIDNotFound.Code
		return fc
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.epoch != epoch:
		fc.kind, fc.errCode = sessionErrorContext, kerr.InvalidFetchSessionEpoch.Code
		return fc
	case s.usesTopicIDs != usesIDs:
		fc.kind, fc.errCode = sessionErrorContext, kerr.FetchSessionTopicIDError.Code
		return fc
	}
	s.updateLocked(parts, forget)
	if s.sizeLocked() == 0 {
		// Nothing left to fetch: the session ends (Kafka answers
		// sessionless with the request's partitions, which are none).
		delete(c.sessions, s.id)
		fc.kind, fc.parts = sessionlessContext, parts
		return fc
	}
	s.lastUsedMs, s.cachedSize = c.nowMs(), s.sizeLocked()
	s.epoch = nextEpoch(s.epoch)
	fc.kind, fc.session = incrementalContext, s
	for e := s.order.Front(); e != nil; e = e.Next() {
		cp := e.Value.(*cachedPartition)
		if usesIDs {
			// Resolve the name afresh: an id that no longer resolves
			// answers UNKNOWN_TOPIC_ID rather than a stale name.
			cp.topic = ""
			if t, ok := img.TopicsByID[raftmeta.Uuid(cp.topicID)]; ok {
				cp.topic = t.Name
			}
		}
		fc.parts = append(fc.parts, cp.reqData())
	}
	return fc
}

// generate finishes the response: it creates the session of a full fetch,
// or filters an incremental one down to the partitions that changed. It
// returns the entries to send, the response's session id and error code
// (Kafka's updateAndGenerateResponseData).
func (fc *fetchContext) generate(c *fetchSessionCache, entries []fetchEntry) ([]fetchEntry, int32, int16) {
	switch fc.kind {
	case sessionErrorContext:
		return nil, invalidSessionID, fc.errCode
	case sessionlessContext:
		return entries, invalidSessionID, 0
	case fullContext:
		id := c.maybeCreateSession(fc.privileged, fc.usesTopicIDs, len(entries), func() *fetchSession {
			s := &fetchSession{order: list.New(), index: make(map[sessionKey]*list.Element, len(entries))}
			for i := range entries {
				fp, res := &entries[i].fp, &entries[i].res
				if _, dup := s.index[fp.key]; dup {
					continue
				}
				cp := &cachedPartition{key: fp.key, topic: fp.topic, topicID: fp.topicID, partition: fp.partition,
					highWatermark: res.hw, localLogStartOffset: res.logStart}
				cp.updateRequestParams(fp)
				s.index[fp.key] = s.order.PushBack(cp)
			}
			return s
		})
		return entries, id, 0
	}
	s := fc.session
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch != nextEpoch(fc.reqEpoch) {
		// Another request moved the session on while this one was
		// reading: a duplicate, which Kafka refuses at this point too.
		return nil, s.id, kerr.InvalidFetchSessionEpoch.Code
	}
	out := entries[:0]
	for _, en := range entries {
		e, ok := s.index[en.fp.key]
		if !ok {
			continue // forgotten by a concurrent request
		}
		cp := e.Value.(*cachedPartition)
		if !cp.maybeUpdateResponseData(&en.res) {
			continue
		}
		out = append(out, en)
		if en.res.info.Records.Size > 0 {
			s.order.MoveToBack(e)
		}
	}
	return out, s.id, 0
}
