package coordinator

// Offset expiration (GroupCoordinatorShard.cleanupGroupMetadata,
// OffsetMetadataManager.cleanupExpiredOffsets): every
// offsets.retention.check.interval.ms, offsets older than
// offsets.retention.minutes are tombstoned, and an Empty group left with
// no offsets is deleted. Offsets an open transaction committed anew do not
// expire, and a group with an open transaction is not deleted
// (KAFKA-14505, KAFKA-19163).

func (s *shard) scheduleExpiration() {
	s.timer.Schedule(timerKey{kind: timerExpiration}, s.c.cfg.OffsetsRetentionCheckInterval, func() {
		s.cleanupGroupMetadata()
		s.scheduleExpiration()
	})
}

// cleanupGroupMetadata runs one expiration pass. Called with mu held.
func (s *shard) cleanupGroupMetadata() {
	now := s.nowMs()
	var recs []coordRecord
	for _, id := range s.sortedGroupIDs() {
		if s.cleanupExpiredOffsets(id, now, &recs) {
			if cg := s.consumerGroups[id]; cg != nil {
				if cg.isEmpty() {
					recs = append(recs, s.deleteConsumerGroupRecords(cg)...)
				}
				continue
			}
			if g := s.group(id); g != nil && g.isEmpty() {
				s.timer.Cancel(joinKey(g))
				s.removeGroup(id)
				recs = append(recs, newGroupMetadataTombstone(id))
			}
		}
	}
	if len(recs) == 0 {
		return
	}
	s.log.Info("expired offsets and groups", "tombstones", len(recs))
	s.append(recs, true, func(err error) {
		if err != nil {
			s.log.Warn("writing expiration tombstones failed", "err", err)
		}
	})
}

// cleanupExpiredOffsets tombstones the group's expired offsets and reports
// whether none remain and no open transaction committed offsets for it.
func (s *shard) cleanupExpiredOffsets(id string, now int64, recs *[]coordRecord) bool {
	topics := s.offsets.topics(id)
	if len(topics) == 0 {
		return !s.pending.hasGroup(id)
	}
	// Offsets whose group is gone (its tombstone was replayed before
	// theirs) age like a simple group's.
	base := func(om offsetAndMetadata) int64 { return om.commitTimestamp }
	subscribed := func(string) bool { return false }
	if cg := s.consumerGroups[id]; cg != nil {
		// A consumer group's offsets age from their commit, except those
		// of topics it subscribes to (ConsumerGroup.offsetExpirationCondition).
		subscribed = cg.isSubscribedToTopic
	} else if g := s.group(id); g != nil {
		var ok bool
		if base, ok = s.expirationBase(g); !ok {
			return false
		}
		subscribed = g.isSubscribedToTopic
	}
	retention := s.c.cfg.OffsetsRetention.Milliseconds()
	all := true
	for _, topic := range topics {
		if subscribed(topic) {
			all = false
			continue
		}
		for _, p := range s.offsets.partitions(id, topic) {
			om, _ := s.offsets.get(id, topic, p)
			expired := now-base(om) >= retention
			if om.expireTimestamp >= 0 {
				// An explicit retention (OffsetCommit v2-v4) keeps its
				// own deadline.
				expired = now >= om.expireTimestamp
			}
			if !expired || s.pending.has(id, topic, p) {
				all = false
				continue
			}
			*recs = append(*recs, newOffsetCommitTombstone(id, topic, p))
			s.removeOffset(id, topic, p)
		}
	}
	return all && !s.pending.hasGroup(id)
}

// expirationBase is the timestamp an offset's age counts from, or false
// when the group's offsets do not expire now (ClassicGroup.offsetExpirationCondition):
//   - a simple group (no protocol type): the commit time;
//   - an Empty group: when it became Empty (its offsets are not consumed);
//   - a Stable "consumer" group that knows its subscriptions: the commit
//     time, for topics it no longer consumes;
//   - otherwise nothing expires.
func (s *shard) expirationBase(g *classicGroup) (func(offsetAndMetadata) int64, bool) {
	commitTime := func(om offsetAndMetadata) int64 { return om.commitTimestamp }
	switch {
	case g.protocolType == "":
		return commitTime, true
	case g.is(stateEmpty):
		if ts := g.currentStateTimestamp; ts >= 0 {
			return func(offsetAndMetadata) int64 { return ts }, true
		}
		return commitTime, true
	case g.usesConsumerProtocol() && g.subscribedKnown && g.is(stateStable):
		return commitTime, true
	}
	return nil, false
}
