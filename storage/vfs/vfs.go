// Package vfs is the filesystem seam of the storage engine.
//
// Every byte the log engine reads or writes goes through FS, so tests can run
// the engine on an in-memory filesystem that simulates a crash (MemFS keeps
// only what was synced; see CrashClone) or injects IO errors (ErrorFS). The
// shape follows pebble's vfs package: a small interface, an OS implementation
// and a crashable in-memory one.
package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File is an open file. Writes go through WriteAt: the engine tracks its own
// append position, so no implementation needs a shared file cursor.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Sync makes the file's written bytes durable.
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Size is the file's current size in bytes.
	Size() (int64, error)
	// Name is the path the file was opened with.
	Name() string
}

// FD is implemented by files backed by a kernel file descriptor, so the wire
// layer can sendfile(2) a segment slice without copying it through Go memory.
type FD interface {
	Fd() uintptr
}

// FS is a filesystem. Paths are OS paths (filepath.Join applies).
//
// Namespace changes (Create, Rename, Remove) are durable only after SyncDir
// on the parent directory, as on a POSIX filesystem; the in-memory FS enforces
// that rule when it simulates a crash.
type FS interface {
	// Create creates or truncates a file for reading and writing.
	Create(name string) (File, error)
	// OpenReadWrite opens an existing file for reading and writing.
	OpenReadWrite(name string) (File, error)
	// Open opens an existing file for reading.
	Open(name string) (File, error)
	Remove(name string) error
	RemoveAll(name string) error
	Rename(oldname, newname string) error
	MkdirAll(dir string) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// Stat reports whether name exists, its size and whether it is a directory.
	Stat(name string) (FileInfo, error)
	// SyncDir makes the entries of dir durable.
	SyncDir(dir string) error
}

// FileInfo is what Stat reports.
type FileInfo struct {
	Size  int64
	IsDir bool
	// Links is the number of names the file has (its hard link count,
	// st_nlink): more than one means another name shares its bytes, and a
	// write through either changes both (see Linker).
	Links int
}

// ErrNotExist is returned (wrapped) when a path does not exist; it is
// fs.ErrNotExist so errors.Is works for both implementations.
var ErrNotExist = fs.ErrNotExist

// IsNotExist reports whether err says a path does not exist.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// WriteFileAtomic writes data to name through a temporary file, fsyncs it,
// renames it over name and fsyncs the directory: after a crash the file holds
// either the old or the new content, never a mix. Kafka's checkpoint files
// (leader-epoch-checkpoint, recovery-point-offset-checkpoint) are written this
// way.
func WriteFileAtomic(fsys FS, dir, name string, data []byte) error {
	if err := WriteFileRenamed(fsys, dir, name, data); err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}

// WriteFileRenamed is WriteFileAtomic without the directory sync: the
// content is durable before the name points at it, so a crash leaves the
// old file or the whole new one, but the new name itself is durable only
// once the caller syncs dir.
func WriteFileRenamed(fsys FS, dir, name string, data []byte) error {
	tmp := join(dir, name+".tmp")
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return fsys.Rename(tmp, join(dir, name))
}

// ReadFile reads a whole file.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !(errors.Is(err, io.EOF) && int64(n) == size) {
		return nil, err
	}
	return buf[:n], nil
}

// Default is the operating system's filesystem.
var _ FS = OS{}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + string(os.PathSeparator) + name
}

// MkdirAllDurable creates dir and any missing parents and syncs every
// directory whose entries changed, so the new directories survive a crash.
func MkdirAllDurable(fsys FS, dir string) error {
	var created []string
	for cur := filepath.Clean(dir); ; cur = filepath.Dir(cur) {
		if _, err := fsys.Stat(cur); err == nil {
			break
		}
		created = append(created, cur)
		if cur == filepath.Dir(cur) {
			break
		}
	}
	if len(created) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return err
	}
	for _, c := range created {
		if err := fsys.SyncDir(filepath.Dir(c)); err != nil {
			return err
		}
	}
	return nil
}

// Linker is implemented by filesystems that can hard-link a file: a new
// name for the same bytes, which survive until the last name is removed.
// A drill clone of a topic shares its closed segments this way; an FS
// without it gets copies. A write or truncation through one name changes
// the bytes under every name: the storage engine copies a file whose Stat
// reports Links > 1 before writing it in place (copy-on-write).
type Linker interface {
	Link(oldname, newname string) error
}
