package storage

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/strait-io/strait/storage/epoch"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// CloneSource is the local log a new partition starts as a copy of (a
// mirror drill clone, `strait mirror clone`): the first UpTo offsets of
// partition TP of topic ID.
type CloneSource struct {
	TP   TopicPartition
	ID   TopicID
	UpTo int64
}

// CreateCloneLog creates the partition's log as a copy of src's first
// src.UpTo offsets, or of what this broker holds of them (the replication
// protocol fetches the rest from the leader, as for any follower). Closed
// segments wholly below the point are hard links (Linker); the segment
// holding the point is copied up to it. The new log is then recovered from
// its start: indexes are rebuilt. The leader epoch checkpoint is copied
// and cut at the point; producer state is rebuilt from the copied batches. A log that
// already exists (the broker restarted after cloning) is returned as is.
//
// The source's lock is held while its files are linked and copied, so no
// roll, retention or truncation moves them meanwhile; the mirror fetcher
// appending to it waits for the copy of one segment at most.
//
// A shared (linked) file is never written in place by either log: closed
// segments are only read, deleted (unlinked) or replaced by the cleaner
// with new files, and whatever would write one in place (a truncation
// below the clone point on either side, recovery cutting a tail, a closed
// segment becoming the active one) first gives that log its own copy
// (copy-on-write, cow.go).
func (m *LogManager) CreateCloneLog(tp TopicPartition, id TopicID, cfg LogConfig, src CloneSource) (*Log, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok, err := m.existingLogLocked(tp, id); ok || err != nil {
		return l, err
	}
	dir := filepath.Join(m.dir, tp.String())
	o := m.logOptions(tp.Topic, id, Options{HadCleanShutdown: true})
	o.Config = cfg
	if sl, ok := m.logs[src.TP]; ok && sl.TopicID() == src.ID && src.UpTo > 0 {
		// Built under a name the next start deletes (OpenManager removes
		// "-delete" directories), then renamed: a crash half way leaves
		// no partial clone to be taken for the partition's log.
		tmp := dir + ".clone-delete"
		if err := m.opts.FS.RemoveAll(tmp); err != nil {
			return nil, err
		}
		lso, err := sl.copyPrefixTo(tmp, src.UpTo)
		if err == nil {
			err = m.opts.FS.Rename(tmp, dir)
		}
		if err == nil {
			err = m.opts.FS.SyncDir(m.dir)
		}
		if err != nil {
			_ = m.opts.FS.RemoveAll(tmp)
			return nil, fmt.Errorf("storage: cloning %s into %s: %w", src.TP, tp, err)
		}
		o.HadCleanShutdown, o.RecoveryPoint, o.LogStartOffset = false, 0, lso
	}
	l, rep, err := Open(dir, o)
	if err != nil {
		_ = m.opts.FS.RemoveAll(dir)
		return nil, err
	}
	m.logs[tp], m.reports[tp] = l, rep
	return l, nil
}

// copyPrefixTo writes into the new directory dir the segments of l below
// upTo (see CreateCloneLog) and returns l's log start offset.
func (l *Log) copyPrefixTo(dir string, upTo int64) (logStart int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return 0, err
	}
	if err := l.fsys.MkdirAll(dir); err != nil {
		return 0, err
	}
	logStart = l.logStartOffset.Load()
	upTo = min(upTo, l.logEndOffset())
	segs := l.segs()
	hdr := make([]byte, record.HeaderSize)
	for i, s := range segs {
		if s.baseOffset >= upTo {
			break
		}
		// Linked: a closed segment that the clone does not end in. The
		// clone's last segment becomes its active one, appended to, so
		// it is copied even when it ends exactly at the point.
		closed := i+1 < len(segs)
		if closed && segs[i+1].baseOffset < upTo {
			if err := l.shareClosedSegment(dir, s); err != nil {
				return 0, err
			}
			continue
		}
		// The segment holding the point: its bytes before the first
		// batch at or above it. A batch straddling the point (never at a
		// high watermark) is left out.
		end := s.Size()
		if pos, _, found, err := s.translateOffset(upTo, end, hdr); err != nil {
			return 0, err
		} else if found {
			end = pos
		}
		if err := copyFilePrefix(l.fsys, s.path(LogFileSuffix), segmentPath(dir, s.baseOffset, LogFileSuffix), end); err != nil {
			return 0, err
		}
		break
	}
	src := filepath.Join(l.dir, epoch.CheckpointFileName)
	if _, err := l.fsys.Stat(src); err == nil {
		if err := copyFilePrefix(l.fsys, src, filepath.Join(dir, epoch.CheckpointFileName), -1); err != nil {
			return 0, err
		}
	}
	return logStart, l.fsys.SyncDir(dir)
}

// shareClosedSegment links a closed segment's log file into dir. Its
// indexes are not shared: index entries reach their files only on flush,
// so the clone's recovery rebuilds its own.
func (l *Log) shareClosedSegment(dir string, s *LogSegment) error {
	from, to := s.path(LogFileSuffix), segmentPath(dir, s.baseOffset, LogFileSuffix)
	if lk, ok := l.fsys.(vfs.Linker); ok {
		if err := lk.Link(from, to); err != nil {
			return err
		}
	} else if err := copyFilePrefix(l.fsys, from, to, -1); err != nil {
		return err
	}
	return nil
}

// copyFilePrefix copies the first n bytes of from (all of it when n < 0)
// into a new file to, and syncs it.
func copyFilePrefix(fsys vfs.FS, from, to string, n int64) error {
	in, err := fsys.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	if n < 0 {
		if n, err = in.Size(); err != nil {
			return err
		}
	}
	out, err := fsys.Create(to)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for off := int64(0); off < n; {
		k := min(int64(len(buf)), n-off)
		r, err := in.ReadAt(buf[:k], off)
		if r > 0 {
			if _, werr := out.WriteAt(buf[:r], off); werr != nil {
				out.Close()
				return werr
			}
			off += int64(r)
		}
		if err != nil && !(errors.Is(err, io.EOF) && off == n) {
			out.Close()
			return err
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
