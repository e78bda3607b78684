package index

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/strait-io/strait/storage/vfs"
)

type loadState uint8

const (
	unloaded loadState = iota // Open recorded the path; nothing read yet
	loaded                    // entries are in buf
	closed                    // Close or Delete ran
)

// entryFile is the format-agnostic part shared by the three indexes: a file
// of fixed-size entries, loaded lazily (Kafka's LazyIndex) and mirrored in
// memory. It knows nothing of what an entry means.
//
// Appends go to memory only and reach the file at the next Flush or Close,
// the way Kafka's memory-mapped indexes reach the disk when the segment is
// flushed: a write syscall per 16 KiB batch cost a sixth of the append path.
// Nothing is lost by deferring: the log trusts an index only below its
// recovery point, and a segment reaches the recovery point only by being
// flushed, which writes and syncs its indexes; every segment above it is
// rebuilt by recovery.
//
// Locking: wmu serializes every change and is held across file IO; mu guards
// what readers see (state, path, buf) and is write-locked only for the short
// in-memory update at the end of a change. So readers never wait on disk IO,
// and a holder of wmu may read buf without mu because only wmu holders change
// it.
type entryFile struct {
	fsys      vfs.FS
	entrySize int
	// createOnLoad creates a missing file on first use, as Kafka's
	// AbstractIndex does for .index and .timeindex. The transaction index
	// sets it false: its file appears only with its first entry.
	createOnLoad bool

	wmu sync.Mutex
	// exists says the file is on disk: false until loaded, and while a
	// lazily created file does not exist yet. No handle is kept open
	// between changes: the entries live in buf, and the file is opened
	// only to write them back, truncate or sync it, so a broker's
	// thousands of loaded indexes hold no file descriptors (Kafka's
	// AbstractIndex likewise closes its file once it has mapped it).
	// Guarded by wmu.
	exists bool
	// dirDirty is set when we created the file: its name is durable only
	// once the parent directory is synced, which Flush then does once.
	// Guarded by wmu.
	dirDirty bool
	// written is how many bytes of buf are in the file; the rest waits
	// for Flush or Close. dirty is set when the file changed since the
	// last sync. Guarded by wmu.
	written int
	dirty   bool

	mu    sync.RWMutex
	state loadState
	path  string
	buf   []byte // len(buf) is a multiple of entrySize
}

func newEntryFile(fsys vfs.FS, path string, entrySize int, createOnLoad bool) *entryFile {
	return &entryFile{fsys: fsys, path: path, entrySize: entrySize, createOnLoad: createOnLoad}
}

// Path is the file's current path.
func (x *entryFile) Path() string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.path
}

// read runs fn on the loaded entries under the read lock. fn must not keep
// buf: a later change may reuse its memory.
func (x *entryFile) read(fn func(buf []byte) error) error {
	x.mu.RLock()
	if x.state != loaded {
		x.mu.RUnlock()
		x.wmu.Lock()
		err := x.loadLocked()
		x.wmu.Unlock()
		if err != nil {
			return err
		}
		x.mu.RLock()
		if x.state != loaded { // closed between the load and the read lock
			x.mu.RUnlock()
			return fmt.Errorf("%w: %s", ErrClosed, x.Path())
		}
	}
	defer x.mu.RUnlock()
	return fn(x.buf)
}

// write runs fn with wmu held and the entries loaded. fn changes the file
// first and then calls publish, so readers never see an entry that failed
// to reach the file.
func (x *entryFile) write(fn func(buf []byte) error) error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if err := x.loadLocked(); err != nil {
		return err
	}
	return fn(x.buf)
}

