package storage

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
)

// Future logs: a replica moving to another log directory (Kafka's future
// replica, AlterReplicaLogDirs). The partition keeps its current log while
// a future log in the destination, "<topic>-<partition>.<uuid>-future"
// (UnifiedLog.logFutureDirName), is filled from it; the caller then swaps
// them (ReplaceCurrentWithFuture). A future log is not part of Logs(): no
// retention or cleaning runs on it, its checkpoints are written with its
// directory's. A restart finds it again (loadLogDir) so the move resumes.

// ErrLogDirNotFound: the directory is not one of log.dirs.
var ErrLogDirNotFound = errors.New("storage: not a log directory")

// ErrNoCurrentLog: a future log needs the partition's current log.
var ErrNoCurrentLog = errors.New("storage: the partition has no log here")

const futureDirSuffix = "-future"

// futureDirName is Kafka's UnifiedLog.logFutureDirName.
func futureDirName(tp TopicPartition) string {
	return tp.String() + "." + randomHex16() + futureDirSuffix
}

func randomHex16() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// parseFutureDirName reads "<topic>-<partition>.<32 hex>-future".
func parseFutureDirName(name string) (TopicPartition, bool) {
	base, ok := strings.CutSuffix(name, futureDirSuffix)
	i := strings.LastIndexByte(base, '.')
	if !ok || i < 0 || len(base)-i-1 != 32 {
		return TopicPartition{}, false
	}
	if _, err := hex.DecodeString(base[i+1:]); err != nil {
		return TopicPartition{}, false
	}
	topic, part, ok := ParsePartitionDirName(base[:i])
	return TopicPartition{topic, part}, ok
}

// logDirOf returns the entry of log.dirs that is dir (by absolute path).
func (m *LogManager) logDirOf(dir string) (string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for _, d := range m.dirs {
		if da, err := filepath.Abs(d); err == nil && da == abs {
			return d, true
		}
	}
	return "", false
}

// FutureLog returns the partition's future log.
func (m *LogManager) FutureLog(tp TopicPartition) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.futures[tp]
	return l, ok
}

// FutureLogs returns every future log.
func (m *LogManager) FutureLogs() map[TopicPartition]*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.futures)
}

// CreateFutureLog creates an empty future log of the partition in dir (an
// entry of log.dirs, by any path naming it), with the current log's topic
// id and config, and returns it; a future log already in dir is returned
// as is. A future log in another directory must be deleted first.
func (m *LogManager) CreateFutureLog(tp TopicPartition, dir string) (*Log, error) {
	logDir, ok := m.logDirOf(dir)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrLogDirNotFound, dir)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrLogClosed
	}
	cur, ok := m.logs[tp]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoCurrentLog, tp)
	}
	if f, ok := m.futures[tp]; ok {
		if filepath.Dir(f.Dir()) == logDir {
			return f, nil
		}
		return nil, fmt.Errorf("storage: %s already has a future log in %s", tp, filepath.Dir(f.Dir()))
	}
	if filepath.Dir(cur.Dir()) == logDir {
		return nil, fmt.Errorf("storage: %s is already in %s", tp, logDir)
	}
	o := m.logOptions(tp.Topic, cur.TopicID(), Options{HadCleanShutdown: true})
	o.Config = cur.Config()
	l, _, err := Open(filepath.Join(logDir, futureDirName(tp)), o)
	if err != nil {
		return nil, err
	}
	m.futures[tp] = l
	m.logger.Info("created a future log to move a replica between log directories", "partition", tp.String(),
		"from", filepath.Dir(cur.Dir()), "to", logDir)
	return l, nil
}

// DeleteFutureLog closes and deletes the partition's future log, if any
// (renamed "-delete" first, as DeleteLog does): the move is cancelled.
func (m *LogManager) DeleteFutureLog(tp TopicPartition) error {
	m.mu.Lock()
	l, ok := m.futures[tp]
	delete(m.futures, tp)
	m.mu.Unlock()
	if !ok {
		return nil
	}
	return m.removeClosedLogDir(tp, l, l.Close())
}

// removeClosedLogDir renames a closed log's directory "-delete" (durably),
// so a crash midway finishes the deletion at the next start, then removes
// it.
func (m *LogManager) removeClosedLogDir(tp TopicPartition, l *Log, closeErr error) error {
	doomed, err := m.renameForDeletion(tp, l)
	if err != nil {
		return errors.Join(closeErr, err)
	}
	return errors.Join(closeErr, m.opts.FS.RemoveAll(doomed))
}

// renameForDeletion renames the log's directory to
// "<topic>-<partition>.<id>-delete" in the same log directory and syncs
// that directory.
func (m *LogManager) renameForDeletion(tp TopicPartition, l *Log) (string, error) {
	parent := filepath.Dir(l.Dir())
	doomed := filepath.Join(parent, tp.String()+"."+randomHex16()+"-delete")
	if err := m.opts.FS.Rename(l.Dir(), doomed); err != nil {
		return "", err
	}
	return doomed, m.opts.FS.SyncDir(parent)
}

