package replication

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/storage"
)

// Read-only mirror topics (KIP-1279): a topic whose mirror.name is set is
// written by its mirror alone while the mirror partition is PREPARING,
// MIRRORING or PAUSED, and by clients again once it is STOPPED. The mirror
// partition's machine decides which, per leader epoch, and sets it here;
// Produce (transactional or not) and DeleteRecords check it. Until the
// machine has decided in the current leader epoch the partition answers
// LEADER_NOT_AVAILABLE, which clients retry, so no write slips in before
// the machine decided. Fetch, ListOffsets, OffsetForLeaderEpoch and the
// coordinators' appends are not affected.

// MirrorAccess is the write access the mirror partition's machine set for
// a partition in one leader epoch (mirror/partition.Access, which broker/
// translates: replication may not import mirror).
type MirrorAccess int8

const (
	// MirrorAccessUnknown: not decided in the current leader epoch.
	MirrorAccessUnknown MirrorAccess = iota
	// MirrorAccessReadOnly: client writes fail with READ_ONLY_TOPIC.
	MirrorAccessReadOnly
	// MirrorAccessWritable: client writes are accepted.
	MirrorAccessWritable
)

// mirrorAccess is the access the mirror set for one leader epoch.
type mirrorAccess struct {
	leaderEpoch int32
	access      MirrorAccess
}

// SetMirrorAccess sets tp's write access for leaderEpoch (broker/ serves
// it as the mirror/manager.Destination method). A call for another leader epoch than
// the partition's current one, or for a partition that is not local, is
// ignored and returns false. It takes the partition's lock exclusively:
// once it returns, no client append that passed an older access check is
// still in flight.
func (r *ReplicaManager) SetMirrorAccess(tp storage.TopicPartition, leaderEpoch int32, a MirrorAccess) bool {
	p, ok := r.Partition(tp)
	if !ok {
		return false
	}
	p.leaderIsrUpdateLock.Lock()
	defer p.leaderIsrUpdateLock.Unlock()
	if p.removed.Load() || p.state.Load().leaderEpoch != leaderEpoch {
		return false
	}
	p.mirrorAccess.Store(&mirrorAccess{leaderEpoch: leaderEpoch, access: a})
	return true
}

// mirrorAccessIn is the access set for st's leader epoch: a new leader
// epoch starts with MirrorAccessUnknown.
func (p *Partition) mirrorAccessIn(st *partitionState) MirrorAccess {
	if a := p.mirrorAccess.Load(); a != nil && a.leaderEpoch == st.leaderEpoch {
		return a.access
	}
	return MirrorAccessUnknown
}

// checkMirrorWrite refuses a client write to a mirror topic's partition
// that is read-only (READ_ONLY_TOPIC) or whose access is not decided in
// the current leader epoch (LEADER_NOT_AVAILABLE, retriable), and to a
// drill clone's partition not yet settled (checkCloneWrite). Any other
// topic is writable. leaderIsrUpdateLock is held.
func (p *Partition) checkMirrorWrite(img *raftmeta.Image, st *partitionState) error {
	mirror, _ := img.TopicMirror(p.tp.Topic)
	if mirror == "" {
		if _, clone := img.TopicConfig(p.tp.Topic)[raftmeta.MirrorCloneConfig]; clone {
			return p.checkCloneWrite(st)
		}
		return nil
	}
	switch p.mirrorAccessIn(st) {
	case MirrorAccessWritable:
		return nil
	case MirrorAccessReadOnly:
		return &readOnlyTopicError{topic: p.tp.Topic, mirror: mirror}
	}
	return fmt.Errorf("replication: %s is in mirror %q and its write access in leader epoch %d is not decided yet: %w",
		p.tp, mirror, st.leaderEpoch, kerr.LeaderNotAvailable)
}

// readOnlyTopicError is READ_ONLY_TOPIC with the message a Produce answer
// carries.
type readOnlyTopicError struct {
	topic, mirror string
}

func (e *readOnlyTopicError) Error() string {
	return fmt.Sprintf("topic %s is read-only: it is a mirror topic of cluster mirror %s", e.topic, e.mirror)
}

func (e *readOnlyTopicError) Unwrap() error { return readOnlyTopic }

// readOnlyTopic is KIP-1279's READ_ONLY_TOPIC (134), which kerr does not
// know; raftmeta/mirrormsg, the KIP's message package, holds the code.
var readOnlyTopic = mirrormsg.ReadOnlyTopic
