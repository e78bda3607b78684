package storage

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"github.com/strait-io/strait/storage/vfs"
)

// crashFS wraps a MemFS and numbers every operation that changes what a
// crash would leave behind: create, write, sync, truncate, rename, remove,
// mkdir and sync-dir. Just before operation number crashAt runs it takes
// CrashClones of the MemFS — the disk as a power loss at that instant would
// leave it — so a test can crash a workload between any two durable steps
// (pebble's crash-at-every-step idea, driven by a counter instead of a
// random choice). Reads, opens, lists and stats are not counted: they leave
// nothing behind.
//
// The hook runs in the goroutine doing the operation; the storage tests use
// InlineScheduler, so every operation runs on the test's goroutine and the
// numbering is deterministic.
type crashFS struct {
	mem *vfs.MemFS

	// crashAt is the operation to crash before; -1 never crashes.
	crashAt int
	// seeds are the CrashOptions.Rand seeds of the torn-tail clones taken
	// besides the clean one (only synced bytes).
	seeds []uint64
	// onCrash is called when the clones are taken, so the test can record
	// what the log's checkpoints would hold at that instant.
	onCrash func()

	n   int      // operations so far
	ops []string // "op path" of each, for determinism checks and messages

	crashed bool
	clean   *vfs.MemFS   // synced bytes only
	torn    []*vfs.MemFS // one per seed: a random prefix of each unsynced tail
}

func newCrashFS(mem *vfs.MemFS, crashAt int, seeds []uint64) *crashFS {
	return &crashFS{mem: mem, crashAt: crashAt, seeds: seeds}
}

// before is called before each counted operation.
func (c *crashFS) before(op vfs.Op, path string) {
	if c.n == c.crashAt {
		c.takeClones()
	}
	c.ops = append(c.ops, op.String()+" "+filepath.Base(path))
	c.n++
}

// takeClones records the crash images now (also used for the crash after
// the last operation).
func (c *crashFS) takeClones() {
	if c.crashed {
		return
	}
	c.crashed = true
	c.clean = c.mem.CrashClone(vfs.CrashOptions{})
	for _, s := range c.seeds {
		c.torn = append(c.torn, c.mem.CrashClone(vfs.CrashOptions{Rand: rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))}))
	}
	if c.onCrash != nil {
		c.onCrash()
	}
}

func (c *crashFS) opName(i int) string {
	if i < len(c.ops) {
		return fmt.Sprintf("#%d %s", i, c.ops[i])
	}
	return fmt.Sprintf("#%d (after the last operation)", i)
}

func (c *crashFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &crashFile{File: f, fs: c}, nil
}

func (c *crashFS) Create(name string) (vfs.File, error) {
	c.before(vfs.OpCreate, name)
	return c.wrap(c.mem.Create(name))
}

func (c *crashFS) OpenReadWrite(name string) (vfs.File, error) {
	return c.wrap(c.mem.OpenReadWrite(name))
}

func (c *crashFS) Open(name string) (vfs.File, error) { return c.wrap(c.mem.Open(name)) }

func (c *crashFS) Remove(name string) error {
	c.before(vfs.OpRemove, name)
	return c.mem.Remove(name)
}

func (c *crashFS) RemoveAll(name string) error {
	c.before(vfs.OpRemove, name)
	return c.mem.RemoveAll(name)
}

func (c *crashFS) Rename(oldname, newname string) error {
	c.before(vfs.OpRename, oldname)
	return c.mem.Rename(oldname, newname)
}

func (c *crashFS) MkdirAll(dir string) error {
	c.before(vfs.OpMkdir, dir)
	return c.mem.MkdirAll(dir)
}

func (c *crashFS) List(dir string) ([]string, error)      { return c.mem.List(dir) }
func (c *crashFS) Stat(name string) (vfs.FileInfo, error) { return c.mem.Stat(name) }

func (c *crashFS) SyncDir(dir string) error {
	c.before(vfs.OpSyncDir, dir)
	return c.mem.SyncDir(dir)
}

type crashFile struct {
	vfs.File
	fs *crashFS
}

func (f *crashFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.before(vfs.OpWrite, f.Name())
	return f.File.WriteAt(p, off)
}

func (f *crashFile) Sync() error {
	f.fs.before(vfs.OpSync, f.Name())
	return f.File.Sync()
}

func (f *crashFile) Truncate(size int64) error {
	f.fs.before(vfs.OpTruncate, f.Name())
	return f.File.Truncate(size)
}
