package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// ManagerOptions are a LogManager's dependencies.
type ManagerOptions struct {
	FS        vfs.FS
	Clock     clock.Clock
	Logger    *slog.Logger
	Scheduler Scheduler
	// DefaultConfig is the broker-level log config; ConfigFor, when set,
	// returns a topic's effective config for logs found on disk.
	DefaultConfig LogConfig
	ConfigFor     func(topic string) LogConfig
	// Cleaner configures log compaction (log.cleaner.*).
	Cleaner CleanerConfig
	// OnFailure is every log's Options.OnFailure: it hears once per log
	// that an IO error took the log offline.
	OnFailure func(*StorageError)
	// RecoveryThreadsPerDataDir is num.recovery.threads.per.data.dir: how
	// many logs of each directory open at start-up and flush and close at
	// shutdown at once; 0 is DefaultRecoveryThreadsPerDataDir.
	RecoveryThreadsPerDataDir int
}

// LogManager owns the log directories (log.dirs, Kafka's JBOD): the
// partition logs in them and the directory-level files Kafka keeps in each
// — the clean shutdown marker and the recovery point, log start offset and
// high watermark checkpoints (Kafka's LogManager). log_dirs.go has what
// concerns several directories.
type LogManager struct {
	dirs   []string
	opts   ManagerOptions
	decomp *record.Decompressor
	comp   *record.Compressor
	logger *slog.Logger

	// createMu is held while logs are being created (GetOrCreateLogs) or
	// deleted, without mu, which is held only to look up and insert.
	createMu sync.Mutex
	mu       sync.Mutex
	logs     map[TopicPartition]*Log
	reports  map[TopicPartition]*RecoveryReport
	futures  map[TopicPartition]*Log // future_log.go
	closed   bool

	// checkpointMu serialises writes of the checkpoint files. Close holds
	// it from before the logs are closed until the file system is synced,
	// so no recovery point reaches a checkpoint file before the data.
	checkpointMu sync.Mutex
	// checkpointWrites: what each checkpoint file last got
	// (manager_checkpoint.go). Guarded by checkpointMu.
	checkpointWrites checkpointWrites
	// syncDeferral turns the syncs of opts.FS off while Close writes the
	// logs' last files (closeLogs).
	syncDeferral *vfs.SyncDeferral
	// ctx ends with Close, stopping a cleaning in progress.
	ctx    context.Context
	cancel context.CancelFunc
	// The log cleaner: its threads (StartCleaner), what they are
	// cleaning and have given up on, and their IO throttle.
	cleanerThreads cleanerThreads
	cleaner        cleanerManager
	throttler      *ioThrottler
}

// OpenManager opens every partition log under dir, recovering them unless
// the previous process left the clean shutdown marker. The marker is removed
// before OpenManager returns, so a crash from now on is detected.
func OpenManager(dir string, o ManagerOptions) (*LogManager, error) {
	return OpenManagerDirs([]string{dir}, o)
}

// OpenManagerDirs opens every partition log under each of dirs (log.dirs),
// as OpenManager does for one; loadLogDir says what it finds in each.
func OpenManagerDirs(dirs []string, o ManagerOptions) (*LogManager, error) {
	if o.FS == nil || o.Clock == nil {
		return nil, errors.New("storage: ManagerOptions.FS and Clock are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Scheduler == nil {
		o.Scheduler = GoScheduler{}
	}
	dirs, err := checkLogDirs(dirs)
	if err != nil {
		return nil, err
	}
	var deferral *vfs.SyncDeferral
	o.FS, deferral = vfs.WithDeferredSyncs(o.FS)
	m := &LogManager{
		syncDeferral:     deferral,
		dirs:             dirs,
		opts:             o,
		decomp:           record.NewDecompressor(),
		comp:             record.NewCompressor(),
		logger:           o.Logger,
		logs:             map[TopicPartition]*Log{},
		reports:          map[TopicPartition]*RecoveryReport{},
		futures:          map[TopicPartition]*Log{},
		checkpointWrites: checkpointWrites{},
		cleaner: cleanerManager{
			inProgress:  map[TopicPartition]bool{},
			uncleanable: map[TopicPartition]bool{},
		},
		throttler: newIOThrottler(o.Clock, o.Cleaner),
	}
	m.cleanerThreads.cfg, m.cleanerThreads.wake = o.Cleaner, make(chan struct{})
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for _, dir := range dirs {
		if err := m.loadLogDir(dir); err != nil {
			m.closeLogs()
			return nil, err
		}
	}
	if err := m.promoteOrphanFutures(); err != nil {
		m.closeLogs()
		return nil, err
	}
	return m, nil
}

func (m *LogManager) logOptions(topic string, id TopicID, o Options) Options {
	cfg := m.opts.DefaultConfig
	if m.opts.ConfigFor != nil {
		cfg = m.opts.ConfigFor(topic)
	}
	o.FS, o.Clock, o.Logger, o.Scheduler = m.opts.FS, m.opts.Clock, m.opts.Logger, m.opts.Scheduler
	o.Config, o.Decompressor, o.Compressor, o.TopicID = cfg, m.decomp, m.comp, id
	o.OnFailure = m.opts.OnFailure
	o.SyncsDeferred = m.syncDeferral.Deferred
	return o
}

// Dir is the first log directory (the one of a single-directory node).
func (m *LogManager) Dir() string { return m.dirs[0] }

// Log returns the log of a partition.
func (m *LogManager) Log(tp TopicPartition) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[tp]
	return l, ok
}

