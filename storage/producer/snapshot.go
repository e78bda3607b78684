package producer

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/strait-io/strait/storage/vfs"
)

// TakeSnapshot writes the state at the map end offset to
// <offset>.snapshot, atomically and durably. It does nothing unless the map
// end offset moved past the last snapshot written or loaded (Kafka's
// takeSnapshot).
func (m *Manager) TakeSnapshot() error {
	m.mu.Lock()
	off := m.lastMapOffset
	if off <= m.lastSnapOffset {
		m.mu.Unlock()
		return nil
	}
	entries := make([]Entry, 0, len(m.producers))
	for _, e := range m.producers {
		entries = append(entries, *e) // EncodeSnapshot only reads
	}
	slices.SortFunc(entries, func(a, b Entry) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	data := EncodeSnapshot(entries)
	m.mu.Unlock()

	// The file is written without the lock: only the Log mutates the
	// manager, and it is the caller, so the state cannot change meanwhile.
	if err := vfs.WriteFileAtomic(m.fsys, m.dir, SnapshotFileName(off), data); err != nil {
		return fmt.Errorf("producer: write snapshot at offset %d: %w", off, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if i, found := slices.BinarySearch(m.snapshots, off); !found {
		m.snapshots = slices.Insert(m.snapshots, i, off)
	}
	m.lastSnapOffset = off
	return nil
}

// LatestSnapshotOffset is the offset of the newest snapshot file.
func (m *Manager) LatestSnapshotOffset() (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.latestSnapshotLocked()
}

func (m *Manager) latestSnapshotLocked() (int64, bool) {
	if len(m.snapshots) == 0 {
		return 0, false
	}
	return m.snapshots[len(m.snapshots)-1], true
}

// OldestSnapshotOffset is the offset of the oldest snapshot file.
func (m *Manager) OldestSnapshotOffset() (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.snapshots) == 0 {
		return 0, false
	}
	return m.snapshots[0], true
}

// SnapshotOffsets returns the offsets of all snapshot files, ascending.
func (m *Manager) SnapshotOffsets() []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.snapshots)
}

// dropSnapshots forgets the snapshots keep rejects and deletes their files.
func (m *Manager) dropSnapshots(keep func(off int64) bool) error {
	m.mu.Lock()
	var drop []int64
	kept := m.snapshots[:0]
	for _, off := range m.snapshots {
		if keep(off) {
			kept = append(kept, off)
		} else {
			drop = append(drop, off)
		}
	}
	m.snapshots = kept
	m.mu.Unlock()
	return m.removeSnapshotFiles(drop)
}

// DeleteSnapshotsBefore deletes the snapshots below offset (the Log calls
// it as the log start offset advances).
func (m *Manager) DeleteSnapshotsBefore(offset int64) error {
	return m.dropSnapshots(func(off int64) bool { return off >= offset })
}

// DeleteSnapshot deletes the snapshot at offset, if any (the Log calls it
// for each segment it deletes; Kafka's removeAndMarkSnapshotForDeletion).
func (m *Manager) DeleteSnapshot(offset int64) error {
	return m.dropSnapshots(func(off int64) bool { return off != offset })
}

// RemoveStraySnapshots deletes snapshots at offsets that are not a segment
// base offset, except the newest such stray when it lies above every
// segment base: that one is the snapshot a clean shutdown wrote at the log
// end (ProducerStateManager.removeStraySnapshots, run by LogLoader).
func (m *Manager) RemoveStraySnapshots(segmentBaseOffsets []int64) error {
	snaps, err := listSnapshots(m.fsys, m.dir)
	if err != nil {
		return err
	}
	bases := map[int64]bool{}
	maxBase, haveBase := int64(0), false
	for _, b := range segmentBaseOffsets {
		bases[b] = true
		if !haveBase || b > maxBase {
			maxBase, haveBase = b, true
		}
	}
	var drop, kept []int64
	stray, haveStray := int64(0), false
	for _, off := range snaps { // ascending: the last stray seen is the newest
		switch {
		case bases[off]:
			kept = append(kept, off)
		case haveStray:
			drop = append(drop, stray)
			stray = off
		default:
			stray, haveStray = off, true
		}
	}
	if haveStray {
		if haveBase && stray < maxBase {
			drop = append(drop, stray)
		} else {
			kept = append(kept, stray)
			slices.Sort(kept)
		}
	}
	m.mu.Lock()
	m.snapshots = kept
	m.mu.Unlock()
	return m.removeSnapshotFiles(drop)
}

