package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// MemFS is an in-memory filesystem that can simulate a crash.
//
// It tracks two views. The live view is what reads see. The durable view is
// what survives a crash: a file's bytes become durable when the file is
// synced, and a name (create, rename, remove, mkdir) becomes durable when its
// parent directory is synced. CrashClone returns a new MemFS holding only the
// durable view, optionally with a random prefix of each file's unsynced tail,
// which models writes that reached the disk in order up to some point (a torn
// tail). This follows pebble's vfs.NewCrashableMem / CrashClone.
type MemFS struct {
	mu      sync.Mutex
	live    map[string]*memNode // path → node; directories have dir=true
	durable map[string]*memNode
}

type memNode struct {
	dir bool

	mu     sync.RWMutex
	data   []byte
	synced []byte // content at the last Sync
	// dirtyFrom is the lowest offset changed since the last Sync; a crash
	// may keep any prefix of data beyond it.
	dirtyFrom int64
}

// NewMem returns an empty in-memory filesystem whose root directory exists.
func NewMem() *MemFS {
	root := &memNode{dir: true}
	return &MemFS{
		live:    map[string]*memNode{"/": root, ".": root},
		durable: map[string]*memNode{"/": root, ".": root},
	}
}

func clean(name string) string {
	c := filepath.Clean(name)
	if c == "" {
		return "."
	}
	return c
}

func (m *MemFS) parentExists(p string) error {
	dir := filepath.Dir(p)
	n, ok := m.live[dir]
	if !ok || !n.dir {
		return &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return nil
}

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	p := clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.parentExists(p); err != nil {
		return nil, err
	}
	if n, ok := m.live[p]; ok {
		if n.dir {
			return nil, &fs.PathError{Op: "create", Path: p, Err: fmt.Errorf("is a directory")}
		}
		n.mu.Lock()
		n.data = n.data[:0:0]
		n.dirtyFrom = 0
		n.mu.Unlock()
		return &memFile{node: n, name: name}, nil
	}
	n := &memNode{}
	m.live[p] = n
	return &memFile{node: n, name: name}, nil
}

func (m *MemFS) open(name string, write bool) (File, error) {
	p := clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.live[p]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	if n.dir {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("is a directory")}
	}
	return &memFile{node: n, name: name, readOnly: !write}, nil
}

// OpenReadWrite implements FS.
func (m *MemFS) OpenReadWrite(name string) (File, error) { return m.open(name, true) }

// Open implements FS.
func (m *MemFS) Open(name string) (File, error) { return m.open(name, false) }

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	p := clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.live[p]
	if !ok {
		return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrNotExist}
	}
	if n.dir {
		prefix := p + string(filepath.Separator)
		for k := range m.live {
			if strings.HasPrefix(k, prefix) {
				return &fs.PathError{Op: "remove", Path: p, Err: fmt.Errorf("directory not empty")}
			}
		}
	}
	delete(m.live, p)
	return nil
}

// RemoveAll implements FS.
func (m *MemFS) RemoveAll(name string) error {
	p := clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	prefix := p + string(filepath.Separator)
	for k := range m.live {
		if k == p || strings.HasPrefix(k, prefix) {
			delete(m.live, k)
		}
	}
	return nil
}

// newNameFor looks up oldname's node for a rename or link (op) to
// newname, whose directory must exist; it returns both paths cleaned.
// m.mu is held.
func (m *MemFS) newNameFor(op, oldname, newname string) (n *memNode, oldp, newp string, err error) {
	oldp, newp = clean(oldname), clean(newname)
	n, ok := m.live[oldp]
	if !ok {
		return nil, "", "", &fs.PathError{Op: op, Path: oldp, Err: fs.ErrNotExist}
	}
	if err := m.parentExists(newp); err != nil {
		return nil, "", "", err
	}
	return n, oldp, newp, nil
}

// Rename implements FS.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, op, np, err := m.newNameFor("rename", oldname, newname)
	if err != nil {
		return err
	}
	if n.dir {
		prefix := op + string(filepath.Separator)
		for k, c := range m.live {
			if strings.HasPrefix(k, prefix) {
				delete(m.live, k)
				m.live[np+k[len(op):]] = c
			}
		}
	}
	delete(m.live, op)
	m.live[np] = n
	return nil
}

// MkdirAll implements FS.
func (m *MemFS) MkdirAll(dir string) error {
	p := clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	for cur := p; ; cur = filepath.Dir(cur) {
		if n, ok := m.live[cur]; ok {
			if !n.dir {
				return &fs.PathError{Op: "mkdir", Path: cur, Err: fmt.Errorf("not a directory")}
			}
			break
		}
		m.live[cur] = &memNode{dir: true}
		if cur == filepath.Dir(cur) {
			break
		}
	}
	return nil
}