// Logs returns every open log.
func (m *LogManager) Logs() map[TopicPartition]*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[TopicPartition]*Log, len(m.logs))
	for tp, l := range m.logs {
		out[tp] = l
	}
	return out
}

// RecoveryReport returns what opening the partition's log found.
func (m *LogManager) RecoveryReport(tp TopicPartition) (*RecoveryReport, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.reports[tp]
	return r, ok
}

// GetOrCreateLog returns the partition's log, creating it empty with the
// given topic id and config if it does not exist.
func (m *LogManager) GetOrCreateLog(tp TopicPartition, id TopicID, cfg LogConfig) (*Log, error) {
	logs, errs := m.GetOrCreateLogs([]NewLog{{TP: tp, ID: id, Config: cfg}})
	return logs[0], errs[0]
}

// existingLogLocked returns the open log of tp (ok), or an error when the
// manager is closed or the log belongs to another topic id. m.mu is held.
func (m *LogManager) existingLogLocked(tp TopicPartition, id TopicID) (l *Log, ok bool, err error) {
	if m.closed {
		return nil, false, ErrLogClosed
	}
	if l, ok = m.logs[tp]; ok && !id.IsZero() && !l.TopicID().IsZero() && l.TopicID() != id {
		return nil, false, fmt.Errorf("storage: %s belongs to topic id %s, not %s", tp, l.TopicID(), id)
	}
	return l, ok, nil
}

// DeleteLog closes a partition's log and removes its directory: it is first
// renamed to "<topic>-<partition>.<id>-delete" (durably), so a crash midway
// finishes the deletion at the next start, as Kafka does.
func (m *LogManager) DeleteLog(tp TopicPartition) error {
	m.createMu.Lock()
	defer m.createMu.Unlock()
	// The future first: a future log without its current one is taken
	// for a finished move at the next start (promoteOrphanFutures).
	if err := m.DeleteFutureLog(tp); err != nil {
		return err
	}
	m.mu.Lock()
	l, ok := m.logs[tp]
	delete(m.logs, tp)
	delete(m.reports, tp)
	m.mu.Unlock()
	m.cleaner.mu.Lock()
	delete(m.cleaner.uncleanable, tp)
	m.cleaner.mu.Unlock()
	if !ok {
		return nil
	}
	closeErr := l.Close()
	// A cleaning of the log under way gives up now that it is closed;
	// wait for it, as Kafka's deletion waits in abortCleaning, so it
	// writes no file into the directory being renamed.
	l.cleanMu.Lock()
	l.cleanMu.Unlock()
	return m.removeClosedLogDir(tp, l, closeErr)
}

// RunMaintenance runs one pass of the periodic work over every log:
// retention, flush.ms, delayed segment deletion and producer id expiry.
// The checkpoints are written on their own schedules
// (manager_checkpoint.go), as Kafka's tasks are. The broker calls it from its scheduler
// (log.retention.check.interval.ms). Compaction is not part of it: the
// cleaner threads run on their own schedule (StartCleaner).
func (m *LogManager) RunMaintenance() error {
	var errs []error
	logs := m.Logs()
	tps := make([]TopicPartition, 0, len(logs))
	for tp := range logs {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool { return tps[i].String() < tps[j].String() })
	for _, tp := range tps {
		l := logs[tp]
		if _, err := l.DeleteOldSegments(); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, l.FlushIfDue(), l.RemoveDeletedSegments(), l.RemoveExpiredProducers())
	}
	return errors.Join(errs...)
}