// TruncateAndReload brings the state in line with a log that now spans
// [logStartOffset, logEndOffset) (ProducerStateManager.truncateAndReload).
// Snapshots above the log end, and at or below the log start (Kafka's
// bound), are deleted. If the state is not already at logEndOffset it is
// replaced by the newest snapshot left, dropping producers expired at now; a
// corrupt snapshot is deleted and the next older one tried; with none the
// state starts empty at logStartOffset. The Log then replays its batches
// from MapEndOffset to its end through Update. The log end offset must not
// exceed the high watermark, because unreplicated transactions are dropped.
func (m *Manager) TruncateAndReload(logStartOffset, logEndOffset int64, now time.Time) error {
	if err := m.dropSnapshots(func(off int64) bool { return off <= logEndOffset && off > logStartOffset }); err != nil {
		return err
	}
	if m.MapEndOffset() == logEndOffset {
		m.OnLogStartOffsetIncremented(logStartOffset)
		return nil
	}
	m.mu.Lock()
	m.resetStateLocked()
	m.mu.Unlock()
	return m.loadFromSnapshot(logStartOffset, now)
}

// loadFromSnapshot loads the newest readable snapshot, deleting corrupt ones
// on the way (ProducerStateManager.loadFromSnapshot).
func (m *Manager) loadFromSnapshot(logStartOffset int64, now time.Time) error {
	for {
		off, ok := m.LatestSnapshotOffset()
		if !ok {
			m.mu.Lock()
			m.lastSnapOffset, m.lastMapOffset = logStartOffset, logStartOffset
			m.mu.Unlock()
			return nil
		}
		entries, err := m.readSnapshot(off)
		if errors.Is(err, ErrCorruptSnapshot) {
			if err := m.DeleteSnapshot(off); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		nowMs := now.UnixMilli()
		m.mu.Lock()
		for i := range entries {
			if e := &entries[i]; !m.isExpired(nowMs, e) {
				m.loadEntryLocked(e)
			}
		}
		m.lastSnapOffset, m.lastMapOffset = off, off
		m.mu.Unlock()
		return nil
	}
}

func (m *Manager) readSnapshot(off int64) ([]Entry, error) {
	path := m.snapshotPath(off)
	data, err := vfs.ReadFile(m.fsys, path)
	if err != nil {
		return nil, fmt.Errorf("producer: read snapshot %s: %w", filepath.Base(path), err)
	}
	entries, err := DecodeSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("producer: snapshot %s: %w", filepath.Base(path), err)
	}
	return entries, nil
}

// loadEntryLocked installs a restored entry and its open transaction
// (ProducerStateManager.loadProducerEntry). mu must be held.
func (m *Manager) loadEntryLocked(e *Entry) {
	c := e.Clone()
	m.producers[e.ProducerID] = &c
	if c.HasOngoingTxn() {
		m.ongoing.put(TxnMetadata{ProducerID: c.ProducerID, FirstOffset: c.CurrentTxnFirstOffset, LastOffset: -1})
	}
}

// resetStateLocked forgets every producer and transaction. mu must be held.
func (m *Manager) resetStateLocked() {
	clear(m.producers)
	clear(m.verifications) // a guard taken before a truncation holds for nothing after it
	m.ongoing = nil
	m.unreplicated = nil
}

// TruncateFullyAndStartAt drops all state and every snapshot and restarts
// the map at offset (when the Log deletes all its segments).
func (m *Manager) TruncateFullyAndStartAt(offset int64) error {
	m.mu.Lock()
	m.resetStateLocked()
	m.lastSnapOffset = 0
	m.lastMapOffset = offset
	m.mu.Unlock()
	return m.dropSnapshots(func(int64) bool { return false })
}

// OnLogStartOffsetIncremented forgets completed transactions below the new
// log start and moves the map end up to it if behind.
func (m *Manager) OnLogStartOffsetIncremented(logStartOffset int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removeUnreplicatedLocked(logStartOffset)
	if m.lastMapOffset < logStartOffset {
		m.lastMapOffset = logStartOffset
	}
	if off, ok := m.latestSnapshotLocked(); ok {
		m.lastSnapOffset = off
	} else {
		m.lastSnapOffset = logStartOffset
	}
}
