package vfs

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// LoggingFS records every namespace change, sync and truncate, so datadriven
// tests can assert the order of durable operations line by line (pebble's
// vfs.WithLogging). Reads and writes are not logged: they are too many.
// Paths are printed relative to Root.
type LoggingFS struct {
	FS
	Root string
	mu   sync.Mutex
	buf  strings.Builder
}

// WithLogging wraps fsys.
func WithLogging(fsys FS, root string) *LoggingFS { return &LoggingFS{FS: fsys, Root: root} }

// Take returns what was logged since the last call and clears it.
func (l *LoggingFS) Take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	l.buf.Reset()
	return s
}

func (l *LoggingFS) rel(p string) string {
	if r, err := filepath.Rel(l.Root, p); err == nil {
		return r
	}
	return p
}

func (l *LoggingFS) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.buf, format+"\n", args...)
}

func (l *LoggingFS) Create(name string) (File, error) {
	l.logf("create: %s", l.rel(name))
	f, err := l.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &logFile{File: f, l: l}, nil
}

func (l *LoggingFS) OpenReadWrite(name string) (File, error) {
	f, err := l.FS.OpenReadWrite(name)
	if err != nil {
		return nil, err
	}
	return &logFile{File: f, l: l}, nil
}

func (l *LoggingFS) Remove(name string) error {
	l.logf("remove: %s", l.rel(name))
	return l.FS.Remove(name)
}

func (l *LoggingFS) RemoveAll(name string) error {
	l.logf("remove-all: %s", l.rel(name))
	return l.FS.RemoveAll(name)
}

func (l *LoggingFS) Rename(oldname, newname string) error {
	l.logf("rename: %s -> %s", l.rel(oldname), l.rel(newname))
	return l.FS.Rename(oldname, newname)
}

func (l *LoggingFS) MkdirAll(dir string) error {
	l.logf("mkdir: %s", l.rel(dir))
	return l.FS.MkdirAll(dir)
}

func (l *LoggingFS) SyncDir(dir string) error {
	l.logf("sync-dir: %s", l.rel(dir))
	return l.FS.SyncDir(dir)
}

type logFile struct {
	File
	l *LoggingFS
}

func (f *logFile) Sync() error {
	f.l.logf("sync: %s", f.l.rel(f.Name()))
	return f.File.Sync()
}

func (f *logFile) Truncate(size int64) error {
	f.l.logf("truncate: %s %d", f.l.rel(f.Name()), size)
	return f.File.Truncate(size)
}
