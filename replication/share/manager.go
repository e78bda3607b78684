package share

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/clock"
)

// reapIdle is the longest the lock reaper sleeps: it also wakes for the
// earliest lock deadline it knows of, and when an acquisition sets an
// earlier one.
const reapIdle = time.Second

// Manager holds the share partitions this broker leads, per share group,
// and the share sessions of the members fetching from it (Kafka's
// SharePartitionManager). It serves ShareFetch and ShareAcknowledge.
type Manager struct {
	cfg       Config
	logs      Logs
	persister Persister
	groups    GroupConfigs
	clock     clock.Clock
	logger    *slog.Logger
	sessions  *sessionCache

	mu     sync.Mutex
	parts  map[PartitionKey]*entry
	closed bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// reapAt is when the reaper wakes next (clock time, unix ns); poke
	// wakes it sooner.
	reapAt     atomic.Int64
	poke       chan struct{}
	revalidate chan struct{}
}

// NewManager returns a manager reading logs, persisting through
// persister; groups may be nil (every group takes the broker's configs).
// Close stops it.
func NewManager(cfg Config, logs Logs, persister Persister, groups GroupConfigs, clk clock.Clock, logger *slog.Logger) *Manager {
	if clk == nil {
		clk = clock.Real{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	m := &Manager{
		cfg: cfg, logs: logs, persister: persister, groups: groups, clock: clk, logger: logger,
		sessions:   newSessionCache(cfg.MaxShareSessions),
		parts:      map[PartitionKey]*entry{},
		poke:       make(chan struct{}, 1),
		revalidate: make(chan struct{}, 1),
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.goroutine(m.reap)
	m.goroutine(m.revalidateLoop)
	return m
}

// Close stops the manager: parked fetches answer, writes in flight are
// cancelled, and every later call finds no partition.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	parts := m.parts
	m.parts = map[PartitionKey]*entry{}
	m.mu.Unlock()
	m.cancel()
	for _, e := range parts {
		e.retire(kerr.NotLeaderForPartition)
	}
	m.wg.Wait()
}

// goroutine runs fn unless the manager is closed.
func (m *Manager) goroutine(fn func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		fn()
	}()
	return true
}

// groupConfig is a group's configuration with the broker's defaults.
func (m *Manager) groupConfig(group string) GroupConfig {
	var g GroupConfig
	if m.groups != nil {
		g = m.groups.ShareGroupConfig(group)
	}
	if g.RecordLockDuration <= 0 {
		g.RecordLockDuration = m.cfg.RecordLockDuration
	}
	return g
}

func (m *Manager) partitionConfig() PartitionConfig {
	return PartitionConfig{DeliveryCountLimit: m.cfg.DeliveryCountLimit, MaxInFlight: m.cfg.MaxRecordLocks}
}

// entry is one share partition in the manager: loaded once from the
// persister, then shared by the requests of its group.
type entry struct {
	key         PartitionKey
	tp          TopicPartition
	leaderEpoch int32
	ready       chan struct{} // closed once loading ended
	err         error         // why loading failed; set before ready closes

	mu sync.Mutex
	sp *SharePartition
	// gone is why the partition left the manager (leadership moved, a
	// write was fenced): requests holding the entry answer it.
	gone error
	// fetching is Kafka's fetch lock: one request reads the log for the
	// partition at a time; the others skip it and are woken after.
	fetching bool
	// contended says a fetch found the fetch lock taken: it is woken when
	// the lock is released.
	contended bool
	// flushing says a goroutine runs the write loop.
	flushing bool
	waiters  map[chan struct{}]struct{}
	writes   map[uint64]*writeWait
}

// writeWait is an acknowledgement waiting for the write carrying it.
type writeWait struct {
	done chan struct{}
	err  error
}

func newEntry(key PartitionKey, leaderEpoch int32) *entry {
	return &entry{key: key, tp: TopicPartition{key.TopicID, key.Partition}, leaderEpoch: leaderEpoch,
		ready: make(chan struct{}), waiters: map[chan struct{}]struct{}{}, writes: map[uint64]*writeWait{}}
}

func (e *entry) watch(ch chan struct{}) {
	e.mu.Lock()
	e.waiters[ch] = struct{}{}
	e.mu.Unlock()
}

func (e *entry) unwatch(ch chan struct{}) {
	e.mu.Lock()
	delete(e.waiters, ch)
	e.mu.Unlock()
}

// notifyLocked wakes the parked fetches of the partition but except.
func (e *entry) notifyLocked(except chan struct{}) {
	for ch := range e.waiters {
		if ch == except {
			continue
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// waitForLocked returns the wait for write seq.
func (e *entry) waitForLocked(seq uint64) *writeWait {
	w := e.writes[seq]
	if w == nil {
		w = &writeWait{done: make(chan struct{})}
		e.writes[seq] = w
	}
	return w
}

// retire marks the entry gone with err: acknowledgements waiting for a
// write answer err, parked fetches wake and answer it too.
func (e *entry) retire(err error) {
	e.mu.Lock()
	if e.gone != nil {
		e.mu.Unlock()
		return
	}
	e.gone = err
	writes := e.writes
	e.writes = map[uint64]*writeWait{}
	e.notifyLocked(nil)
	e.mu.Unlock()
	for _, w := range writes {
		w.err = err
		close(w.done)
	}
}

// drop removes e from the manager and retires it.
func (m *Manager) drop(e *entry, err error) {
	m.mu.Lock()
	if m.parts[e.key] == e {
		delete(m.parts, e.key)
	}
	m.mu.Unlock()
	e.retire(err)
}

// partition returns the share partition of key, loading it from the
// persister when this broker does not hold it yet, or holds it from an
// earlier leader epoch (Kafka's getOrCreateSharePartition and
// maybeInitialize). Concurrent requests wait for one load.
func (m *Manager) partition(ctx context.Context, key PartitionKey, log PartitionLog) (*entry, error) {
	epoch := log.LeaderEpoch()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, kerr.NotLeaderForPartition
	}
	e := m.parts[key]
	var stale *entry
	if e != nil && e.leaderEpoch != epoch {
		stale, e = e, nil
		delete(m.parts, key)
	}
	owner := e == nil
	if owner {
		e = newEntry(key, epoch)
		m.parts[key] = e
	}
	m.mu.Unlock()
	if stale != nil {
		stale.retire(kerr.NotLeaderForPartition)
	}
	if owner {
		m.load(e, log)
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	if e.err != nil {
		return nil, e.err
	}
	return e, nil
}

// loaded returns the share partition of key if this broker holds it.
func (m *Manager) loaded(key PartitionKey) *entry {
	m.mu.Lock()
	e := m.parts[key]
	m.mu.Unlock()
	if e == nil {
		return nil
	}
	select {
	case <-e.ready:
		if e.err == nil {
			return e
		}
	default:
	}
	return nil
}

// load reads the share partition's state from the persister, in the
// leader epoch of log, and builds it. What recovering changed (the start
// offset share.auto.offset.reset chose, a log start offset that moved) is
// written before the partition serves: a group's start offset is pinned
// by the first leader to load it, so a failover before the first
// acknowledgement does not move it (Kafka writes it lazily with the first
// acknowledgement, and a new leader may choose again).
func (m *Manager) load(e *entry, log PartitionLog) {
	ctx, cancel := context.WithTimeout(m.ctx, m.cfg.PersisterTimeout)
	defer cancel()
	st, err := m.persister.Read(ctx, e.key, e.leaderEpoch)
	var reset int64
	if err == nil && st.StartOffset < 0 {
		reset, err = m.resetOffset(e.key.GroupID, log)
	}
	var sp *SharePartition
	if err == nil {
		sp = Recover(m.partitionConfig(), e.leaderEpoch, st, reset, log.LogStartOffset())
		if seq, st, ok := sp.BeginWrite(); ok {
			err = m.persister.Write(ctx, e.key, st)
			sp.EndWrite(seq, err == nil)
		}
	}
	if err != nil {
		m.logger.Warn("share partition: loading the state failed",
			"group", e.key.GroupID, "topic_id", e.key.TopicID, "partition", e.key.Partition, "err", err)
		e.err = persisterError(err)
		m.mu.Lock()
		if m.parts[e.key] == e {
			delete(m.parts, e.key)
		}
		m.mu.Unlock()
		close(e.ready)
		return
	}
	e.mu.Lock()
	e.sp = sp
	e.mu.Unlock()
	close(e.ready)
}

// resetOffset is where share.auto.offset.reset starts a share partition
// whose state has no start offset (Kafka's
// startOffsetDuringInitialization): the high watermark for latest, the
// log start for earliest, the first record at most the duration old for
// by_duration (the high watermark when there is none).
func (m *Manager) resetOffset(group string, log PartitionLog) (int64, error) {
	rs, err := parseAutoOffsetReset(m.groupConfig(group).AutoOffsetReset)
	if err != nil {
		m.logger.Warn("share partition: bad share.auto.offset.reset, using latest", "group", group, "err", err)
	}
	switch {
	case rs.earliest:
		return log.LogStartOffset(), nil
	case rs.duration > 0:
		off, ok, err := log.OffsetForTimestamp(m.clock.Now().Add(-rs.duration).UnixMilli())
		if err != nil || ok {
			return off, err
		}
	}
	return log.HighWatermark(), nil
}

// flush makes sure a goroutine writes what the partition has to write.
func (m *Manager) flush(e *entry) {
	e.mu.Lock()
	if e.flushing || e.sp == nil || e.gone != nil {
		e.mu.Unlock()
		return
	}
	e.flushing = true
	e.mu.Unlock()
	if !m.goroutine(func() { m.writeLoop(e) }) {
		e.mu.Lock()
		e.flushing = false
		e.mu.Unlock()
	}
}

// writeLoop writes the partition's state until nothing is left to write:
// one write at a time, each carrying every acknowledgement staged before
// it began (a group commit), and answers the acknowledgements. After a
// failed write it goes on only for acknowledgements waiting to be
// answered; the state the failure left unwritten is retried by the lock
// reaper's next round (expireLocks flushes dirty partitions), so a
// persister that is down is not hammered.
func (m *Manager) writeLoop(e *entry) {
	failed := false
	for {
		e.mu.Lock()
		var (
			seq uint64
			st  PersistedState
			ok  bool
		)
		if e.gone == nil && (!failed || e.sp.hasStaged()) {
			seq, st, ok = e.sp.BeginWrite()
		}
		if !ok {
			e.flushing = false
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()

		ctx, cancel := context.WithTimeout(m.ctx, m.cfg.PersisterTimeout)
		err := m.persister.Write(ctx, e.key, st)
		cancel()

		e.mu.Lock()
		if e.sp.EndWrite(seq, err == nil) {
			e.notifyLocked(nil)
		}
		w := e.writes[seq]
		delete(e.writes, seq)
		e.mu.Unlock()
		fenced := false
		if err != nil {
			code := persisterError(err)
			m.logger.Warn("share partition: writing the state failed",
				"group", e.key.GroupID, "topic_id", e.key.TopicID, "partition", e.key.Partition, "err", err)
			if fenced = fences(code); fenced {
				// Gone before the acknowledgement is answered: a
				// client retrying at once loads the state afresh.
				m.drop(e, code)
			}
		}
		if w != nil {
			w.err = err
			close(w.done)
		}
		failed = err != nil
		if failed && (fenced || m.ctx.Err() != nil) {
			e.mu.Lock()
			e.flushing = false
			e.mu.Unlock()
			return
		}
	}
}

// reap expires acquisition locks (Kafka's AcquisitionLockTimerTask, on one
// goroutine instead of a timer per lock).
func (m *Manager) reap() {
	t := time.NewTimer(reapIdle)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		case <-m.poke:
		}
		wait := reapIdle
		if next, ok := m.expireLocks(); ok {
			wait = min(max(next.Sub(m.clock.Now()), time.Millisecond), reapIdle)
		}
		m.reapAt.Store(m.clock.Now().Add(wait).UnixNano())
		t.Reset(wait)
	}
}

// wakeReaper makes the reaper wake by deadline.
func (m *Manager) wakeReaper(deadline time.Time) {
	if deadline.UnixNano() < m.reapAt.Load() {
		select {
		case m.poke <- struct{}{}:
		default:
		}
	}
}

// expireLocks gives back every record whose lock expired, and returns the
// next deadline.
func (m *Manager) expireLocks() (time.Time, bool) {
	now := m.clock.Now()
	var next time.Time
	for _, e := range m.entries() {
		e.mu.Lock()
		if e.sp == nil || e.gone != nil {
			e.mu.Unlock()
			continue
		}
		if e.sp.ExpireLocks(now) {
			e.notifyLocked(nil)
		}
		dirty := e.sp.Dirty()
		if d, ok := e.sp.NextDeadline(); ok && (next.IsZero() || d.Before(next)) {
			next = d
		}
		e.mu.Unlock()
		if dirty {
			m.flush(e)
		}
	}
	return next, !next.IsZero()
}

func (m *Manager) entries() []*entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*entry, 0, len(m.parts))
	for _, e := range m.parts {
		out = append(out, e)
	}
	return out
}

// LeadershipChanged tells the manager that partitions changed leaders: it
// drops, in the background, every share partition this broker no longer
// leads or leads in a new leader epoch (Kafka's SharePartitionListener
// onBecomingFollower, onDeleted). It never blocks, so a metadata listener
// may call it.
func (m *Manager) LeadershipChanged() {
	select {
	case m.revalidate <- struct{}{}:
	default:
	}
}

func (m *Manager) revalidateLoop() {
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-m.revalidate:
		}
		for _, e := range m.entries() {
			log, err := m.logs.Leader(e.tp)
			if err != nil || log.LeaderEpoch() != e.leaderEpoch {
				m.drop(e, kerr.NotLeaderForPartition)
			}
		}
	}
}