// Close closes every log, writes the checkpoints and, only if all of that
// succeeded, the clean shutdown marker that lets the next start skip
// recovery.
func (m *LogManager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.stopCleaner()
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	durable, closeErr := m.closeLogs()
	if !durable {
		// The recovery points the closes moved are not known durable:
		// the checkpoints keep the ones of before, and the next start
		// recovers from them.
		return closeErr
	}
	if err := errors.Join(closeErr, m.checkpointLocked()); err != nil {
		return err
	}
	return m.markCleanShutdown()
}

// closeLogs flushes and closes every log, recoveryThreads of each log
// directory at once, as Kafka's LogManager.shutdown does, and reports
// whether what the closes wrote is durable.
//
// Where the file system can be synced whole (syncfs(2)), the logs are
// closed with their syncs deferred (vfs.WithDeferredSyncs: the .log data,
// the index write-backs, the producer snapshots and epoch checkpoints are
// written but not fsynced, file by file) and each log directory's file
// system is then synced once: a shutdown of 10,000 logs that took writes
// made five to seven fsyncs a log, two at a time, 10-25 s on this
// machine's disk. Kafka's LogManager.shutdown flushes and closes each log
// (log.flush(true); log.close()), fsyncing each file. What a clean
// shutdown guarantees is unchanged: the recovery points are checkpointed
// and the clean shutdown marker written only after the sync succeeded
// (checkpointMu is held meanwhile, so no periodic checkpoint writes one
// earlier), so the next start trusts only what is durable; if the sync
// fails, the checkpoints and the marker are not written and the next start
// recovers from the recovery points of before.
func (m *LogManager) closeLogs() (durable bool, err error) {
	syncs := m.openFSSyncs()
	if syncs != nil {
		m.syncDeferral.Defer(true)
	}
	logs := m.allLogs()
	start := m.opts.Clock.Now()
	closeErr := errors.Join(inParallel(m.opts.recoveryThreads()*len(m.dirs), len(logs), func(i int) error { return logs[i].Close() })...)
	closed := m.opts.Clock.Now()
	if syncs == nil {
		m.logger.Info("logs closed", "logs", len(logs), "took", closed.Sub(start), "fileSystemSync", false)
		return true, closeErr
	}
	m.syncDeferral.Defer(false)
	var syncErrs []error
	for _, s := range syncs {
		syncErrs = append(syncErrs, s.Sync(), s.Close())
	}
	// The sync writes back whatever is dirty on the file system, the
	// other processes' data too: on a shared disk it can take the longer.
	m.logger.Info("logs closed", "logs", len(logs), "took", closed.Sub(start), "fileSystemSync", true,
		"syncTook", m.opts.Clock.Now().Sub(closed))
	if err := errors.Join(syncErrs...); err != nil {
		return false, errors.Join(closeErr, fmt.Errorf("storage: syncing the log directories' file systems at shutdown: %w", err))
	}
	return true, closeErr
}

// openFSSyncs opens an FSSync of each log directory's file system, or
// returns nil when one cannot be synced whole: then every file is synced
// as it is written.
func (m *LogManager) openFSSyncs() []vfs.FSSync {
	var syncs []vfs.FSSync
	for _, d := range m.dirs {
		s, err := vfs.OpenFSSync(m.opts.FS, d)
		if err != nil {
			for _, o := range syncs {
				o.Close()
			}
			return nil
		}
		syncs = append(syncs, s)
	}
	return syncs
}

// Abandon stops the manager the way a killed process stops, for crash
// tests that run brokers in one process: background work stops and every
// log refuses further writes (ErrLogClosed) once the write under way
// finished, but nothing is flushed, checkpointed or marked clean, and the
// files are left open. What was written stays in the page cache, as after
// a SIGKILL; a new manager on the directory recovers it. Without this, a
// request handler of the abandoned broker could still append to a file
// the restarted broker is recovering.
func (m *LogManager) Abandon() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.stopCleaner()
	for _, l := range m.allLogs() {
		l.abandon()
	}
}
