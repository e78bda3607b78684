package producer

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// Manager is one partition's ProducerStateManager.
type Manager struct {
	fsys vfs.FS
	dir  string
	cfg  Config
	clk  clock.Clock

	// mu guards everything below. The Log already serialises mutations; the
	// mutex makes the read methods safe from other goroutines.
	mu        sync.Mutex
	producers map[int64]*Entry
	// ongoing are open transactions; unreplicated are completed ones whose
	// marker is not yet below the high watermark. Both count for the first
	// unstable offset.
	ongoing      txnList
	unreplicated txnList
	snapshots    []int64 // offsets of the snapshot files in dir, ascending
	// lastMapOffset is the offset up to which the state reflects the log
	// (exclusive); lastSnapOffset that of the newest snapshot written or
	// loaded.
	lastMapOffset  int64
	lastSnapOffset int64
	// verifications are the KIP-890 guards of producers whose
	// transactional write waits for the coordinator's confirmation
	// (verification.go). Not snapshotted: a guard lives for one request.
	verifications map[int64]*VerificationGuard
}

// NewManager returns a manager for the partition directory dir, aware of
// the snapshot files already in it. It loads no state: the Log calls
// TruncateAndReload and replays the log from MapEndOffset, as Kafka's
// LogLoader does. clk is the partition's clock (Kafka's Time), held for the
// KIP-890 verification state, which is not implemented yet; expiry and
// reload take an explicit time so the Log decides when they run.
func NewManager(fsys vfs.FS, dir string, cfg Config, clk clock.Clock) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	snaps, err := listSnapshots(fsys, dir)
	if err != nil {
		return nil, err
	}
	return &Manager{
		fsys:          fsys,
		dir:           dir,
		cfg:           cfg,
		clk:           clk,
		producers:     map[int64]*Entry{},
		snapshots:     snaps,
		verifications: map[int64]*VerificationGuard{},
	}, nil
}

// Config returns the manager's configuration.
func (m *Manager) Config() Config { return m.cfg }

// committedEntry returns the committed entry of pid (not a copy), or nil.
func (m *Manager) committedEntry(pid int64) *Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.producers[pid]
}

// FindDuplicate returns the metadata of the retained batch that b repeats:
// same producer id and epoch and the exact sequence range of one of the
// producer's last NumBatchesToRetain batches. The Log then answers the
// client with that batch's offsets and writes nothing.
func (m *Manager) FindDuplicate(b record.Batch) (BatchMetadata, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.producers[b.ProducerID()]
	if !ok {
		return BatchMetadata{}, false
	}
	return e.FindDuplicateBatch(b)
}

// Entry returns a copy of pid's state.
func (m *Manager) Entry(pid int64) (Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.producers[pid]
	if !ok {
		return Entry{}, false
	}
	return e.Clone(), true
}

// ProducerView is what DescribeProducers reports per producer.
type ProducerView struct {
	ProducerID            int64
	ProducerEpoch         int16
	LastSequence          int32
	LastTimestamp         int64
	CoordinatorEpoch      int32
	CurrentTxnStartOffset int64 // -1 without an ongoing transaction
}

// Producers returns every active producer, by producer id.
func (m *Manager) Producers() []ProducerView {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ProducerView, 0, len(m.producers))
	for _, e := range m.producers {
		out = append(out, ProducerView{
			ProducerID:            e.ProducerID,
			ProducerEpoch:         e.ProducerEpoch,
			LastSequence:          e.LastSeq(),
			LastTimestamp:         e.LastTimestamp,
			CoordinatorEpoch:      e.CoordinatorEpoch,
			CurrentTxnStartOffset: e.CurrentTxnFirstOffset,
		})
	}
	slices.SortFunc(out, func(a, b ProducerView) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out
}

// ProducerIDCount is the number of active producers.
func (m *Manager) ProducerIDCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.producers)
}

// IsEmpty reports whether there are no producers and no unreplicated
// transactions (used by the Log to skip replay for logs that never saw an
// idempotent producer).
func (m *Manager) IsEmpty() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.producers) == 0 && len(m.unreplicated) == 0
}

// MapEndOffset is the offset up to which the state reflects the log.
func (m *Manager) MapEndOffset() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastMapOffset
}

// UpdateMapEndOffset sets the map end offset (Kafka's updateMapEndOffset):
// the Log calls it where batches are skipped, e.g. while rebuilding state.
func (m *Manager) UpdateMapEndOffset(offset int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastMapOffset = offset
}

// RemoveExpiredProducers forgets producers idle for at least the
// configured expiration and without an ongoing transaction
// (ProducerStateManager.removeExpiredProducers).
func (m *Manager) RemoveExpiredProducers(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	nowMs := now.UnixMilli()
	for pid, e := range m.producers {
		if m.isExpired(nowMs, e) {
			delete(m.producers, pid)
		}
	}
	m.removeExpiredVerificationsLocked(now)
}

// isExpired is Kafka's isProducerExpired. A producer with an open
// transaction is never expired: the transaction must still be closed.
func (m *Manager) isExpired(nowMs int64, e *Entry) bool {
	return !e.HasOngoingTxn() && nowMs-e.LastTimestamp >= m.cfg.ProducerIDExpiration.Milliseconds()
}
