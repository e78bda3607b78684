package raftmeta

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
	"github.com/twmb/franz-go/pkg/kerr"
)

// AddRaftVoter and RemoveRaftVoter change the voter set (KIP-853) with
// raft's own membership changes: a raft configuration entry, which every
// node keeps in its log and snapshots, so a restarted node knows the
// current voters whatever controller.quorum.voters says (that key only
// bootstraps an empty metadata directory). As in KRaft's AddVoterHandler
// and RemoveVoterHandler, one change runs at a time, only once the leader
// has committed an entry of its term and the last change is committed,
// and the answer waits for the new configuration to commit.

// VoterChangeError is a refused voter change: Kafka's error code and the
// reason.
type VoterChangeError struct {
	Err     *kerr.Error
	Message string
}

func (e *VoterChangeError) Error() string { return e.Err.Message + ": " + e.Message }
func (e *VoterChangeError) Unwrap() error { return e.Err }

func voterChangeErr(err *kerr.Error, format string, args ...any) error {
	return &VoterChangeError{Err: err, Message: fmt.Sprintf(format, args...)}
}

// voterCaughtUpWithin is how recently a replica must have fetched and been
// caught up to become a voter. KRaft's LeaderState.isReplicaCaughtUp asks
// for a fetch in the last hour and a catch-up at any time; a voter that
// lags delays every commit, so Strait asks for both within a minute.
const voterCaughtUpWithin = time.Minute

// voterChange starts a voter change on the leader: it refuses one while
// another is under way or the last is not committed, and returns raft and
// the index of the configuration to change.
func (q *Quorum) voterChange(ctx context.Context) (*raft.Raft, raft.Configuration, uint64, func(), error) {
	r := q.raft.Load()
	if r == nil || r.State() != raft.Leader {
		return nil, raft.Configuration{}, 0, nil, ErrNotController
	}
	select {
	case q.voterChanges <- struct{}{}:
	default:
		return nil, raft.Configuration{}, 0, nil, voterChangeErr(kerr.RequestTimedOut, "Request timed out waiting for leader to handle previous voter change request")
	}
	release := func() { <-q.voterChanges }
	if err := q.sync(ctx); err != nil {
		release()
		if errors.Is(err, ErrNotController) {
			return nil, raft.Configuration{}, 0, nil, err
		}
		return nil, raft.Configuration{}, 0, nil, voterChangeErr(kerr.RequestTimedOut, "Request timed out waiting for leader to establish HWM and fence previous voter changes")
	}
	cf := r.GetConfiguration()
	if err := waitFuture(ctx, cf); err != nil {
		release()
		return nil, raft.Configuration{}, 0, nil, err
	}
	if idx := cf.Index(); idx > r.CommitIndex() {
		release()
		return nil, raft.Configuration{}, 0, nil, voterChangeErr(kerr.RequestTimedOut, "Request timed out waiting for voters to commit the latest voter change at %d with HWM %d", idx-1, r.CommitIndex())
	}
	return r, cf.Configuration(), cf.Index(), release, nil
}

