package manager

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// Manager is the MirrorMetadataManager of one broker. Its methods are safe
// for concurrent use.
type Manager struct {
	cfg    Config
	logger *slog.Logger

	// The event queue: unbounded, so producers never block.
	qmu   sync.Mutex
	queue []any
	wake  chan struct{}

	runMu    sync.Mutex
	ctx      context.Context
	cancel   context.CancelFunc
	started  bool
	closed   bool
	loopDone chan struct{}
	// wg counts the executors and the background closes of source
	// connections.
	wg sync.WaitGroup

	// Owned by the loop goroutine.
	rng        *rand.Rand
	img        *raftmeta.Image
	parts      map[storage.TopicPartition]*part
	draining   map[storage.TopicPartition]chan struct{}
	retryLater bool

	// conns are the source connections by mirror; the loop writes, the
	// executors and status readers read.
	connMu sync.RWMutex
	conns  map[string]*mirrorConn

	// views are the machines' statuses as the loop last saw them.
	viewMu sync.Mutex
	views  map[storage.TopicPartition]view

	counters counterSet

	// wrapEndPoint lets tests stand between the fetchers and the source.
	wrapEndPoint func(fetcher.LeaderEndPoint) fetcher.LeaderEndPoint
}

// imageEvent is a new metadata image.
type imageEvent struct{ img *raftmeta.Image }

// partEvent is an input for one partition's machine: an effect's Result
// or a fetcher report (FetchFailed, SourceEpochAhead).
type partEvent struct {
	tp storage.TopicPartition
	ev partition.Event
}

// New returns a manager; it does nothing until Start.
func New(cfg Config) (*Manager, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// The machines validate their config when created; check it once
	// here so a bad broker config fails at startup.
	if _, err := partition.New(machineConfig(cfg.Retry, rand.New(rand.NewPCG(1, 1)))); err != nil {
		return nil, err
	}
	return &Manager{
		cfg:      cfg,
		logger:   cfg.Logger.With("component", "mirror-manager"),
		wake:     make(chan struct{}, 1),
		loopDone: make(chan struct{}),
		rng:      rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(cfg.NodeID))),
		parts:    map[storage.TopicPartition]*part{},
		draining: map[storage.TopicPartition]chan struct{}{},
		conns:    map[string]*mirrorConn{},
		views:    map[storage.TopicPartition]view{},
		counters: counterSet{byMirror: map[string]*mirrorCounters{}},
	}, nil
}

func machineConfig(c partition.Config, r partition.Rand) partition.Config {
	c.Rand = r
	return c
}

// Start runs the manager until Close or ctx ends: it reconciles the
// current image (Config.Image) and every image OnMetadata passes.
func (m *Manager) Start(ctx context.Context) {
	m.runMu.Lock()
	defer m.runMu.Unlock()
	if m.started || m.closed {
		return
	}
	m.started = true
	m.ctx, m.cancel = context.WithCancel(ctx)
	if img := m.cfg.Image(); img != nil {
		m.post(imageEvent{img: img})
	}
	go m.run()
	m.wg.Go(m.measureLoop)
}

// Close stops every fetcher and source connection and waits for the
// manager's goroutines. Effects in flight are cancelled; the machines'
// records stay as they are, and the next leader resumes from them.
func (m *Manager) Close() {
	m.runMu.Lock()
	if m.closed {
		m.runMu.Unlock()
		return
	}
	m.closed = true
	started := m.started
	if started {
		m.cancel()
	}
	m.runMu.Unlock()
	if started {
		<-m.loopDone
	}
	m.connMu.Lock()
	conns := m.conns
	m.conns = map[string]*mirrorConn{}
	m.connMu.Unlock()
	for _, c := range conns {
		c.close()
	}
	m.wg.Wait()
}

// OnMetadata hands the manager a new image (after replication applied
// it). It never blocks.
func (m *Manager) OnMetadata(img *raftmeta.Image) {
	if img != nil {
		m.post(imageEvent{img: img})
	}
}

// post queues an event for the loop.
func (m *Manager) post(ev any) {
	m.qmu.Lock()
	m.queue = append(m.queue, ev)
	m.qmu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// postPart queues an event for tp's machine.
func (m *Manager) postPart(tp storage.TopicPartition, ev partition.Event) {
	m.post(partEvent{tp: tp, ev: ev})
}

// retryInterval is how often the loop reconciles again when a partition
// the image says this node leads was not ready in replication yet.
const retryInterval = 100 * time.Millisecond

// run is the loop.
func (m *Manager) run() {
	defer close(m.loopDone)
	tick := time.NewTicker(retryInterval)
	defer tick.Stop()
	for {
		select {
		case <-m.ctx.Done():
			m.stopAll()
			return
		case <-m.wake:
		case <-tick.C:
			if !m.retryLater || m.img == nil {
				continue
			}
			m.reconcile(m.img)
			m.publish()
			continue
		}
		m.qmu.Lock()
		batch := m.queue
		m.queue = nil
		m.qmu.Unlock()
		// Only the newest image matters (reconcile is level-triggered),
		// but results must be stepped in order around it.
		var lastImg *raftmeta.Image
		for _, ev := range batch {
			if ie, ok := ev.(imageEvent); ok {
				lastImg = ie.img
			}
		}
		for _, ev := range batch {
			switch ev := ev.(type) {
			case imageEvent:
				if ev.img == lastImg {
					m.img = ev.img
					m.reconcile(ev.img)
				}
			case partEvent:
				m.stepPart(ev.tp, ev.ev)
			}
		}
		m.publish()
	}
}

// stepPart steps one event into tp's machine and dispatches what it emits.
func (m *Manager) stepPart(tp storage.TopicPartition, ev partition.Event) {
	p, ok := m.parts[tp]
	if !ok {
		return
	}
	p.step(m, ev)
}

// stopAll ends every executor (the loop is stopping).
func (m *Manager) stopAll() {
	for _, p := range m.parts {
		p.exec.close()
	}
}
