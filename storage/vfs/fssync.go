package vfs

import "errors"

// FSSync makes everything written to one file system durable at once:
// every file's data, every name, in every directory (Linux syncfs(2)). It
// is opened before the writes it is to cover, so that an error the kernel
// meets writing them back reaches Sync.
type FSSync interface {
	Sync() error
	Close() error
}

// FSSyncer is implemented by file systems that can be synced whole.
type FSSyncer interface {
	// OpenFSSync opens an FSSync of the file system holding dir.
	OpenFSSync(dir string) (FSSync, error)
}

// ErrNoFSSync is OpenFSSync's answer for a file system that cannot be
// synced whole: the caller syncs file by file instead.
var ErrNoFSSync = errors.New("vfs: the file system cannot be synced whole")

// OpenFSSync opens an FSSync of the file system of fsys holding dir, or
// returns ErrNoFSSync.
func OpenFSSync(fsys FS, dir string) (FSSync, error) {
	s, ok := fsys.(FSSyncer)
	if !ok {
		return nil, ErrNoFSSync
	}
	return s.OpenFSSync(dir)
}

// OpenFSSync implements FSSyncer: a sync makes the whole live view durable,
// as syncfs(2) does the file system's.
func (m *MemFS) OpenFSSync(dir string) (FSSync, error) {
	if _, err := m.Stat(dir); err != nil {
		return nil, err
	}
	return memFSSync{m}, nil
}

type memFSSync struct{ m *MemFS }

func (s memFSSync) Sync() error {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.durable)
	for k, n := range m.live {
		m.durable[k] = n
		if !n.dir {
			n.mu.Lock()
			n.synced = append(n.synced[:0:0], n.data...)
			n.dirtyFrom = int64(len(n.data))
			n.mu.Unlock()
		}
	}
	return nil
}

func (memFSSync) Close() error { return nil }

// OpenFSSync implements FSSyncer; the sync is an OpSyncDir of dir for the
// injector.
func (e *ErrorFS) OpenFSSync(dir string) (FSSync, error) {
	s, err := OpenFSSync(e.FS, dir)
	if err != nil {
		return nil, err
	}
	return &errFSSync{FSSync: s, e: e, dir: dir}, nil
}

type errFSSync struct {
	FSSync
	e   *ErrorFS
	dir string
}

func (s *errFSSync) Sync() error {
	if err := s.e.maybe(OpSyncDir, s.dir); err != nil {
		return err
	}
	return s.FSSync.Sync()
}

// OpenFSSync implements FSSyncer, logging each sync.
func (l *LoggingFS) OpenFSSync(dir string) (FSSync, error) {
	s, err := OpenFSSync(l.FS, dir)
	if err != nil {
		return nil, err
	}
	return &logFSSync{FSSync: s, l: l, dir: dir}, nil
}

type logFSSync struct {
	FSSync
	l   *LoggingFS
	dir string
}

func (s *logFSSync) Sync() error {
	s.l.logf("sync-fs: %s", s.l.rel(s.dir))
	return s.FSSync.Sync()
}