// AddVoter makes node id, whose metadata directory is dir, a voter at addr
// ("" keeps the address raft has for it). The node must follow the log
// already, as an observer (a raft non-voter), caught up with the leader.
// It returns once the new configuration is committed, a
// *VoterChangeError when refused, or ErrNotController.
func (q *Quorum) AddVoter(ctx context.Context, id int32, dir Uuid, addr string) error {
	r, conf, index, release, err := q.voterChange(ctx)
	if err != nil {
		return err
	}
	defer release()
	sid := raft.ServerID(strconv.Itoa(int(id)))
	var observer *raft.Server
	for i, s := range conf.Servers {
		if s.ID != sid {
			continue
		}
		if s.Suffrage == raft.Voter {
			return voterChangeErr(kerr.DuplicateVoter, "The voter id for %d is already part of the set of voters %v.", id, voterIDs(conf))
		}
		observer = &conf.Servers[i]
	}
	if addr == "" {
		if observer == nil {
			return voterChangeErr(kerr.InvalidRequest, "Provided listeners do not contain a listener for %s, and %d is not an observer of the quorum", q.cfg.ControllerListenerName, id)
		}
		addr = string(observer.Address)
	}
	if known := metadataDirectoryID(q.fsm.Image(), id); observer != nil && !known.IsZero() && known != dir {
		// KRaft knows observers by id and directory id: this one is
		// not among them.
		return voterChangeErr(kerr.RequestTimedOut, "Aborted add voter operation for %d: its metadata directory is %s, not %s", id, known, dir)
	}
	p, ok := q.progress.get(sid)
	now := q.cfg.Clock.Now()
	if observer == nil || !ok || now.Sub(p.LastFetch) > voterCaughtUpWithin || now.Sub(p.LastCaughtUp) > voterCaughtUpWithin {
		return voterChangeErr(kerr.RequestTimedOut, "Aborted add voter operation for %d since it is lagging behind (it must follow the metadata log as an observer and have caught up within %s)", id, voterCaughtUpWithin)
	}
	q.cfg.Logger.Info("adding a voter to the metadata quorum", "voter", id, "addr", addr)
	return q.voterChangeResult(ctx, r.AddVoter(sid, raft.ServerAddress(addr), index, timeoutOf(ctx)))
}

// RemoveVoter takes node id, whose metadata directory is dir, out of the
// voter set. A node still registered
// as a broker stays as an observer, so its broker keeps following the
// metadata (a removed KRaft voter goes on fetching as an observer); any
// other leaves the configuration. The leader removing itself hands the
// leadership on once the change commits (raft steps down, as KRaft's
// leader resigns).
func (q *Quorum) RemoveVoter(ctx context.Context, id int32, dir Uuid) error {
	r, conf, index, release, err := q.voterChange(ctx)
	if err != nil {
		return err
	}
	defer release()
	sid := raft.ServerID(strconv.Itoa(int(id)))
	voters := voterIDs(conf)
	found := false
	for _, v := range voters {
		found = found || v == id
	}
	known := metadataDirectoryID(q.fsm.Image(), id)
	if !found || len(voters) == 1 || !known.IsZero() && known != dir {
		return voterChangeErr(kerr.VoterNotFound, "Cannot remove voter %d (directory %s) from the set of voters %v", id, dir, voters)
	}
	var f raft.IndexFuture
	if _, registered := q.fsm.Image().Brokers[id]; registered {
		q.cfg.Logger.Info("removing a voter from the metadata quorum; it stays an observer", "voter", id)
		f = r.DemoteVoter(sid, index, timeoutOf(ctx))
	} else {
		q.cfg.Logger.Info("removing a voter from the metadata quorum", "voter", id)
		f = r.RemoveServer(sid, index, timeoutOf(ctx))
	}
	return q.voterChangeResult(ctx, f)
}

// voterChangeResult waits for a configuration change to commit.
func (q *Quorum) voterChangeResult(ctx context.Context, f raft.Future) error {
	err := waitFuture(ctx, f)
	switch {
	case err == nil:
		q.noticeCommit()
		return nil
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return voterChangeErr(kerr.RequestTimedOut, "the new set of voters did not commit in time: %v", err)
	case errors.Is(err, ErrNotController):
		return err
	}
	// prevIndex no longer the latest configuration, or raft refusing the
	// configuration: another change got in first.
	return voterChangeErr(kerr.RequestTimedOut, "%v", err)
}

// voterIDs lists a configuration's voters.
func voterIDs(conf raft.Configuration) []int32 {
	var ids []int32
	for _, s := range conf.Servers {
		if s.Suffrage != raft.Voter {
			continue
		}
		if n, err := strconv.ParseInt(string(s.ID), 10, 32); err == nil {
			ids = append(ids, int32(n))
		}
	}
	return ids
}
