package raftmeta

import (
	"cmp"
	"context"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
)

// The metadata log is raft's log, and Kafka tools read it as the single
// partition __cluster_metadata-0 (KIP-595). Raft indexes start at 1 and
// every entry (records, raft's own configuration and no-op entries) has
// one, so the entry at raft index i is the record batch at offset i-1: a
// replica holding entries up to index i has log end offset i, and the
// high watermark, the offset after the last committed entry, is the
// commit index. Kafka's leader epoch is raft's term.

// MetadataTopic and MetadataPartition name the metadata log as Kafka
// tools ask for it (DescribeQuorum).
const (
	MetadataTopic     = "__cluster_metadata"
	MetadataPartition = 0
)

// QuorumReplica is one voter or observer of the quorum as the active
// controller sees it.
type QuorumReplica struct {
	ID int32
	// DirectoryID is the node's metadata directory id, as its broker
	// registered it (zero when unknown).
	DirectoryID Uuid
	// Addr is the replica's raft (CONTROLLER) address.
	Addr string
	// LogEndOffset is -1 when the leader has not heard from the replica in
	// its term.
	LogEndOffset int64
	// LastFetch and LastCaughtUp are zero when unknown (Kafka's -1).
	LastFetch    time.Time
	LastCaughtUp time.Time
}

// QuorumState is the metadata quorum as the active controller describes
// it (KRaft's LeaderState.describeQuorum).
type QuorumState struct {
	LeaderID      int32
	LeaderEpoch   int32
	HighWatermark int64
	Voters        []QuorumReplica
	Observers     []QuorumReplica
}

// DescribeQuorum describes the quorum; only the active controller can.
// It waits until the leader has committed an entry of its own term (KRaft
// answers only once its high watermark is known), so the high watermark
// it reports never goes back: a new leader's commit index then covers
// everything any earlier leader committed.
func (q *Quorum) DescribeQuorum(ctx context.Context) (QuorumState, error) {
	r := q.raft.Load()
	if r == nil || r.State() != raft.Leader {
		return QuorumState{}, ErrNotController
	}
	if err := q.sync(ctx); err != nil {
		return QuorumState{}, err
	}
	cf := r.GetConfiguration()
	if err := waitFuture(ctx, cf); err != nil {
		return QuorumState{}, err
	}
	st := QuorumState{
		LeaderID:      q.cfg.NodeID,
		LeaderEpoch:   int32(min(r.CurrentTerm(), uint64(1<<31-1))),
		HighWatermark: int64(r.CommitIndex()),
	}
	now := q.cfg.Clock.Now()
	leaderEnd := int64(r.LastIndex())
	img := q.fsm.Image()
	for _, s := range cf.Configuration().Servers {
		id, err := strconv.ParseInt(string(s.ID), 10, 32)
		if err != nil {
			continue // not a server Strait added
		}
		rep := QuorumReplica{ID: int32(id), DirectoryID: metadataDirectoryID(img, int32(id)), Addr: string(s.Address), LogEndOffset: -1}
		if int32(id) == q.cfg.NodeID {
			rep.LogEndOffset, rep.LastFetch, rep.LastCaughtUp = leaderEnd, now, now
		} else if p, ok := q.progress.get(s.ID); ok {
			rep.LogEndOffset, rep.LastFetch, rep.LastCaughtUp = int64(p.LogEnd), p.LastFetch, p.LastCaughtUp
		}
		if s.Suffrage == raft.Voter {
			st.Voters = append(st.Voters, rep)
		} else {
			st.Observers = append(st.Observers, rep)
		}
	}
	byID := func(a, b QuorumReplica) int { return cmp.Compare(a.ID, b.ID) }
	slices.SortFunc(st.Voters, byID)
	slices.SortFunc(st.Observers, byID)
	return st, nil
}

// metadataDirectoryID is node id's metadata directory id: the first log
// directory its broker registered (zero when unknown).
func metadataDirectoryID(img *Image, id int32) Uuid {
	if b, ok := img.Brokers[id]; ok && len(b.LogDirs) > 0 {
		return b.LogDirs[0]
	}
	return Uuid{}
}

// splitAddr splits a raft address into host and port (0 when it has
// none).
func splitAddr(addr string) (string, uint16) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	p, _ := strconv.ParseUint(port, 10, 16)
	return host, uint16(p)
}
