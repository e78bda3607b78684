package replication

import (
	"slices"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// leadershipEvent is one notification for the listeners.
type leadershipEvent struct {
	tp     storage.TopicPartition
	leader bool
	epoch  int32
}

// OnLeadershipChange registers fn for leadership changes of local
// partitions. fn is first called for every partition this node leads now,
// then after each ApplyDelta that changes one. Calls are serialised with
// ApplyDelta (the group coordinator relies on seeing them in order) and
// must not block for long or call ApplyDelta or OnLeadershipChange.
func (r *ReplicaManager) OnLeadershipChange(fn LeadershipListener) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listeners = append(r.listeners, fn)
	for tp, p := range r.table.Load().byTP {
		if st := p.state.Load(); st.leader == r.nodeID {
			fn(tp, true, st.leaderEpoch)
		}
	}
}

// ApplyDelta brings the local replicas in line with img, of which d is the
// change from the previous image (Kafka's ReplicaManager.applyDelta): logs
// are created for new local replicas and deleted with their topics or when
// the replica moves away, each replica takes the leadership img gives it,
// and topic config changes reach the logs. The first call treats img as a
// whole: every local replica it names is brought up, so the broker may
// pass its first image with an empty delta.
//
// ApplyDelta is called by the one goroutine that publishes metadata.
func (r *ReplicaManager) ApplyDelta(d *raftmeta.Delta, img *raftmeta.Image) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.applyDeltaLocked(d, img)
}

// applyDeltaLocked is ApplyDelta with r.mu held.
func (r *ReplicaManager) applyDeltaLocked(d *raftmeta.Delta, img *raftmeta.Image) {
	if r.loaded && img.Offset < r.image.Load().Offset {
		// The broker's first call (the whole image, with an empty delta)
		// raced with the delta of a newer image, which took its place.
		return
	}
	endApplying := r.beginApplying()
	defer endApplying()
	next := r.table.Load().clone()
	var (
		events  []leadershipEvent
		removed []*Partition
		touched []*Partition
		changes []partitionChange
		creates []replicaToCreate
	)
	remove := func(tp storage.TopicPartition, p *Partition) {
		delete(next.byTP, tp)
		removed = append(removed, p)
		// No fetcher may append to the log once it is being deleted.
		r.fetchers.RemoveFetcherForPartitions([]storage.TopicPartition{tp})
		if st := p.state.Load(); st.leader == r.nodeID {
			events = append(events, leadershipEvent{tp, false, st.leaderEpoch})
		}
	}

	// Deletions first: a topic deleted and re-created under the same name
	// in one delta must lose its old log before the new one is made.
	for _, t := range d.DeletedTopics {
		for i := range t.Partitions {
			tp := storage.TopicPartition{Topic: t.Name, Partition: int32(i)}
			delete(next.offline, tp)
			if p, ok := next.byTP[tp]; ok && (p.topicID.IsZero() || p.topicID == storage.TopicID(t.ID)) {
				remove(tp, p)
			}
		}
	}

	changed := d.ChangedPartitions
	first := !r.loaded
	if first {
		changed = allPartitions(img)
		r.loaded = true
	}
	for _, pp := range changed {
		t, ok := img.Topics[pp.Topic]
		if !ok || t.ID != pp.TopicID {
			continue // a stale entry: the topic is gone or was re-created
		}
		tp := storage.TopicPartition{Topic: pp.Topic, Partition: pp.Index}
		p, hosted := next.byTP[tp]
		if hosted && !p.topicID.IsZero() && p.topicID != storage.TopicID(pp.TopicID) {
			remove(tp, p) // an older topic of the same name
			hosted = false
		}
		if !slices.Contains(pp.Replicas, r.nodeID) {
			if hosted {
				remove(tp, p) // reassigned away from this broker
			}
			delete(next.offline, tp)
			continue
		}
		if !hosted {
			// Removed partitions' logs must be gone before a new log of the
			// same name is created.
			removed = r.deleteLogs(removed)
			if r.materializeCloneLater(tp, pp, img) {
				// Not hosted until its log is built (clone_materialize.go):
				// NOT_LEADER_OR_FOLLOWER meanwhile, which clients retry.
				delete(next.offline, tp)
				continue
			}
			// Created below with the delta's other new replicas.
			creates = append(creates, replicaToCreate{tp: tp, pp: pp, at: len(changes)})
			p = nil // placed by placeNewReplicas
		}
		touched = append(touched, p)
		changes = append(changes, partitionChange{p, pp})
	}
	if len(creates) > 0 {
		removed = r.deleteLogs(removed)
		touched, changes = r.placeNewReplicas(creates, img, next, touched, changes)
	}

	startFetching := r.applyRoles(changes, img, func(p *Partition) {
		st := p.state.Load()
		events = append(events, leadershipEvent{p.tp, st.leader == r.nodeID, st.leaderEpoch})
	})
	r.refollowChangedBrokers(d, img, next, startFetching)
	r.applyConfigChanges(d, img, next)
	if first || len(d.ChangedConfigs) > 0 {
		r.updateReplicationQuotas(img)
	}
	if first {
		r.configureUnhostedLogs(img, next)
		r.logsConfigured.Store(true)
		close(r.configured)
	}

	// Publish the partitions before the image, so a request that finds a
	// new topic in the image finds its partitions too.
	r.table.Store(next)
	r.image.Store(img)
	now := r.nowMs()
	for _, p := range touched {
		// Kafka's broker publishes the image to its metadata cache before
		// ReplicaManager.applyDelta, so makeLeader's maybeIncrementLeaderHW
		// judges caught-up followers outside the ISR (isReplicaIsrEligible)
		// by the new image. applyRoles ran against the previous one: look
		// again now, or a follower fenced and dropped from the ISR in this
		// image holds the high watermark, and acks=all produces, until the
		// next follower fetch that moves.
		p.leaderIsrUpdateLock.RLock()
		p.maybeIncrementHighWatermark(now)
		p.leaderIsrUpdateLock.RUnlock()
		p.watchers.notifyAll()
	}
	r.deleteLogs(removed)
	if first {
		r.resumeLogDirMoves(next)
	}
	if len(startFetching) > 0 {
		// After publishing: the fetchers find the partitions in the table.
		if err := r.fetchers.AddFetcherForPartitions(startFetching); err != nil {
			r.logger.Error("cannot start fetching", "err", err)
		}
	}
	r.fetchers.ShutdownIdleFetchers()
	for _, ev := range events {
		for _, fn := range r.listeners {
			fn(ev.tp, ev.leader, ev.epoch)
		}
	}
}

