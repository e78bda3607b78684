package raftmeta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"
)

// Store is the raft log and stable store in one pebble database
// (<dir>/raft): raft.LogStore and raft.StableStore. Writes are synced
// before they return, as raft requires of both (a vote or a log entry a
// node acknowledged must survive its crash).
//
// Keys: 0x01 + big-endian index for log entries (so pebble's order is the
// log's), 0x02 + key for stable values.
type Store struct {
	db *pebble.DB

	// lastCommand is the index of the newest LogCommand entry stored or
	// being stored, 0 when unknown (see LastCommand).
	lastCommand atomic.Uint64

	mu     sync.RWMutex
	closed bool

	// onFailure and failure: store_failure.go.
	onFailure atomic.Pointer[func(error)]
	failOnce  sync.Once
	failure   atomic.Pointer[error]
}

var (
	_ raft.LogStore    = (*Store)(nil)
	_ raft.StableStore = (*Store)(nil)
)

// ErrKeyNotFound is the StableStore's answer for a key never set. Its text
// is fixed: hashicorp/raft recognises it by err.Error() == "not found"
// (api.go, as raft-boltdb answers).
var ErrKeyNotFound = errors.New("not found")

// ErrStoreClosed is returned after Close.
var ErrStoreClosed = errors.New("raftmeta: store closed")

const (
	logPrefix    byte = 0x01
	stablePrefix byte = 0x02
)

// OpenStore opens (or creates) the store in dir on fs (nil: the
// operating system's).
func OpenStore(dir string, fs vfs.FS, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if fs == nil {
		fs = vfs.Default
	}
	s := &Store{}
	// The metadata log is small and off the data path: a small cache and
	// memtable keep the broker's resident memory low.
	cache := pebble.NewCache(4 << 20)
	defer cache.Unref()
	db, err := pebble.Open(dir, &pebble.Options{
		FS:           fs,
		Cache:        cache,
		MemTableSize: 4 << 20,
		Logger:       pebbleLogger{logger.With("component", "pebble"), s},
	})
	if err != nil {
		return nil, fmt.Errorf("raftmeta: open store %s: %w", dir, err)
	}
	s.db = db
	return s, nil
}

// Close closes the database; later calls return ErrStoreClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.db.Close()
}

// read runs fn while the store is open.
func (s *Store) read(fn func() error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrStoreClosed
	}
	return fn()
}

func logKey(index uint64) []byte {
	k := make([]byte, 9)
	k[0] = logPrefix
	binary.BigEndian.PutUint64(k[1:], index)
	return k
}

// logBounds are the bounds of every log key.
var logLower, logUpper = []byte{logPrefix}, []byte{logPrefix + 1}

// FirstIndex implements raft.LogStore: 0 when the log is empty.
func (s *Store) FirstIndex() (uint64, error) { return s.edgeIndex(true) }

// LastIndex implements raft.LogStore: 0 when the log is empty.
func (s *Store) LastIndex() (uint64, error) { return s.edgeIndex(false) }

func (s *Store) edgeIndex(first bool) (uint64, error) {
	var idx uint64
	err := s.read(func() error {
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: logLower, UpperBound: logUpper})
		if err != nil {
			return err
		}
		ok := false
		if first {
			ok = it.First()
		} else {
			ok = it.Last()
		}
		if ok {
			idx = binary.BigEndian.Uint64(it.Key()[1:])
		}
		return errors.Join(it.Error(), it.Close())
	})
	if err != nil {
		return 0, s.fail(fmt.Errorf("raftmeta: log index: %w", err))
	}
	return idx, nil
}

// GetLog implements raft.LogStore; a missing index is raft.ErrLogNotFound.
func (s *Store) GetLog(index uint64, l *raft.Log) error {
	return s.read(func() error {
		v, closer, err := s.db.Get(logKey(index))
		if errors.Is(err, pebble.ErrNotFound) {
			return raft.ErrLogNotFound
		}
		if err != nil {
			return s.fail(fmt.Errorf("raftmeta: get log %d: %w", index, err))
		}
		defer closer.Close()
		if err := decodeLog(v, l); err != nil {
			// Corrupt: raft cannot go on without it either.
			return s.fail(fmt.Errorf("raftmeta: log %d: %w", index, err))
		}
		l.Index = index
		return nil
	})
}

// StoreLog implements raft.LogStore.
func (s *Store) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs implements raft.LogStore: all entries in one synced batch.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	for _, l := range logs {
		if l.Type == raft.LogCommand {
			s.noteCommand(l.Index)
		}
	}
	return s.read(func() error {
		b := s.db.NewBatch()
		defer b.Close()
		var buf []byte
		for _, l := range logs {
			buf = encodeLog(buf[:0], l)
			if err := b.Set(logKey(l.Index), buf, nil); err != nil {
				return s.fail(fmt.Errorf("raftmeta: store logs: %w", err))
			}
		}
		if err := b.Commit(pebble.Sync); err != nil {
			return s.fail(fmt.Errorf("raftmeta: store logs: %w", err))
		}
		return nil
	})
}

// LastCommand is the index of the newest LogCommand entry this node
// stored, or is storing: CatchUp waits for the FSM to reach it. It is 0
// after a restart until a command arrives, and after the entry was
// deleted; both only mean nothing to wait for.
func (s *Store) LastCommand() uint64 { return s.lastCommand.Load() }