// ReplaceCurrentWithFuture makes the partition's future log its current
// log (Kafka's LogManager.replaceCurrentWithFutureLog). The caller has
// stopped every write to the current log (it holds the partition's lock)
// and filled the future log up to the current log's end. The future log
// takes the current's log start offset, high watermark, config and leader
// epochs past its own; it is closed, the current log's directory renamed
// "-delete" and the future's renamed to the partition's name, in that
// order, so a crash in between leaves the future alone, which the next
// start takes as the current log (promoteOrphanFutures); then it is opened
// again, clean, under that name and returned. The old log refuses every
// call from now on (ErrLogClosed) but keeps its files open for the reads
// that already hold them (Kafka keeps a deleted log's files for
// file.delete.delay.ms): release closes and deletes them. A failure after
// the old log is retired is a failure of the log directory (OnFailure).
func (m *LogManager) ReplaceCurrentWithFuture(tp TopicPartition) (l *Log, release func() error, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.logs[tp]
	fut, hasFuture := m.futures[tp]
	if !ok || !hasFuture {
		return nil, nil, fmt.Errorf("storage: %s has no current and future log to swap", tp)
	}
	if cur.LogEndOffset() != fut.LogEndOffset() {
		return nil, nil, fmt.Errorf("storage: the future log of %s ends at %d, the current at %d", tp, fut.LogEndOffset(), cur.LogEndOffset())
	}
	if err := takeOverOffsets(cur, fut); err != nil {
		return nil, nil, err
	}
	cfg := cur.Config()
	if err := fut.Close(); err != nil {
		delete(m.futures, tp)
		return nil, nil, err
	}
	delete(m.futures, tp)
	cur.abandon()
	// A cleaning of the old log under way gives up now that it is closed;
	// wait for it (as DeleteLog does), so it writes nothing into the
	// directory being renamed.
	cur.cleanMu.Lock()
	cur.cleanMu.Unlock()
	fail := func(err error) (*Log, func() error, error) {
		delete(m.logs, tp)
		se := &StorageError{Dir: filepath.Dir(fut.Dir()), Op: "replace current log with future", Err: err}
		if m.opts.OnFailure != nil {
			m.opts.OnFailure(se)
		}
		return nil, nil, se
	}
	doomed, err := m.renameForDeletion(tp, cur)
	if err != nil {
		return fail(err)
	}
	dest := filepath.Join(filepath.Dir(fut.Dir()), tp.String())
	if err := m.opts.FS.Rename(fut.Dir(), dest); err != nil {
		return fail(err)
	}
	if err := m.opts.FS.SyncDir(filepath.Dir(dest)); err != nil {
		return fail(err)
	}
	l, rep, err := Open(dest, m.reopenOptions(tp, fut, cfg))
	if err != nil {
		return fail(err)
	}
	m.logs[tp], m.reports[tp] = l, rep
	m.logger.Info("replaced a log with its future log", "partition", tp.String(), "from", filepath.Dir(cur.Dir()), "to", filepath.Dir(dest))
	return l, func() error {
		return errors.Join(cur.closeFiles(false), m.opts.FS.RemoveAll(doomed))
	}, nil
}

// takeOverOffsets gives the future log the current log's log start
// offset, high watermark and the leader epochs that start at its end (an
// election without a batch since).
func takeOverOffsets(cur, fut *Log) error {
	if _, err := fut.MaybeIncrementLogStartOffset(cur.LogStartOffset()); err != nil {
		return err
	}
	fut.UpdateHighWatermark(cur.HighWatermark())
	latest, ok := fut.LatestEpoch()
	for _, e := range cur.EpochEntries() {
		if (!ok || e.Epoch > latest) && e.StartOffset == fut.LogEndOffset() {
			if err := fut.MaybeAssignEpochStartOffset(e.Epoch); err != nil {
				return err
			}
		}
	}
	return nil
}

// reopenOptions open a closed log again, clean, under a new name.
func (m *LogManager) reopenOptions(tp TopicPartition, closed *Log, cfg LogConfig) Options {
	o := m.logOptions(tp.Topic, closed.TopicID(), Options{
		RecoveryPoint:     closed.RecoveryPoint(),
		LogStartOffset:    closed.LogStartOffset(),
		HighWatermark:     closed.HighWatermark(),
		HadCleanShutdown:  true,
		CleanerCheckpoint: closed.CleanerCheckpoint(),
	})
	o.Config = cfg
	return o
}

// promoteOrphanFutures makes a future log whose partition has no current
// log the current one: ReplaceCurrentWithFuture renames the current log
// away before it renames the future, so a crash between the two leaves
// the future as the only, complete, copy.
func (m *LogManager) promoteOrphanFutures() error {
	for tp, fut := range m.futures {
		if _, ok := m.logs[tp]; ok {
			continue
		}
		cfg := fut.Config()
		if err := fut.Close(); err != nil {
			return err
		}
		delete(m.futures, tp)
		dest := filepath.Join(filepath.Dir(fut.Dir()), tp.String())
		if err := m.opts.FS.Rename(fut.Dir(), dest); err != nil {
			return err
		}
		if err := m.opts.FS.SyncDir(filepath.Dir(dest)); err != nil {
			return err
		}
		l, rep, err := Open(dest, m.reopenOptions(tp, fut, cfg))
		if err != nil {
			return err
		}
		m.logs[tp], m.reports[tp] = l, rep
		m.logger.Warn("a future log had no current log (a crash while it replaced it): it is the current log now",
			"partition", tp.String(), "dir", dest)
	}
	return nil
}
