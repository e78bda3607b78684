package storage

import (
	"errors"

	"github.com/strait-io/strait/storage/vfs"
)

// Copy-on-write of shared segment files. A drill clone (`strait mirror
// clone`, CreateCloneLog) shares the mirror topic's closed segments as hard
// links: two logs, one inode. Reading and deleting (unlinking) a shared
// file is safe; writing it in place is not, since the other log would see
// the write. So before any in-place write to a segment's .log file (a
// truncation — the source's failback or unclean election truncating below
// the clone point, or the clone's own — recovery cutting a torn tail, or
// appends to a segment that became the active one) the segment is given a
// private copy of the bytes it keeps, renamed over its name, and the other
// log keeps the old inode untouched. The cleaner never writes a segment in
// place (it writes new .cleaned files and swaps them in by rename), nor do
// roll, retention or deletion.

// segmentFile boxes the segment's vfs.File for an atomic swap.
type segmentFile struct{ vfs.File }

// f is the segment's current .log file.
func (s *LogSegment) f() vfs.File { return s.file.Load().File }

// privatize makes the segment's .log file its own before an in-place write
// when another name shares it (link count > 1): the first keep bytes are
// copied to "<base>.log.tmp" (a name recovery deletes, so a crash before
// the rename leaves the shared file in place), synced, renamed over the
// segment's file and the directory synced; the segment then uses the copy.
// The replaced handle stays open until the segment closes, for reads that
// loaded it. Call it with the Log's lock held.
func (s *LogSegment) privatize(keep int64) error {
	path := s.path(LogFileSuffix)
	st, err := s.fsys.Stat(path)
	if err != nil {
		return err
	}
	if st.Links <= 1 {
		return nil
	}
	tmp := path + TmpFileSuffix
	if err := copyFilePrefix(s.fsys, path, tmp, min(keep, st.Size)); err != nil {
		_ = s.fsys.Remove(tmp)
		return err
	}
	if err := s.fsys.Rename(tmp, path); err != nil {
		_ = s.fsys.Remove(tmp)
		return err
	}
	if err := s.fsys.SyncDir(s.dir); err != nil {
		return err
	}
	f, err := s.fsys.OpenReadWrite(path)
	if err != nil {
		return err
	}
	s.retired = append(s.retired, s.file.Swap(&segmentFile{f}).File)
	s.preallocEnd = 0 // the copy has reserved nothing
	return nil
}

// closeRetired closes the files privatize replaced.
func (s *LogSegment) closeRetired() error {
	var errs []error
	for _, f := range s.retired {
		errs = append(errs, f.Close())
	}
	s.retired = nil
	return errors.Join(errs...)
}