// noteCommand raises lastCommand to i.
func (s *Store) noteCommand(i uint64) {
	for {
		lc := s.lastCommand.Load()
		if i <= lc || s.lastCommand.CompareAndSwap(lc, i) {
			return
		}
	}
}

// DeleteRange implements raft.LogStore: removes [min, max], inclusive.
func (s *Store) DeleteRange(minIdx, maxIdx uint64) error {
	if minIdx > maxIdx {
		return nil
	}
	if lc := s.lastCommand.Load(); minIdx <= lc && lc <= maxIdx {
		// Truncated (a conflicting suffix) or compacted away: which
		// command came before is not worth a scan, and 0 only makes
		// CatchUp wait less.
		s.lastCommand.CompareAndSwap(lc, 0)
	}
	end := logUpper
	if maxIdx < math.MaxUint64 {
		end = logKey(maxIdx + 1)
	}
	return s.read(func() error {
		if err := s.db.DeleteRange(logKey(minIdx), end, pebble.Sync); err != nil {
			return s.fail(fmt.Errorf("raftmeta: delete logs [%d, %d]: %w", minIdx, maxIdx, err))
		}
		return nil
	})
}

func stableKey(k []byte) []byte { return append([]byte{stablePrefix}, k...) }

// Set implements raft.StableStore. After Close it drops the write and
// returns nil: raft panics on a stable-store error, and one caller can
// still write after raft has stopped. raft answers heartbeats on the
// transport's connection goroutine (processHeartbeat), which neither
// Raft.Shutdown nor NetworkTransport.Close joins, and a heartbeat from a
// newer leader records that leader's term. Dropping that write is safe:
// no vote is cast on that path (votes go through raft's main loop, which
// has stopped), so no term can be voted in twice, and the node learns the
// term again from the leader when it restarts.
func (s *Store) Set(key, val []byte) error {
	err := s.read(func() error {
		if err := s.db.Set(stableKey(key), val, pebble.Sync); err != nil {
			return s.fail(fmt.Errorf("raftmeta: set %q: %w", key, err))
		}
		return nil
	})
	if errors.Is(err, ErrStoreClosed) {
		return nil
	}
	return err
}

// Get implements raft.StableStore; a key never set is ErrKeyNotFound.
func (s *Store) Get(key []byte) ([]byte, error) {
	var out []byte
	err := s.read(func() error {
		v, closer, err := s.db.Get(stableKey(key))
		if errors.Is(err, pebble.ErrNotFound) {
			return ErrKeyNotFound
		}
		if err != nil {
			return s.fail(fmt.Errorf("raftmeta: get %q: %w", key, err))
		}
		out = append([]byte{}, v...)
		return closer.Close()
	})
	return out, err
}

// SetUint64 implements raft.StableStore.
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 implements raft.StableStore; a key never set is 0 and
// ErrKeyNotFound.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("raftmeta: value of %q is %d bytes, not 8", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// encodeLog writes a raft.Log's fields but the index (the key holds it):
// term:uvarint type:uint8 data extensions (uvarint length + bytes)
// appendedAt (0, or 1 and Unix nanoseconds as a varint).
func encodeLog(b []byte, l *raft.Log) []byte {
	b = binary.AppendUvarint(b, l.Term)
	b = append(b, byte(l.Type))
	b = binary.AppendUvarint(b, uint64(len(l.Data)))
	b = append(b, l.Data...)
	b = binary.AppendUvarint(b, uint64(len(l.Extensions)))
	b = append(b, l.Extensions...)
	if l.AppendedAt.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	return binary.AppendVarint(b, l.AppendedAt.UnixNano())
}

func decodeLog(v []byte, l *raft.Log) error {
	d := decoder{b: v}
	l.Term = d.uvarint()
	l.Type = raft.LogType(d.uint8())
	l.Data = cloneOrNil(d.bytes(d.uvarint()))
	l.Extensions = cloneOrNil(d.bytes(d.uvarint()))
	l.AppendedAt = time.Time{}
	if d.bool() {
		l.AppendedAt = time.Unix(0, d.varint())
	}
	if d.err == nil && len(d.b) != 0 {
		return fmt.Errorf("%d trailing bytes", len(d.b))
	}
	return d.err
}

// cloneOrNil copies b out of pebble's buffer; an empty field reads as nil,
// as raft writes it.
func cloneOrNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// pebbleLogger sends pebble's logging to slog: its info lines (compactions,
// flushes) at debug, errors at error. pebble calls Fatalf on a write it
// cannot complete (a failed WAL write or sync: "fatal commit error", a
// failed MANIFEST sync) and on invariant violations, and does not expect
// it to return: it is a failure of the store (store_failure.go), and a
// panic where nobody hears of failures.
type pebbleLogger struct {
	l *slog.Logger
	s *Store
}

func (p pebbleLogger) Infof(format string, args ...any)  { p.l.Debug(fmt.Sprintf(format, args...)) }
func (p pebbleLogger) Errorf(format string, args ...any) { p.l.Error(fmt.Sprintf(format, args...)) }
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg)
	_ = p.s.fail(errors.New(msg))
	panic("pebble: " + msg)
}
