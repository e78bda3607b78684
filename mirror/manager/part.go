package manager

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/storage"
)

// part is one mirror partition this node hosts: its machine (owned by the
// loop) and the executor that performs its effects.
type part struct {
	tp      storage.TopicPartition
	topicID storage.TopicID
	m       *partition.Machine
	// epoch is the machine's leader epoch, for the executor's fence.
	epoch atomic.Int32

	// What the machine was last told (the loop's).
	mirror  string
	desired partition.Desired
	told    bool

	exec *executor
}

// step feeds ev to the machine, hands what it emits to the executor and
// cancels what it no longer waits on.
func (p *part) step(m *Manager, ev partition.Event) {
	err := p.m.Step(m.cfg.Clock.Now(), ev)
	switch {
	case errors.Is(err, partition.ErrStale):
		m.logger.Debug("stale mirror partition event ignored", "partition", p.tp.String(), "err", err)
	case err != nil:
		m.logger.Warn("mirror partition event rejected", "partition", p.tp.String(), "err", err)
	}
	p.dispatch(m)
}

// dispatch takes the machine's effects and queues them in order.
func (p *part) dispatch(m *Manager) {
	st := p.m.Status()
	p.epoch.Store(st.LeaderEpoch)
	if p.m.HasReady() {
		effs := p.m.Ready().Effects
		p.m.Advance()
		for _, e := range effs {
			m.logger.Debug("mirror partition effect", "partition", p.tp.String(), "effect", e.String())
			p.exec.enqueue(m.ctx, e)
		}
	}
	p.exec.cancelAbandoned(st)
}

// cancellable are the effects a machine may abandon (partition's
// EffectKind.cancellable): waits and requests, not state changes.
func cancellable(k partition.EffectKind) bool {
	switch k {
	case partition.QueryLastMirroredEpoch, partition.CheckExistingRecords, partition.WaitForISRTruncation, partition.BumpLeaderEpoch, partition.ScheduleRetry:
		return true
	}
	return false
}

// job is one effect to perform.
type job struct {
	eff    partition.Effect
	ctx    context.Context
	cancel context.CancelFunc
}

// executor performs one partition's effects in emission order on its own
// goroutine (an effect must not start before the earlier ones have).
type executor struct {
	mu      sync.Mutex
	jobs    []*job
	running *job
	closed  bool
	wake    chan struct{}
	done    chan struct{}
}

func newExecutor() *executor {
	return &executor{wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// start runs the executor; it first waits for prev, the executor of an
// earlier incarnation of the partition, to finish its last RemoveFetcher.
func (x *executor) start(m *Manager, p *part, prev chan struct{}) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(x.done)
		if prev != nil {
			select {
			case <-prev:
			case <-m.ctx.Done():
			}
		}
		for {
			j, ok := x.next(m.ctx)
			if !ok {
				return
			}
			if j.ctx.Err() == nil {
				m.perform(j.ctx, p, j.eff)
			}
			j.cancel()
			x.mu.Lock()
			x.running = nil
			x.mu.Unlock()
		}
	}()
}

// next waits for the next job. After close it drains what is queued
// (cancelled jobs are skipped, but a RemoveFetcher still runs) and then
// reports false.
func (x *executor) next(ctx context.Context) (*job, bool) {
	for {
		x.mu.Lock()
		if len(x.jobs) > 0 {
			j := x.jobs[0]
			x.jobs = x.jobs[1:]
			x.running = j
			x.mu.Unlock()
			return j, true
		}
		closed := x.closed
		x.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-x.wake:
		case <-ctx.Done():
			x.close()
		}
	}
}

func (x *executor) signal() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// enqueue queues an effect. A RemoveFetcher's context is not the
// manager's: it must run even while the manager stops, so nothing fetches
// into a log after its leadership ended.
func (x *executor) enqueue(parent context.Context, e partition.Effect) {
	if e.Kind == partition.RemoveFetcher {
		parent = context.WithoutCancel(parent)
	}
	ctx, cancel := context.WithCancel(parent)
	x.mu.Lock()
	x.jobs = append(x.jobs, &job{eff: e, ctx: ctx, cancel: cancel})
	x.mu.Unlock()
	x.signal()
}

// cancelAbandoned cancels the queued and running effects the machine no
// longer wants: any of an older leader epoch (but RemoveFetcher), and a
// wait it stopped waiting on.
func (x *executor) cancelAbandoned(st partition.Status) {
	x.mu.Lock()
	defer x.mu.Unlock()
	check := func(j *job) {
		e := j.eff
		if e.Kind == partition.RemoveFetcher {
			return
		}
		if e.Ref.LeaderEpoch != st.LeaderEpoch || !st.Leader {
			j.cancel()
			return
		}
		if e.Reply && cancellable(e.Kind) && (st.Waiting == nil || st.Waiting.Ref != e.Ref) {
			j.cancel()
		}
	}
	for _, j := range x.jobs {
		check(j)
	}
	if x.running != nil {
		check(x.running)
	}
}

// close stops the executor once its queue is drained; everything queued
// but RemoveFetcher is cancelled.
func (x *executor) close() {
	x.mu.Lock()
	x.closed = true
	for _, j := range x.jobs {
		if j.eff.Kind != partition.RemoveFetcher {
			j.cancel()
		}
	}
	if x.running != nil && x.running.eff.Kind != partition.RemoveFetcher {
		x.running.cancel()
	}
	x.mu.Unlock()
	x.signal()
}
