package epoch

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/strait-io/strait/storage/vfs"
)

// Cache is the LeaderEpochCache of one partition: its leader epochs in
// increasing order, each with the offset of its first batch (Kafka's
// LeaderEpochFileCache). Both epochs and start offsets are strictly
// increasing; Assign and the truncations keep it so.
//
// Every change but AssignDeferred's is written to the checkpoint file
// synchronously, before it becomes visible; AssignDeferred's is written by
// the next Flush or the next other change. Kafka flushes truncations asynchronously and relies on log
// recovery to repeat them after a crash; flushing them synchronously is
// simpler and equally correct, and truncations are rare.
//
// If writing the checkpoint fails the change is dropped: the method returns
// the error and the cache keeps the state it had, which is the state of the
// last successful write. (Kafka changes memory first and then takes the log
// directory offline; we never let memory run ahead of the file, so a later
// successful write, which rewrites the whole file, cannot persist a change
// its caller was told had failed.)
//
// A Cache is safe for concurrent use. Readers never wait for a checkpoint
// write: mutations build a new entry slice, write it, and only then swap it
// in.
type Cache struct {
	fsys vfs.FS
	dir  string

	// writeMu serializes mutations, so checkpoint writes happen in the order
	// the states they hold were made.
	writeMu sync.Mutex

	// unwritten: AssignDeferred changed the entries since the checkpoint
	// was last written. writeMu guards it.
	unwritten bool

	mu sync.RWMutex
	// entries is never modified in place: a mutation publishes a new slice.
	entries []Entry
}

// Open loads the cache of the partition directory dir from its checkpoint
// file; a missing file is an empty cache. Open writes nothing.
//
// Loading replays the entries through Assign's rules, as Kafka's constructor
// does, which folds entries sharing a start offset into the later epoch
// (Kafka before 2.0 could write those). Unlike Kafka, a file whose epochs do
// not strictly increase, or whose start offsets decrease, is rejected rather
// than silently repaired: no Kafka version writes such a file, so it is
// corrupt, and dropping entries from it would hide the damage and change
// later truncation decisions.
func Open(fsys vfs.FS, dir string) (*Cache, error) {
	c := &Cache{fsys: fsys, dir: dir}
	entries, err := c.load()
	if err != nil {
		return nil, err
	}
	c.entries = entries
	return c, nil
}

// Path is the checkpoint file's path.
func (c *Cache) Path() string { return filepath.Join(c.dir, CheckpointFileName) }

// WithDir returns a cache with the same entries whose checkpoint lives in
// dir, for when the partition directory is renamed (Kafka's withCheckpoint).
// Nothing is written until the next change.
func (c *Cache) WithDir(dir string) *Cache {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return &Cache{fsys: c.fsys, dir: dir, entries: c.entries}
}

func (c *Cache) load() ([]Entry, error) {
	name := c.Path()
	data, err := vfs.ReadFile(c.fsys, name)
	if vfs.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("epoch: reading %s: %w", name, err)
	}
	read, lineNos, err := decodeCheckpoint(name, data)
	if err != nil {
		return nil, err
	}
	var entries []Entry
	for i, e := range read {
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("%w: %s line %d: %w", ErrMalformedCheckpoint, name, lineNos[i], err)
		}
		if i > 0 {
			prev := read[i-1]
			if e.Epoch <= prev.Epoch {
				return nil, fmt.Errorf("%w: %s line %d: epoch %d does not follow epoch %d",
					ErrMalformedCheckpoint, name, lineNos[i], e.Epoch, prev.Epoch)
			}
			if e.StartOffset < prev.StartOffset {
				return nil, fmt.Errorf("%w: %s line %d: start offset %d is below the previous start offset %d",
					ErrMalformedCheckpoint, name, lineNos[i], e.StartOffset, prev.StartOffset)
			}
		}
		entries, _ = withAssigned(entries, e)
	}
	return entries, nil
}

// mutate applies f to the current entries and, if f reports a change,
// writes the result to the checkpoint and then publishes it. f must not
// modify its argument.
func (c *Cache) mutate(f func(cur []Entry) (next []Entry, changed bool)) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	// Only holders of writeMu replace c.entries, so reading it needs no lock.
	next, changed := f(c.entries)
	if !changed {
		return nil
	}
	if err := c.write(next); err != nil {
		return err
	}
	c.publish(next)
	return nil
}

// write writes entries to the checkpoint, durably. writeMu is held.
func (c *Cache) write(entries []Entry) error {
	if err := vfs.WriteFileAtomic(c.fsys, c.dir, CheckpointFileName, encodeCheckpoint(entries)); err != nil {
		return fmt.Errorf("epoch: writing %s: %w", c.Path(), err)
	}
	c.unwritten = false
	return nil
}

// publish makes entries the cache's. writeMu is held.
func (c *Cache) publish(entries []Entry) {
	c.mu.Lock()
	c.entries = entries
	c.mu.Unlock()
}

// snapshot returns the current entries; callers must not modify them.
func (c *Cache) snapshot() []Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.entries
}

// String dumps the entries as "LeaderEpochCache[epoch@startOffset ...]".
func (c *Cache) String() string {
	var b strings.Builder
	b.WriteString("LeaderEpochCache[")
	for i, e := range c.snapshot() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(int64(e.Epoch), 10))
		b.WriteByte('@')
		b.WriteString(strconv.FormatInt(e.StartOffset, 10))
	}
	b.WriteByte(']')
	return b.String()
}