// loadLocked reads the file on first use. A trailing partial entry (a write
// torn by a crash) is dropped and the file truncated to match, so the file
// stays exactly entries*entrySize bytes. Requires wmu.
func (x *entryFile) loadLocked() error {
	switch x.state {
	case loaded:
		return nil
	case closed:
		return fmt.Errorf("%w: %s", ErrClosed, x.path)
	}
	path := x.path // only wmu holders change path
	f, err := x.fsys.OpenReadWrite(path)
	created := false
	if vfs.IsNotExist(err) {
		if !x.createOnLoad {
			x.publish(func() { x.state = loaded })
			return nil
		}
		f, err = x.fsys.Create(path)
		created = true
	}
	if err != nil {
		return fmt.Errorf("index: open %s: %w", path, err)
	}
	buf, err := x.readAll(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("index: close %s: %w", path, cerr)
	}
	if err != nil {
		return err
	}
	x.exists = true
	x.dirDirty = created
	x.written = len(buf)
	x.publish(func() {
		x.buf = buf
		x.state = loaded
	})
	return nil
}

func (x *entryFile) readAll(f vfs.File) ([]byte, error) {
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("index: size of %s: %w", f.Name(), err)
	}
	whole := size - size%int64(x.entrySize)
	buf := make([]byte, whole)
	if n, err := f.ReadAt(buf, 0); err != nil && !(errors.Is(err, io.EOF) && int64(n) == whole) {
		return nil, fmt.Errorf("index: read %s: %w", f.Name(), err)
	}
	if whole != size {
		if err := f.Truncate(whole); err != nil {
			return nil, fmt.Errorf("index: drop torn entry of %s: %w", f.Name(), err)
		}
	}
	return buf, nil
}

// publish applies a change readers can see. Requires wmu.
func (x *entryFile) publish(change func()) {
	x.mu.Lock()
	change()
	x.mu.Unlock()
}

// appendLocked adds one entry in memory, creating the file if it does not
// exist yet (a transaction index appears with its first entry); the entry
// reaches the file at the next Flush or Close. Requires wmu and loaded.
func (x *entryFile) appendLocked(entry []byte) error {
	if !x.exists {
		f, err := x.fsys.Create(x.path)
		if err != nil {
			return fmt.Errorf("index: create %s: %w", x.path, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("index: close %s: %w", x.path, err)
		}
		x.exists = true
		x.dirDirty = true
	}
	x.publish(func() { x.buf = append(x.buf, entry...) })
	return nil
}

// openLocked opens the file for a change; the caller closes it. Requires
// wmu and exists.
func (x *entryFile) openLocked() (vfs.File, error) {
	f, err := x.fsys.OpenReadWrite(x.path)
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", x.path, err)
	}
	return f, nil
}

// closeFile closes f after a change, keeping the change's error first.
func closeFile(f vfs.File, err error) error {
	if cerr := f.Close(); err == nil && cerr != nil {
		return fmt.Errorf("index: close %s: %w", f.Name(), cerr)
	}
	return err
}

// pendingLocked says whether entries wait to be written back. Requires
// wmu.
func (x *entryFile) pendingLocked() bool { return x.exists && x.written < len(x.buf) }

// writeBackNowLocked opens the file and writes the pending entries, if
// any. Requires wmu.
func (x *entryFile) writeBackNowLocked() error {
	if !x.pendingLocked() {
		return nil
	}
	f, err := x.openLocked()
	if err != nil {
		return err
	}
	return closeFile(f, x.writeBackLocked(f))
}

// writeBackLocked writes the entries not yet in the file to f, the file
// opened by openLocked. Requires wmu.
func (x *entryFile) writeBackLocked(f vfs.File) error {
	if !x.pendingLocked() {
		return nil
	}
	if _, err := f.WriteAt(x.buf[x.written:], int64(x.written)); err != nil {
		// Best effort: cut a partial write so the file does not carry a
		// stray entry the next load would trust.
		_ = f.Truncate(int64(x.written))
		return fmt.Errorf("index: write %s: %w", x.path, err)
	}
	x.written = len(x.buf)
	x.dirty = true
	return nil
}

// truncateLocked keeps the first n entries. The file shrinks before memory
// so a failed truncate never leaves entries on disk that memory has
// forgotten (a later append would land after them). Requires wmu and loaded.
func (x *entryFile) truncateLocked(n int) error {
	size := n * x.entrySize
	if size >= len(x.buf) {
		return nil
	}
	if x.exists && x.written > size {
		f, err := x.openLocked()
		if err != nil {
			return err
		}
		if err := closeFile(f, f.Truncate(int64(size))); err != nil {
			return fmt.Errorf("index: truncate %s: %w", x.path, err)
		}
		x.written = size
		x.dirty = true
	}
	x.publish(func() { x.buf = x.buf[:size] })
	return nil
}

