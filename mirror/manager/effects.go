package manager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/mirror/state"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// perform runs one effect on p's executor and steps its Result back. An
// effect of a leader epoch the machine has left is dropped unstarted
// (RemoveFetcher excepted), as the coordinator fences a zombie's writes.
func (m *Manager) perform(ctx context.Context, p *part, e partition.Effect) {
	if e.Kind != partition.RemoveFetcher && e.Ref.LeaderEpoch != p.epoch.Load() {
		m.logger.Debug("dropping a mirror effect of an old leader epoch", "partition", p.tp.String(), "effect", e.String(),
			"leaderEpoch", p.epoch.Load())
		return
	}
	res := m.run1(ctx, p, e)
	if !e.Reply || ctx.Err() != nil {
		return
	}
	res.Ref = e.Ref
	if res.Err != nil {
		m.logger.Info("mirror partition step failed", "partition", p.tp.String(), "effect", e.Kind.String(), "err", res.Err)
	}
	m.postPart(p.tp, res)
}

func (m *Manager) run1(ctx context.Context, p *part, e partition.Effect) partition.Result {
	tp := p.tp
	key := state.Key{Mirror: e.Mirror, TopicID: p.topicID, Partition: tp.Partition}
	switch e.Kind {
	case partition.ReadMirrorState:
		rec, err := m.cfg.States.ReadState(ctx, key)
		return partition.Result{Record: rec, Err: err}

	case partition.WriteMirrorState:
		_, err := m.cfg.States.WriteState(ctx, key, e.Record, e.ExpectedStateEpoch)
		return partition.Result{Err: err}

	case partition.SetReadOnly, partition.ClearReadOnly:
		a := partition.AccessReadOnly
		if e.Kind == partition.ClearReadOnly {
			a = partition.AccessWritable
		}
		if !m.cfg.Destination.SetMirrorAccess(tp, e.Ref.LeaderEpoch, a) {
			return partition.Result{Err: fmt.Errorf("set %s %s: leader epoch %d is not current", tp, a, e.Ref.LeaderEpoch)}
		}
		return partition.Result{}

	case partition.QueryLastMirroredEpoch:
		c, err := m.conn(e.Mirror)
		if err != nil {
			return partition.Result{Err: err}
		}
		lme, start, err := c.cluster.LastMirroredEpoch(ctx, tp.Topic, tp.Partition)
		return partition.Result{Epoch: lme, LogStartOffset: start, Err: sourceErr(err)}

	case partition.CheckExistingRecords:
		return m.checkExistingRecords(ctx, tp, e)

	case partition.TruncateFully, partition.TruncateAfterEpoch:
		return m.truncate(tp, e)

	case partition.WaitForISRTruncation:
		lp, err := m.cfg.Destination.MirrorLeader(tp, e.Ref.LeaderEpoch)
		if err != nil {
			return partition.Result{Err: err}
		}
		return partition.Result{Err: m.poll(ctx, func() bool { return lp.ReplicasAt(e.Offset, e.AllReplicas) })}

	case partition.AddFetcher:
		return partition.Result{Err: m.addFetcher(ctx, p, e)}

	case partition.RemoveFetcher:
		for _, c := range m.allConns() {
			c.remove(tp)
		}
		if !e.Reply {
			return partition.Result{}
		}
		lp, err := m.cfg.Destination.MirrorLeader(tp, e.Ref.LeaderEpoch)
		if err != nil {
			return partition.Result{Err: err}
		}
		return partition.Result{LogEndOffset: lp.LogEndOffset(), LatestEpoch: lp.LastBatchEpoch()}

	case partition.BumpLeaderEpoch:
		return partition.Result{Err: m.cfg.Controller.BumpLeaderEpoch(ctx, tp, e.Ref.LeaderEpoch, e.Epoch)}

	case partition.AbortOpenTransactions:
		return partition.Result{Err: m.abortOpenTransactions(ctx, tp, e)}

	case partition.AppendMirrorPIDReset:
		lp, err := m.cfg.Destination.MirrorLeader(tp, e.Ref.LeaderEpoch)
		if err != nil {
			return partition.Result{Err: err}
		}
		return partition.Result{Err: lp.AppendMirrorPIDReset(ctx)}

	case partition.ScheduleRetry:
		d := e.At.Sub(m.cfg.Clock.Now())
		if d <= 0 {
			return partition.Result{}
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return partition.Result{}
		case <-ctx.Done():
			return partition.Result{Err: ctx.Err()}
		}
	}
	return partition.Result{Err: fmt.Errorf("%w: effect %s", partition.ErrInvalidEvent, e.Kind)}
}