// deleteLogs fences removed partitions and deletes their logs; it returns
// nil so callers can clear their list.
func (r *ReplicaManager) deleteLogs(removed []*Partition) []*Partition {
	for _, p := range removed {
		p.markRemoved()
		r.stopLogDirMove(p.tp)
		if err := r.logs.DeleteLog(p.tp); err != nil {
			r.logger.Error("deleting a partition log failed", "partition", p.tp.String(), "err", err)
		}
	}
	return nil
}

// applyConfigChanges gives the logs their new effective configs: those of
// a changed topic, or every log when a broker-level default changed (Kafka
// reconfigures logs on dynamic broker config updates too).
func (r *ReplicaManager) applyConfigChanges(d *raftmeta.Delta, img *raftmeta.Image, t *partitionTable) {
	topics := map[string]bool{}
	all := false
	for _, cr := range d.ChangedConfigs {
		switch cr.Type {
		case raftmeta.ConfigResourceTopic:
			topics[cr.Name] = true
		case raftmeta.ConfigResourceBroker:
			all = true
		}
	}
	if !all && len(topics) == 0 {
		return
	}
	for tp, p := range t.byTP {
		if !all && !topics[tp.Topic] {
			continue
		}
		cfg, err := r.cfg.LogConfigFor(tp.Topic, img)
		if err != nil {
			// The controller validated the config; keep the old one rather
			// than guess.
			r.logger.Error("invalid topic config; keeping the previous one", "topic", tp.Topic, "err", err)
			continue
		}
		p.Log().SetConfig(cfg)
		p.minISR.Store(r.cfg.MinInsyncReplicasFor(tp.Topic, img))
	}
}

// configureUnhostedLogs gives the logs found on disk that img assigns to
// no local replica (their partition moved away while this broker was
// down) their topic's config: they were opened with the broker defaults,
// and log maintenance runs over every log on disk. As Kafka's LogManager
// loads each log with its topic's config from the metadata image. Logs of
// topics img lacks keep the defaults (WarnStrayLogs reports them).
func (r *ReplicaManager) configureUnhostedLogs(img *raftmeta.Image, t *partitionTable) {
	for tp, l := range r.logs.Logs() {
		if _, hosted := t.byTP[tp]; hosted {
			continue // createPartition configured it
		}
		if _, ok := img.Topics[tp.Topic]; !ok {
			continue
		}
		cfg, err := r.cfg.LogConfigFor(tp.Topic, img)
		if err != nil {
			r.logger.Error("invalid topic config; the log keeps the broker defaults", "partition", tp.String(), "err", err)
			continue
		}
		l.SetConfig(cfg)
	}
}

// WarnStrayLogs reports logs on disk whose topic the metadata does not
// have. Kafka marks such logs stray and leaves them for the operator; so
// do we (they are not served). The owner calls it once the node has caught
// up with the metadata log, as Kafka finds stray logs only once its
// metadata is loaded: a restarting node's first images hold only part of
// the log (raft hands a follower the entries it missed in batches), and
// logs of topics further in it are not stray.
func (r *ReplicaManager) WarnStrayLogs(img *raftmeta.Image) {
	for tp, l := range r.logs.Logs() {
		if t, ok := img.Topics[tp.Topic]; !ok || int(tp.Partition) >= len(t.Partitions) {
			r.logger.Warn("stray log: its partition is not in the metadata; it is not served", "partition", tp.String(), "dir", l.Dir())
		}
	}
}

func allPartitions(img *raftmeta.Image) []*raftmeta.Partition {
	var out []*raftmeta.Partition
	for _, name := range img.TopicNames() {
		out = append(out, img.Topics[name].Partitions...)
	}
	return out
}
