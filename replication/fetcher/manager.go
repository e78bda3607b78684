package fetcher

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
)

// ManagerConfig is a Manager's dependencies.
type ManagerConfig struct {
	// Name prefixes the fetchers' names (Kafka's "ReplicaFetcherThread").
	Name string
	// NewEndPoint connects to a leader.
	NewEndPoint func(leader BrokerEndPoint) (LeaderEndPoint, error)
	// Replicas finds the local replica of a partition.
	Replicas func(tp storage.TopicPartition) (Replica, error)
	Clock    clock.Clock
	Backoff  time.Duration
	Logger   *slog.Logger
	// AwaitMetadata is each fetcher's Config.AwaitMetadata.
	AwaitMetadata func(ctx context.Context)
	// Quota is each fetcher's Config.Quota.
	Quota Quota
}

// Manager keeps one Fetcher per leader broker (Kafka's
// AbstractFetcherManager with num.replica.fetchers=1). Until Start the
// fetchers only hold state, so a simulation can drive them itself; after
// Start each runs in its own goroutine.
type Manager struct {
	cfg    ManagerConfig
	logger *slog.Logger
	failed FailedPartitions

	mu       sync.Mutex
	fetchers map[int32]*managedFetcher
	runCtx   context.Context
	stopped  bool
}

type managedFetcher struct {
	f      *Fetcher
	cancel context.CancelFunc
	done   chan struct{}
}

// NewManager returns a manager with no fetchers.
func NewManager(cfg ManagerConfig) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Name == "" {
		cfg.Name = "ReplicaFetcher"
	}
	return &Manager{cfg: cfg, logger: cfg.Logger, fetchers: map[int32]*managedFetcher{}}
}

// Start runs every fetcher, present and future, in its own goroutine until
// ctx ends or Shutdown.
func (m *Manager) Start(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runCtx != nil || m.stopped {
		return
	}
	m.runCtx = ctx
	for _, id := range m.idsLocked() {
		m.startLocked(m.fetchers[id])
	}
}

func (m *Manager) startLocked(mf *managedFetcher) {
	ctx, cancel := context.WithCancel(m.runCtx)
	mf.cancel, mf.done = cancel, make(chan struct{})
	go func() {
		defer close(mf.done)
		mf.f.Run(ctx)
	}()
}

// stopLocked ends a fetcher's goroutine, if any, and closes its endpoint.
func (m *Manager) stopLocked(mf *managedFetcher) {
	if mf.cancel != nil {
		mf.cancel()
		<-mf.done
	}
	if err := mf.f.EndPoint().Close(); err != nil {
		m.logger.Warn("closing a leader endpoint", "fetcher", mf.f.Name(), "err", err)
	}
}

func (m *Manager) idsLocked() []int32 {
	ids := make([]int32, 0, len(m.fetchers))
	for id := range m.fetchers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// AddFetcherForPartitions hands partitions to the fetchers of their leaders
// (Kafka's addFetcherForPartitions), creating fetchers as needed. A leader
// whose endpoint changed gets a new fetcher, and the partitions of the old
// one move to it (Kafka drops them; they would otherwise wait for a new
// leader epoch).
func (m *Manager) AddFetcherForPartitions(parts map[storage.TopicPartition]InitialFetchState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return fmt.Errorf("fetcher: manager shut down")
	}
	byLeader := map[int32]map[storage.TopicPartition]InitialFetchState{}
	for tp, in := range parts {
		g := byLeader[in.Leader.ID]
		if g == nil {
			g = map[storage.TopicPartition]InitialFetchState{}
			byLeader[in.Leader.ID] = g
		}
		g[tp] = in
	}
	ids := make([]int32, 0, len(byLeader))
	for id := range byLeader {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var firstErr error
	for _, id := range ids {
		group := byLeader[id]
		leader := group[sortedKeys(group)[0]].Leader
		mf, ok := m.fetchers[id]
		if ok && mf.f.EndPoint().Broker() != leader {
			moved := mf.f.RemoveAllPartitions()
			m.stopLocked(mf)
			delete(m.fetchers, id)
			ok = false
			for tp, st := range moved {
				if _, adding := group[tp]; !adding {
					group[tp] = InitialFetchState{TopicID: st.TopicID, Leader: leader,
						CurrentLeaderEpoch: st.CurrentLeaderEpoch, InitOffset: st.FetchOffset}
				}
			}
		}
		if !ok {
			ep, err := m.cfg.NewEndPoint(leader)
			if err != nil {
				m.logger.Error("cannot connect a fetcher to the leader", "leader", leader.String(), "err", err)
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			mf = &managedFetcher{f: New(Config{
				Name:     fmt.Sprintf("%s-%d", m.cfg.Name, id),
				EndPoint: ep,
				Replicas: m.cfg.Replicas,
				Clock:    m.cfg.Clock,
				Backoff:  m.cfg.Backoff,
				Logger:   m.cfg.Logger,
				Failed:   &m.failed,

				AwaitMetadata: m.cfg.AwaitMetadata,
				Quota:         m.cfg.Quota,
			})}
			m.fetchers[id] = mf
			if m.runCtx != nil {
				m.startLocked(mf)
			}
		}
		mf.f.AddPartitions(group)
	}
	return firstErr
}

// RemoveFetcherForPartitions stops fetching the partitions and returns
// their last states (Kafka's removeFetcherForPartitions). When it returns
// no fetcher touches their logs.
func (m *Manager) RemoveFetcherForPartitions(tps []storage.TopicPartition) map[storage.TopicPartition]PartitionState {
	if len(tps) == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[storage.TopicPartition]PartitionState{}
	for _, id := range m.idsLocked() {
		for tp, st := range m.fetchers[id].f.RemovePartitions(tps) {
			out[tp] = st
		}
	}
	m.failed.remove(tps...)
	return out
}

// ShutdownIdleFetchers stops the fetchers left without partitions.
func (m *Manager) ShutdownIdleFetchers() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range m.idsLocked() {
		if mf := m.fetchers[id]; mf.f.PartitionCount() == 0 {
			m.stopLocked(mf)
			delete(m.fetchers, id)
		}
	}
}

// Fetchers returns the fetchers by leader id.
func (m *Manager) Fetchers() []*Fetcher {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Fetcher, 0, len(m.fetchers))
	for _, id := range m.idsLocked() {
		out = append(out, m.fetchers[id].f)
	}
	return out
}

// Fetcher returns the fetcher of a partition, if one fetches it.
func (m *Manager) Fetcher(tp storage.TopicPartition) (*Fetcher, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range m.idsLocked() {
		if _, ok := m.fetchers[id].f.State(tp); ok {
			return m.fetchers[id].f, true
		}
	}
	return nil, false
}

// Failed are the partitions the fetchers gave up on.
func (m *Manager) Failed() *FailedPartitions { return &m.failed }

// Shutdown stops every fetcher and closes the endpoints (Kafka's
// closeAllFetchers). The manager cannot be used afterwards.
func (m *Manager) Shutdown() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopped = true
	// Cancel them all first so they stop in parallel.
	for _, mf := range m.fetchers {
		if mf.cancel != nil {
			mf.cancel()
		}
	}
	for _, id := range m.idsLocked() {
		m.stopLocked(m.fetchers[id])
	}
	m.fetchers = map[int32]*managedFetcher{}
}