// MemberLeft ends a member's share session and gives back every record it
// holds on this broker, on every partition of the group (Kafka's
// ShareGroupListener.onMemberLeave releases the session's partitions; a
// member that left holds nothing anywhere); the group coordinator calls it
// when a member leaves or is fenced.
func (m *Manager) MemberLeft(group, member string) {
	m.sessions.remove(sessionKey{group, member}, nil, func(*session) {
		for _, e := range m.entries() {
			if e.key.GroupID == group {
				m.releaseMember(e, member, math.MaxUint64)
			}
		}
	})
}

// closeSession ends the session of key (only s, when not nil) and gives
// back what the member acquired in it, or earlier, on the session's
// partitions (Kafka's releaseSession): the final epoch, or the session's
// connection closed. The release happens with the removal, as one step
// for the member's next session.
func (m *Manager) closeSession(key sessionKey, s *session) {
	m.sessions.remove(key, s, func(removed *session) {
		if removed == nil {
			return
		}
		for _, tp := range removed.parts {
			if e := m.loaded(PartitionKey{key.group, tp.TopicID, tp.Partition}); e != nil {
				m.releaseMember(e, key.member, removed.id)
			}
		}
	})
}

// releaseMember gives back what member acquired in its sessions up to upTo
// on e.
func (m *Manager) releaseMember(e *entry, member string, upTo uint64) {
	e.mu.Lock()
	if e.sp == nil || e.gone != nil {
		e.mu.Unlock()
		return
	}
	if e.sp.ReleaseMember(member, upTo) {
		e.notifyLocked(nil)
	}
	dirty := e.sp.Dirty()
	e.mu.Unlock()
	if dirty {
		m.flush(e)
	}
}
