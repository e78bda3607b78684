package raftmeta

import (
	"context"
	"time"

	"github.com/hashicorp/raft"
)

// commitNoticeTimeout bounds how long the notice waits to be queued on
// raft; a leader that cannot queue it for that long has bigger problems,
// and the next write sends another.
const commitNoticeTimeout = time.Second

// Why the active controller follows every write with a raft barrier.
//
// hashicorp/raft tells the other nodes a new commit index only in an
// AppendEntries that it sends because new entries were appended, or every
// CommitTimeout (50-100 ms in a multi-voter quorum) when none were: its
// heartbeats carry no commit index. A write the controller had committed,
// and answered, therefore stayed invisible on the other brokers for up to
// 100 ms. A client that created a topic and then asked another broker for
// its metadata got UNKNOWN_TOPIC_OR_PARTITION (franz-go then waits 250 ms
// before asking again, so the first produce to a new topic took about 265
// ms), and a partition leader elected after a failure became known that
// much later. KRaft brokers learn a commit at once: the controller answers
// their pending fetch of the metadata log as soon as its high watermark
// moves (KIP-595). A barrier is the smallest entry raft appends; appending
// one sends AppendEntries to every node right away, and it carries the
// commit index of the write before it.

// noticeCommit asks for a barrier after a committed write. Notices coalesce:
// one barrier carries the commit of every write before it, and writes that
// follow one another closely carry each other's anyway.
func (q *Quorum) noticeCommit() {
	select {
	case q.commitNotices <- struct{}{}:
	default:
	}
}

// runCommitNotices appends a barrier for each notice while this node
// leads, one at a time, until ctx ends.
func (q *Quorum) runCommitNotices(ctx context.Context) {
	defer q.ticks.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.commitNotices:
		}
		r := q.raft.Load()
		if r == nil || r.State() != raft.Leader {
			continue
		}
		// An error means leadership was lost or raft is stopping: the
		// next leader's own writes tell the others.
		_ = waitFuture(ctx, r.Barrier(commitNoticeTimeout))
	}
}