// Load reads the file now rather than on first use and returns the error
// if that fails. Reads that have no error result answer as for an empty
// index until a load succeeds; see the package comment.
func (x *entryFile) Load() error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	return x.loadLocked()
}

// Entries is the number of entries; 0 if the index cannot be loaded.
func (x *entryFile) Entries() int {
	var n int
	_ = x.read(func(buf []byte) error {
		n = len(buf) / x.entrySize
		return nil
	})
	return n
}

// Reset removes every entry (the file is truncated to 0, not removed).
func (x *entryFile) Reset() error {
	return x.write(func([]byte) error { return x.truncateLocked(0) })
}

// Flush writes pending entries and fsyncs the file, and the first time
// after we created it also its directory, so a flushed entry survives a
// crash even in a new segment. An index never loaded, or unchanged since
// the last Flush, has nothing to sync.
func (x *entryFile) Flush() error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	switch x.state {
	case unloaded:
		return nil
	case closed:
		return fmt.Errorf("%w: %s", ErrClosed, x.path)
	}
	if !x.exists {
		return nil
	}
	if x.pendingLocked() || x.dirty {
		f, err := x.openLocked()
		if err != nil {
			return err
		}
		err = x.writeBackLocked(f)
		if err == nil && x.dirty {
			if err = f.Sync(); err != nil {
				err = fmt.Errorf("index: sync %s: %w", x.path, err)
			} else {
				x.dirty = false
			}
		}
		if err := closeFile(f, err); err != nil {
			return err
		}
	}
	if x.dirDirty {
		if err := x.fsys.SyncDir(filepath.Dir(x.path)); err != nil {
			return fmt.Errorf("index: sync dir of %s: %w", x.path, err)
		}
		x.dirDirty = false
	}
	return nil
}

// Close releases the file handle; the index is unusable afterwards. Closing
// twice is not an error.
func (x *entryFile) Close() error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	return x.closeLocked()
}

func (x *entryFile) closeLocked() error {
	err := x.writeBackNowLocked()
	if vfs.IsNotExist(err) {
		// The file went with its segment (a segment deleted after its
		// rename to .deleted, a log directory removed): nothing is left
		// to write the entries back to, and nothing will read them.
		// Before 3ab9782 the index kept its file open and wrote into
		// the unlinked inode, with the same outcome.
		err = nil
	}
	x.exists = false
	x.publish(func() {
		x.state = closed
		x.buf = nil
	})
	return err
}

// Discard closes the index and drops the entries not yet written back,
// for a segment whose log is being dropped (a failed log, or one a future
// log replaced, whose directory may already hold the replacing log's files
// under this path) or whose unflushed tail recovery rebuilds.
func (x *entryFile) Discard() {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.exists = false
	x.publish(func() {
		x.state = closed
		x.buf = nil
	})
}

// Rename moves the file, as Kafka does when a segment becomes .deleted,
// .cleaned or .swap. A file that does not exist yet (never loaded and never
// created, or a transaction index without entries) is not an error: the
// index simply uses the new path from now on (Kafka's LazyIndex.renameTo).
// The rename is made durable by the caller's SyncDir, as in Kafka.
func (x *entryFile) Rename(newPath string) error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if err := x.fsys.Rename(x.path, newPath); err != nil && !vfs.IsNotExist(err) {
		return fmt.Errorf("index: rename %s: %w", x.path, err)
	}
	x.publish(func() { x.path = newPath })
	return nil
}

// Delete closes the index and removes its file; a missing file is fine
// (Kafka's deleteIfExists).
func (x *entryFile) Delete() error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	// The entries not yet written back are not written: the file goes.
	x.written = len(x.buf)
	cerr := x.closeLocked()
	if err := x.fsys.Remove(x.path); err != nil && !vfs.IsNotExist(err) {
		return errors.Join(cerr, fmt.Errorf("index: remove %s: %w", x.path, err))
	}
	return cerr
}
