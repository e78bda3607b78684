package vfs

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
)

// Op names a filesystem operation, for error injection and logging.
type Op int

const (
	OpCreate Op = iota
	OpOpen
	OpRead
	OpWrite
	OpSync
	OpTruncate
	OpClose
	OpRemove
	OpRename
	OpMkdir
	OpList
	OpStat
	OpSyncDir
)

var opNames = [...]string{"create", "open", "read", "write", "sync", "truncate", "close", "remove", "rename", "mkdir", "list", "stat", "sync-dir"}

func (o Op) String() string { return opNames[o] }

// ErrInjected is the error ErrorFS returns for an injected failure.
var ErrInjected = errors.New("vfs: injected error")

// Injector decides whether an operation fails. It returns nil to let the
// operation through.
type Injector func(op Op, path string) error

// OnOp fails every operation of kind op after the first skip ones succeed.
func OnOp(op Op, skip int64) Injector {
	var seen atomic.Int64
	return func(o Op, _ string) error {
		if o != op {
			return nil
		}
		if seen.Add(1) > skip {
			return ErrInjected
		}
		return nil
	}
}

// Pause is an Injector that holds one operation of kind op on a path
// ending in suffix (the first, or the nth) until Release, failing nothing.
// Tests use it to stop a concurrent call at a known point and look at the
// state it has published so far. Paused is closed once that operation is
// waiting.
type Pause struct {
	Paused   <-chan struct{}
	paused   chan struct{}
	release  chan struct{}
	seen     atomic.Int64
	nth      int64
	released sync.Once
	op       Op
	suffix   string
}

// PauseOn returns a Pause for the first op on a path ending in suffix.
func PauseOn(op Op, suffix string) *Pause { return PauseOnNth(op, suffix, 1) }

// PauseOnNth returns a Pause for the nth such operation (from 1).
func PauseOnNth(op Op, suffix string, nth int64) *Pause {
	p := &Pause{paused: make(chan struct{}), release: make(chan struct{}), op: op, suffix: suffix, nth: nth}
	p.Paused = p.paused
	return p
}

// Injector holds the chosen operation and lets every other one through.
func (p *Pause) Injector() Injector {
	return func(o Op, path string) error {
		// Only the nth caller waits; the others pass at once, even
		// while it waits.
		if o == p.op && strings.HasSuffix(path, p.suffix) && p.seen.Add(1) == p.nth {
			close(p.paused)
			<-p.release
		}
		return nil
	}
}

// Release lets the held operation go on; calling it again does nothing.
func (p *Pause) Release() { p.released.Do(func() { close(p.release) }) }

// ErrorFS wraps an FS and fails operations the Injector chooses, after the
// style of pebble's errorfs.
type ErrorFS struct {
	FS
	inject atomic.Pointer[Injector]
}

// WithErrors wraps fsys. With a nil injector nothing fails until SetInjector.
func WithErrors(fsys FS, inj Injector) *ErrorFS {
	e := &ErrorFS{FS: fsys}
	e.SetInjector(inj)
	return e
}

// SetInjector replaces the injector; nil disables injection.
func (e *ErrorFS) SetInjector(inj Injector) {
	if inj == nil {
		e.inject.Store(nil)
		return
	}
	e.inject.Store(&inj)
}

func (e *ErrorFS) maybe(op Op, path string) error {
	if p := e.inject.Load(); p != nil {
		return (*p)(op, path)
	}
	return nil
}

func (e *ErrorFS) wrap(f File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &errFile{File: f, fs: e}, nil
}

func (e *ErrorFS) Create(name string) (File, error) {
	if err := e.maybe(OpCreate, name); err != nil {
		return nil, err
	}
	return e.wrap(e.FS.Create(name))
}

func (e *ErrorFS) OpenReadWrite(name string) (File, error) {
	if err := e.maybe(OpOpen, name); err != nil {
		return nil, err
	}
	return e.wrap(e.FS.OpenReadWrite(name))
}

func (e *ErrorFS) Open(name string) (File, error) {
	if err := e.maybe(OpOpen, name); err != nil {
		return nil, err
	}
	return e.wrap(e.FS.Open(name))
}

func (e *ErrorFS) Remove(name string) error {
	if err := e.maybe(OpRemove, name); err != nil {
		return err
	}
	return e.FS.Remove(name)
}

func (e *ErrorFS) RemoveAll(name string) error {
	if err := e.maybe(OpRemove, name); err != nil {
		return err
	}
	return e.FS.RemoveAll(name)
}

func (e *ErrorFS) Rename(oldname, newname string) error {
	if err := e.maybe(OpRename, oldname); err != nil {
		return err
	}
	return e.FS.Rename(oldname, newname)
}

func (e *ErrorFS) MkdirAll(dir string) error {
	if err := e.maybe(OpMkdir, dir); err != nil {
		return err
	}
	return e.FS.MkdirAll(dir)
}

func (e *ErrorFS) List(dir string) ([]string, error) {
	if err := e.maybe(OpList, dir); err != nil {
		return nil, err
	}
	return e.FS.List(dir)
}

func (e *ErrorFS) Stat(name string) (FileInfo, error) {
	if err := e.maybe(OpStat, name); err != nil {
		return FileInfo{}, err
	}
	return e.FS.Stat(name)
}

func (e *ErrorFS) SyncDir(dir string) error {
	if err := e.maybe(OpSyncDir, dir); err != nil {
		return err
	}
	return e.FS.SyncDir(dir)
}

type errFile struct {
	File
	fs *ErrorFS
}

func (f *errFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.maybe(OpRead, f.Name()); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *errFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.maybe(OpWrite, f.Name()); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *errFile) Sync() error {
	if err := f.fs.maybe(OpSync, f.Name()); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *errFile) Truncate(size int64) error {
	if err := f.fs.maybe(OpTruncate, f.Name()); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f *errFile) Close() error {
	if err := f.fs.maybe(OpClose, f.Name()); err != nil {
		f.File.Close()
		return err
	}
	return f.File.Close()
}
