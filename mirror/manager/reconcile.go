package manager

import (
	"slices"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// reconcile brings the machines and the source connections in line with
// img, whatever changed (level-triggered, the seed's
// MirrorMetadataManager.onMetadataUpdate): every local replica of a mirror
// topic has a machine that knows the topic's mirror and desired state
// (mirror.name) and whether this node leads it, at which epoch.
func (m *Manager) reconcile(img *raftmeta.Image) {
	m.reconcileConns(img)
	m.retryLater = false

	want := map[storage.TopicPartition]storage.TopicID{}
	for _, name := range img.TopicNames() {
		mirror, desired := img.TopicMirror(name)
		if desired == partition.DesiredNone {
			continue
		}
		t := img.Topics[name]
		for _, p := range t.Partitions {
			if !slices.Contains(p.Replicas, m.cfg.NodeID) {
				continue
			}
			tp := storage.TopicPartition{Topic: name, Partition: p.Index}
			want[tp] = storage.TopicID(t.ID)
			m.reconcilePart(tp, storage.TopicID(t.ID), p, mirror, desired)
		}
	}
	for tp, p := range m.parts {
		if id, ok := want[tp]; !ok || id != p.topicID {
			m.dropPart(p)
		}
	}
}

// reconcilePart steps one partition's machine with what img says.
func (m *Manager) reconcilePart(tp storage.TopicPartition, id storage.TopicID, ip *raftmeta.Partition, mirror string, desired partition.Desired) {
	p, ok := m.parts[tp]
	if ok && p.topicID != id {
		// The topic was deleted and created again under the same name.
		m.dropPart(p)
		ok = false
	}
	if !ok {
		var err error
		if p, err = m.newPart(tp, id); err != nil {
			m.logger.Error("cannot create a mirror partition machine", "partition", tp.String(), "err", err)
			return
		}
	}
	if !p.told || p.mirror != mirror || p.desired != desired {
		p.mirror, p.desired, p.told = mirror, desired, true
		p.step(m, partition.DesiredChanged{Mirror: mirror, Desired: desired})
	}
	st := p.m.Status()
	if ip.Leader == m.cfg.NodeID {
		if st.Leader && st.LeaderEpoch == ip.LeaderEpoch || st.LeaderEpoch > ip.LeaderEpoch {
			return
		}
		// Lead only once replication leads too: the effects need the
		// local leader at exactly this epoch.
		if _, err := m.cfg.Destination.MirrorLeader(tp, ip.LeaderEpoch); err != nil {
			m.logger.Debug("image says this node leads the mirror partition, replication does not yet", "partition", tp.String(),
				"leaderEpoch", ip.LeaderEpoch, "err", err)
			m.retryLater = true
			return
		}
		p.step(m, partition.BecomeLeader{LeaderEpoch: ip.LeaderEpoch})
		return
	}
	if st.Leader && ip.LeaderEpoch >= st.LeaderEpoch || ip.LeaderEpoch > st.LeaderEpoch {
		p.step(m, partition.BecomeFollower{LeaderEpoch: ip.LeaderEpoch})
	}
}

func (m *Manager) newPart(tp storage.TopicPartition, id storage.TopicID) (*part, error) {
	mc, err := partition.New(machineConfig(m.cfg.Retry, m.rng))
	if err != nil {
		return nil, err
	}
	p := &part{tp: tp, topicID: id, m: mc, exec: newExecutor()}
	p.epoch.Store(-1)
	p.exec.start(m, p, m.draining[tp])
	delete(m.draining, tp)
	m.parts[tp] = p
	return p, nil
}

// dropPart forgets a partition this node no longer hosts (or whose topic
// is no longer a mirror topic) once its fetcher is removed.
func (m *Manager) dropPart(p *part) {
	if st := p.m.Status(); st.Leader {
		p.step(m, partition.BecomeFollower{LeaderEpoch: st.LeaderEpoch})
	}
	// Whatever the machine thinks, nothing may fetch into the log after
	// it is gone.
	p.exec.enqueue(m.ctx, partition.Effect{Kind: partition.RemoveFetcher, Ref: partition.Ref{LeaderEpoch: -1}})
	p.exec.close()
	m.draining[p.tp] = p.exec.done
	delete(m.parts, p.tp)
	m.viewMu.Lock()
	delete(m.views, p.tp)
	m.viewMu.Unlock()
	for _, c := range m.allConns() {
		c.forget(p.tp)
	}
}
