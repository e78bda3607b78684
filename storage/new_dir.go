package storage

import (
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/strait-io/strait/storage/vfs"
)

// Why a new partition directory is made durable in the background.
//
// Creating an empty log used to cost four fsyncs on the caller's
// goroutine: the log directory after the mkdir, partition.metadata, and
// the partition directory twice (after the metadata's rename and after the
// first segment's files). A broker applies a new topic's partitions one
// after another on its metadata goroutine, so a 64-partition topic took
// 0.4-0.7 s to apply on a loaded machine, and the broker applied no other
// metadata meanwhile. Kafka pays none of them there: LogManager creates
// the directory without a sync, UnifiedLog schedules the partition.metadata
// write on its scheduler, and LocalLog.flush syncs a directory once a flush
// covers a segment created since the last one.
//
// We do the same for a directory this process created. Open leaves its
// syncs to a task on the log's scheduler, which writes partition.metadata
// (through a synced temporary file, so it is absent or whole, never torn)
// and syncs the partition directory and the log directory's entry for it.
// A flush that comes first does that work itself before it reports any
// data durable. Until then a power loss may take the empty log away, and
// the broker creates it again from the metadata; a process crash loses
// nothing (the kernel keeps the entries).

// newDirState is the work a new partition directory still owes.
type newDirState struct {
	// mu is held while the work runs and while the log is marked closed,
	// so the work never touches a path the log has given up (DeleteLog
	// renames it, and a new log may take the name).
	mu sync.Mutex
	// unsynced: the directory's entries are not known durable yet.
	unsynced atomic.Bool
	// topicIDPending: partition.metadata is still to be written. load
	// sets it before it schedules the task; from then on mu guards it.
	topicIDPending bool
}

// makeDir creates the partition directory if it is missing. When only the
// directory itself is missing its syncs are left to settleNewDir; missing
// parents are created durably at once.
func (l *Log) makeDir() error {
	if _, err := l.fsys.Stat(l.dir); err == nil {
		return nil
	}
	if _, err := l.fsys.Stat(filepath.Dir(l.dir)); err != nil {
		return vfs.MkdirAllDurable(l.fsys, l.dir)
	}
	if err := l.fsys.MkdirAll(l.dir); err != nil {
		return err
	}
	l.newDir.unsynced.Store(true)
	return nil
}

// settleNewDir is the background task Open schedules for a new directory.
func (l *Log) settleNewDir() {
	if err := l.syncNewDirs(); err != nil {
		l.fail("making a new partition directory durable", err)
	}
}

// syncNewDirs writes a pending partition.metadata and makes a directory
// this process created durable, with its entry in the log directory. The
// flush paths call it before they move the recovery point. It does
// nothing once the log is closed.
func (l *Log) syncNewDirs() error {
	if !l.newDir.unsynced.Load() {
		return nil
	}
	l.newDir.mu.Lock()
	defer l.newDir.mu.Unlock()
	if !l.newDir.unsynced.Load() || l.closed.Load() {
		return nil
	}
	if l.newDir.topicIDPending {
		if err := writePartitionMetadata(l.fsys, l.dir, l.topicID, false); err != nil {
			return err
		}
		l.newDir.topicIDPending = false
	}
	if err := l.fsys.SyncDir(l.dir); err != nil {
		return err
	}
	if err := l.fsys.SyncDir(filepath.Dir(l.dir)); err != nil {
		return err
	}
	l.newDir.unsynced.Store(false)
	return nil
}

// markClosed marks the log closed once no new-directory work is running.
func (l *Log) markClosed() {
	l.newDir.mu.Lock()
	l.closed.Store(true)
	l.newDir.mu.Unlock()
}