// List implements FS.
func (m *MemFS) List(dir string) ([]string, error) {
	p := clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.live[p]
	if !ok || !n.dir {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: fs.ErrNotExist}
	}
	var names []string
	for k := range m.live {
		if k != p && filepath.Dir(k) == p {
			names = append(names, filepath.Base(k))
		}
	}
	sort.Strings(names)
	return names, nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (FileInfo, error) {
	p := clean(name)
	m.mu.Lock()
	n, ok := m.live[p]
	links := 0
	for _, o := range m.live {
		if o == n {
			links++ // every name of the node: its hard links (Link)
		}
	}
	m.mu.Unlock()
	if !ok {
		return FileInfo{}, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
	if n.dir {
		return FileInfo{IsDir: true}, nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return FileInfo{Size: int64(len(n.data)), Links: links}, nil
}

// Link implements Linker: newname names the same node as oldname, so a
// write through either shows through both, as with a hard link. Like a
// create, the new name is durable once its directory is synced; a crash
// keeps the node shared by every durable name (CrashClone).
func (m *MemFS) Link(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, op, np, err := m.newNameFor("link", oldname, newname)
	if err != nil {
		return err
	}
	if n.dir {
		return &fs.PathError{Op: "link", Path: op, Err: fs.ErrPermission}
	}
	if _, ok := m.live[np]; ok {
		return &fs.PathError{Op: "link", Path: np, Err: fs.ErrExist}
	}
	m.live[np] = n
	return nil
}

// SyncDir implements FS: the live entries directly under dir become durable,
// and durable entries no longer live there are forgotten.
func (m *MemFS) SyncDir(dir string) error {
	p := clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.live[p]; !ok || !n.dir {
		return &fs.PathError{Op: "sync", Path: p, Err: fs.ErrNotExist}
	}
	for k := range m.durable {
		if k != p && filepath.Dir(k) == p {
			if _, ok := m.live[k]; !ok {
				delete(m.durable, k)
			}
		}
	}
	for k, n := range m.live {
		if k != p && filepath.Dir(k) == p {
			m.durable[k] = n
		}
	}
	return nil
}

// CrashOptions control what CrashClone keeps beyond synced data.
type CrashOptions struct {
	// Rand, when set, makes a crash keep a random prefix of each file's
	// unsynced tail. When nil only synced bytes survive.
	Rand *rand.Rand
}

// CrashClone returns the filesystem as it could look after a power loss:
// the durable names, each file holding its synced bytes (plus, with
// opts.Rand, a random prefix of what was written after them). Directories
// whose chain of parents is not durable are lost with everything below them.
func (m *MemFS) CrashClone(opts CrashOptions) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := NewMem()
	paths := make([]string, 0, len(m.durable))
	for k := range m.durable {
		paths = append(paths, k)
	}
	sort.Strings(paths) // parents before children
	clones := map[*memNode]*memNode{}
	for _, k := range paths {
		if k == "/" || k == "." {
			continue
		}
		parent := filepath.Dir(k)
		if pn, ok := out.live[parent]; !ok || !pn.dir {
			continue // the parent's own name never became durable
		}
		n := m.durable[k]
		c, ok := clones[n]
		if !ok {
			c = n.crashCopy(opts.Rand)
			clones[n] = c
		}
		out.live[k] = c
		out.durable[k] = c
	}
	return out
}

func (n *memNode) crashCopy(rng *rand.Rand) *memNode {
	if n.dir {
		return &memNode{dir: true}
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	keep := n.synced
	if rng != nil && int64(len(n.data)) > n.dirtyFrom {
		k := n.dirtyFrom + rng.Int64N(int64(len(n.data))-n.dirtyFrom+1)
		keep = n.data[:k]
	}
	data := append([]byte(nil), keep...)
	return &memNode{data: data, synced: append([]byte(nil), data...), dirtyFrom: int64(len(data))}
}

type memFile struct {
	node     *memNode
	name     string
	readOnly bool
	mu       sync.Mutex
	closed   bool
}

var errClosed = fmt.Errorf("vfs: file already closed")

func (f *memFile) check() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errClosed
	}
	return nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.check(); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fmt.Errorf("vfs: negative offset")
	}
	f.node.mu.RLock()
	defer f.node.mu.RUnlock()
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.check(); err != nil {
		return 0, err
	}
	if f.readOnly {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrPermission}
	}
	if off < 0 {
		return 0, fmt.Errorf("vfs: negative offset")
	}
	n := f.node
	n.mu.Lock()
	defer n.mu.Unlock()
	end := off + int64(len(p))
	if end > int64(len(n.data)) {
		if end > int64(cap(n.data)) {
			grown := make([]byte, len(n.data), max(end, 2*int64(cap(n.data))))
			copy(grown, n.data)
			n.data = grown
		}
		n.data = n.data[:end]
	}
	copy(n.data[off:], p)
	n.dirtyFrom = min(n.dirtyFrom, off)
	return len(p), nil
}

func (f *memFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errClosed
	}
	f.closed = true
	return nil
}

func (f *memFile) Sync() error {
	if err := f.check(); err != nil {
		return err
	}
	n := f.node
	n.mu.Lock()
	defer n.mu.Unlock()
	n.synced = append(n.synced[:0:0], n.data...)
	n.dirtyFrom = int64(len(n.data))
	return nil
}

func (f *memFile) Truncate(size int64) error {
	if err := f.check(); err != nil {
		return err
	}
	if f.readOnly {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: fs.ErrPermission}
	}
	n := f.node
	n.mu.Lock()
	defer n.mu.Unlock()
	if size < int64(len(n.data)) {
		n.data = n.data[:size]
	} else {
		n.data = append(n.data, make([]byte, size-int64(len(n.data)))...)
	}
	n.dirtyFrom = min(n.dirtyFrom, size)
	return nil
}

func (f *memFile) Size() (int64, error) {
	if err := f.check(); err != nil {
		return 0, err
	}
	f.node.mu.RLock()
	defer f.node.mu.RUnlock()
	return int64(len(f.node.data)), nil
}

func (f *memFile) Name() string { return f.name }
