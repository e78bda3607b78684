package storage

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/strait-io/strait/storage/vfs"
)

// Several log directories (log.dirs, Kafka's JBOD). Each directory is
// loaded on its own, with its own checkpoints and clean shutdown marker,
// as Kafka's LogManager.loadLogs does per directory; a partition lives in
// exactly one of them, and a new one goes to the directory holding the
// fewest partitions (LogManager.nextLogDirs).

// checkLogDirs refuses an empty or repeated log.dirs, as Kafka's
// LogManager.createAndValidateLogDirs refuses a duplicate. It returns the
// directories cleaned, so a log's parent directory compares equal.
func checkLogDirs(dirs []string) ([]string, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("storage: no log directory given")
	}
	out := make([]string, len(dirs))
	seen := map[string]bool{}
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if seen[abs] {
			return nil, fmt.Errorf("storage: duplicate log directory found: %s", strings.Join(dirs, ", "))
		}
		seen[abs] = true
		out[i] = filepath.Clean(d)
	}
	return out, nil
}

// Dirs lists the log directories in log.dirs order.
func (m *LogManager) Dirs() []string { return append([]string(nil), m.dirs...) }

// loadLogDir opens every partition log under dir, recovering them unless
// the previous process left the clean shutdown marker in dir. The marker
// is removed before it returns, so a crash from now on is detected. A
// partition already found in another directory stops the start, as in
// Kafka (LogManager.loadLog: "Duplicate log directories for ... are
// found"): which copy is right is for the operator to say.
func (m *LogManager) loadLogDir(dir string) error {
	fsys := m.opts.FS
	if err := vfs.MkdirAllDurable(fsys, dir); err != nil {
		return err
	}
	_, err := fsys.Stat(filepath.Join(dir, CleanShutdownFile))
	clean := err == nil
	recovery, err := ReadOffsetCheckpoint(fsys, dir, RecoveryPointCheckpointFile)
	if err != nil {
		return err
	}
	starts, err := ReadOffsetCheckpoint(fsys, dir, LogStartOffsetCheckpointFile)
	if err != nil {
		return err
	}
	hws, err := ReadOffsetCheckpoint(fsys, dir, ReplicationCheckpointFile)
	if err != nil {
		return err
	}
	cleaned, err := ReadOffsetCheckpoint(fsys, dir, CleanerOffsetCheckpointFile)
	if err != nil {
		return err
	}
	names, err := fsys.List(dir)
	if err != nil {
		return err
	}
	// Which directories hold which logs is read first; the logs then open
	// recoveryThreads at a time (Kafka's loadLogs).
	type found struct {
		path   string
		tp     TopicPartition
		future bool
	}
	var todo []found
	for _, name := range names {
		path := filepath.Join(dir, name)
		if strings.HasSuffix(name, "-delete") {
			// A topic deletion the previous process did not finish.
			if err := fsys.RemoveAll(path); err != nil {
				return err
			}
			continue
		}
		st, err := fsys.Stat(path)
		if err != nil || !st.IsDir {
			continue
		}
		if tp, ok := parseFutureDirName(name); ok {
			if other, dup := m.futures[tp]; dup {
				return fmt.Errorf("storage: duplicate future log directories for %s are found in both %s and %s", tp, other.Dir(), path)
			}
			todo = append(todo, found{path, tp, true})
			continue
		}
		topic, part, ok := ParsePartitionDirName(name)
		if !ok {
			continue
		}
		tp := TopicPartition{topic, part}
		if other, dup := m.logs[tp]; dup {
			return fmt.Errorf("storage: duplicate log directories for %s are found in both %s and %s; "+
				"a log directory failed while a replica moved between them? Delete one of the two (the one "+
				"in the directory known to have failed) and start again", tp, other.Dir(), path)
		}
		todo = append(todo, found{path, tp, false})
	}
	logs := make([]*Log, len(todo))
	reports := make([]*RecoveryReport, len(todo))
	errs := inParallel(m.opts.recoveryThreads(), len(todo), func(i int) error {
		tp := todo[i].tp
		var err error
		logs[i], reports[i], err = Open(todo[i].path, m.logOptions(tp.Topic, TopicID{}, Options{
			RecoveryPoint:     recovery[tp],
			LogStartOffset:    starts[tp],
			HighWatermark:     hws[tp],
			HadCleanShutdown:  clean,
			CleanerCheckpoint: cleaned[tp],
		}))
		return err
	})
	// Every log that opened is kept, so that closing the manager after
	// an error closes it too; the first error in directory order fails
	// the load.
	for i, f := range todo {
		switch {
		case errs[i] != nil:
		case f.future:
			m.futures[f.tp] = logs[i]
		default:
			m.logs[f.tp], m.reports[f.tp] = logs[i], reports[i]
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if clean {
		if err := fsys.Remove(filepath.Join(dir, CleanShutdownFile)); err != nil {
			return err
		}
		if err := fsys.SyncDir(dir); err != nil {
			return err
		}
	}
	m.logger.Info("log directory loaded", "logDir", dir, "logs", len(todo), "cleanShutdown", clean,
		"loadThreads", m.opts.recoveryThreads())
	return nil
}

// nextLogDirLocked is the directory for a new log: the one holding the
// fewest partitions, the first in log.dirs on a tie (Kafka's
// LogManager.nextLogDirs counts the logs by parent directory). m.mu is
// held.
func (m *LogManager) nextLogDirLocked() string {
	return m.fewestLogs(m.logCountsLocked())
}

// LogDir returns the log directory holding the partition's log.
func (m *LogManager) LogDir(tp TopicPartition) (string, bool) {
	l, ok := m.Log(tp)
	if !ok {
		return "", false
	}
	return filepath.Dir(l.Dir()), true
}

// dirLog is an open log, or a future log, and its partition.
type dirLog struct {
	tp  TopicPartition
	log *Log
}

// logsByDir groups the open logs, future logs included, by log
// directory; every directory is present, an empty one with no logs, so
// its checkpoints are written (empty) too. A partition is at most once in
// a directory: its future log is in another than its current log.
func (m *LogManager) logsByDir() map[string][]dirLog {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string][]dirLog, len(m.dirs))
	for i, d := range m.dirs {
		n := 0
		if i == 0 {
			n = len(m.logs) // one log.dirs entry is the common case
		}
		out[d] = make([]dirLog, 0, n)
	}
	for _, logs := range []map[TopicPartition]*Log{m.logs, m.futures} {
		for tp, l := range logs {
			d := filepath.Dir(l.Dir())
			out[d] = append(out[d], dirLog{tp, l})
		}
	}
	return out
}

// allLogs lists the open logs and future logs.
func (m *LogManager) allLogs() []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Log, 0, len(m.logs)+len(m.futures))
	for _, l := range m.logs {
		out = append(out, l)
	}
	for _, l := range m.futures {
		out = append(out, l)
	}
	return out
}

// markCleanShutdown writes the clean shutdown marker in every log
// directory, which lets the next start skip recovery there.
func (m *LogManager) markCleanShutdown() error {
	marker := []byte(`{"version":0,"brokerEpoch":-1}`)
	for _, d := range m.dirs {
		if err := vfs.WriteFileAtomic(m.opts.FS, d, CleanShutdownFile, marker); err != nil {
			return err
		}
	}
	return nil
}