// abortOpenTransactions closes, for a stop, the transactions the source
// left open at the stop point: their coordinator is on the source and
// will never write their markers here (KIP-1279's stop aborts them rather
// than truncate to the last stable offset).
func (m *Manager) abortOpenTransactions(ctx context.Context, tp storage.TopicPartition, e partition.Effect) error {
	lp, err := m.cfg.Destination.MirrorLeader(tp, e.Ref.LeaderEpoch)
	if err != nil {
		return err
	}
	aborted, err := lp.AbortOpenTransactions(ctx)
	if len(aborted) > 0 {
		pids := make([]int64, len(aborted))
		for i, t := range aborted {
			pids[i] = t.ProducerID
		}
		m.logger.Info("mirror stop aborted the transactions the source left open", "partition", tp.String(),
			"transactions", len(aborted), "producerIds", pids, "firstOffset", aborted[0].FirstOffset, "leaderEpoch", e.Ref.LeaderEpoch)
	}
	return err
}

// truncate performs the two truncations on the local leader.
func (m *Manager) truncate(tp storage.TopicPartition, e partition.Effect) partition.Result {
	lp, err := m.cfg.Destination.MirrorLeader(tp, e.Ref.LeaderEpoch)
	if err != nil {
		return partition.Result{Err: err}
	}
	switch e.Kind {
	case partition.TruncateFully:
		err = lp.TruncateFullyAndStartAt(e.Offset)
	case partition.TruncateAfterEpoch:
		// The log's history up to the LME is the source's; whatever
		// follows (the first later epoch on) is this cluster's own and
		// goes. No later epoch: nothing to cut.
		if a := partition.Align(e.Epoch, lp.LogStartOffset(), lp.LogEndOffset(), lp.EndOffsetForEpoch); a.Truncates() {
			_, err = lp.TruncateTo(a.From)
		}
	}
	if err != nil {
		return partition.Result{Err: fmt.Errorf("%s %s: %w", e.Kind, tp, err)}
	}
	return partition.Result{LogEndOffset: lp.LogEndOffset(), LatestEpoch: lp.LastBatchEpoch()}
}

// addFetcher starts the mirror fetcher of p at the AddFetcher's offset
// (-1: the local log end), in the fetcher of its current source leader.
func (m *Manager) addFetcher(ctx context.Context, p *part, e partition.Effect) error {
	c, err := m.conn(e.Mirror)
	if err != nil {
		return err
	}
	lp, err := m.cfg.Destination.MirrorLeader(p.tp, e.Ref.LeaderEpoch)
	if err != nil {
		return err
	}
	leader, _, err := c.cluster.Leader(ctx, p.tp)
	if err != nil {
		return sourceErr(err)
	}
	r := &mirrorReplica{LeaderPartition: lp, tp: p.tp, ref: e.Ref, leader: leader,
		report: func(ev partition.Event) { m.postPart(p.tp, ev) }, stats: m.counters.of(e.Mirror)}
	r.ahead.Store(lp.LeaderEpoch())
	return c.add(r, fetcher.InitialFetchState{TopicID: p.topicID, Leader: leader, CurrentLeaderEpoch: e.Ref.LeaderEpoch,
		InitOffset: e.Offset})
}

// allConns lists the connections (a partition may have moved between
// mirrors, so removal looks everywhere).
func (m *Manager) allConns() []*mirrorConn {
	m.connMu.RLock()
	defer m.connMu.RUnlock()
	out := make([]*mirrorConn, 0, len(m.conns))
	for _, c := range m.conns {
		out = append(out, c)
	}
	return out
}

// conn is a mirror's usable source connection.
func (m *Manager) conn(mirror string) (*mirrorConn, error) {
	m.connMu.RLock()
	c, ok := m.conns[mirror]
	m.connMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: mirror %q is not in the metadata", errNoSource, mirror)
	}
	return c, c.usable()
}

// sourceErr marks the source errors a partition cannot get past as the
// machine's failures: a recreated source topic for good, a missing topic
// or partition and an unsupported source with retries.
func sourceErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, source.ErrSourceTopicRecreated):
		return fmt.Errorf("%w: %w", partition.ErrNonRetryable, err)
	case source.IsFatal(err):
		return fmt.Errorf("%w: %w", partition.ErrFailed, err)
	}
	return err
}

// poll waits until cond holds (checked every ISRPollInterval) or ctx ends.
func (m *Manager) poll(ctx context.Context, cond func() bool) error {
	if cond() {
		return nil
	}
	t := time.NewTicker(m.cfg.ISRPollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if cond() {
				return nil
			}
		}
	}
}
