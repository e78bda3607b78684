package raftmeta

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// hashicorp/raft keeps each follower's match index in its replication
// goroutines and exposes none of it, but every AppendEntries answer (the
// heartbeats too) carries the follower's last log index. progressTransport
// sits between raft and its network transport and notes those answers, so
// the active controller can report each voter's and observer's log end
// offset and when it last fetched and was caught up, as KRaft's
// LeaderState does from its Fetch requests (DescribeQuorum, KIP-595/836),
// and AddRaftVoter can refuse a replica that is not caught up (KIP-853).

// replicaProgress is what the leader last heard from one replica.
type replicaProgress struct {
	// LogEnd is the replica's last raft index the leader knows to match
	// its own log (capped at the leader's last index).
	LogEnd uint64
	// LastFetch is when the replica last answered an AppendEntries;
	// LastCaughtUp when it last answered one having everything the leader
	// had when the request was sent. Zero when never.
	LastFetch    time.Time
	LastCaughtUp time.Time
}

// progressTracker holds replicaProgress per raft server id.
type progressTracker struct {
	now func() time.Time
	// leaderEnd is the leader's last log index (raft.LastIndex).
	leaderEnd func() uint64

	mu       sync.Mutex
	replicas map[raft.ServerID]replicaProgress
}

func newProgressTracker(now func() time.Time, leaderEnd func() uint64) *progressTracker {
	return &progressTracker{now: now, leaderEnd: leaderEnd, replicas: map[raft.ServerID]replicaProgress{}}
}

// observe records an answer of id to a request sent at sent, when the
// leader's log ended at sentEnd.
func (t *progressTracker) observe(id raft.ServerID, sent time.Time, sentEnd uint64, resp *raft.AppendEntriesResponse) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.replicas[id]
	p.LastFetch = t.now()
	if resp.Success {
		// A follower answers with its last index; a tail it has not yet
		// truncated (an old leader's entries) is not the leader's log.
		p.LogEnd = min(resp.LastLog, max(t.leaderEnd(), sentEnd))
		if resp.LastLog >= sentEnd {
			p.LastCaughtUp = sent
		}
	}
	t.replicas[id] = p
}

// get returns what is known of id.
func (t *progressTracker) get(id raft.ServerID) (replicaProgress, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.replicas[id]
	return p, ok
}

// progressTransport is raft's network transport with the AppendEntries
// answers noted in a progressTracker; every other method is the
// transport's own.
type progressTransport struct {
	*raft.NetworkTransport
	tracker *progressTracker
}

// AppendEntries implements raft.Transport (the heartbeats and the
// replication that is not pipelined).
func (p *progressTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	sent, sentEnd := p.tracker.now(), sentEndOf(args, p.tracker.leaderEnd)
	if err := p.NetworkTransport.AppendEntries(id, target, args, resp); err != nil {
		return err
	}
	p.tracker.observe(id, sent, sentEnd, resp)
	return nil
}

// AppendEntriesPipeline implements raft.Transport.
func (p *progressTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	inner, err := p.NetworkTransport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	pl := &progressPipeline{AppendPipeline: inner, id: id, tracker: p.tracker,
		out: make(chan raft.AppendFuture, cap(inner.Consumer())), stop: make(chan struct{})}
	go pl.relay()
	return pl, nil
}

// sentEndOf is the leader's last index as a request carries it: its last
// entry's, else (a heartbeat) the leader's log end now.
func sentEndOf(args *raft.AppendEntriesRequest, leaderEnd func() uint64) uint64 {
	if n := len(args.Entries); n > 0 {
		return args.Entries[n-1].Index
	}
	return leaderEnd()
}

// progressPipeline relays a pipeline's answers to raft, noting each.
type progressPipeline struct {
	raft.AppendPipeline
	id        raft.ServerID
	tracker   *progressTracker
	out       chan raft.AppendFuture
	stop      chan struct{}
	closeOnce sync.Once
}

func (p *progressPipeline) relay() {
	for {
		select {
		case f := <-p.AppendPipeline.Consumer():
			if f.Error() == nil {
				p.tracker.observe(p.id, f.Start(), sentEndOf(f.Request(), p.tracker.leaderEnd), f.Response())
			}
			select {
			case p.out <- f:
			case <-p.stop:
				return
			}
		case <-p.stop:
			return
		}
	}
}

// Consumer implements raft.AppendPipeline.
func (p *progressPipeline) Consumer() <-chan raft.AppendFuture { return p.out }

// Close implements raft.AppendPipeline.
func (p *progressPipeline) Close() error {
	p.closeOnce.Do(func() { close(p.stop) })
	return p.AppendPipeline.Close()
}
