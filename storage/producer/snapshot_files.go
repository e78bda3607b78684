package producer

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/strait-io/strait/storage/vfs"
)

// SnapshotFileSuffix ends a producer state snapshot's name
// (LogFileUtils.PRODUCER_SNAPSHOT_FILE_SUFFIX).
const SnapshotFileSuffix = ".snapshot"

// SnapshotFileName is the name of the snapshot at offset: the offset
// zero-padded to 20 digits, like every file of a Kafka partition.
func SnapshotFileName(offset int64) string {
	return fmt.Sprintf("%020d%s", offset, SnapshotFileSuffix)
}

// ParseSnapshotFileName returns the offset a snapshot file name encodes.
func ParseSnapshotFileName(name string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, SnapshotFileSuffix)
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	off, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return off, true
}

// listSnapshots returns the offsets of the snapshot files in dir,
// ascending. A missing directory has none (Kafka's listSnapshotFiles).
func listSnapshots(fsys vfs.FS, dir string) ([]int64, error) {
	names, err := fsys.List(dir)
	if vfs.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("producer: list snapshots in %s: %w", dir, err)
	}
	var offs []int64
	for _, n := range names {
		if off, ok := ParseSnapshotFileName(n); ok {
			offs = append(offs, off)
		}
	}
	slices.Sort(offs)
	return offs, nil
}

func (m *Manager) snapshotPath(offset int64) string {
	return filepath.Join(m.dir, SnapshotFileName(offset))
}

// removeSnapshotFiles deletes the snapshot files at offs and makes the
// deletion durable. Kafka does not sync the directory here; we do, so that a
// crash cannot bring back a snapshot from a history the log has since
// truncated and rewritten, which recovery would then load as valid.
func (m *Manager) removeSnapshotFiles(offs []int64) error {
	if len(offs) == 0 {
		return nil
	}
	for _, off := range offs {
		if err := m.fsys.Remove(m.snapshotPath(off)); err != nil && !vfs.IsNotExist(err) {
			return fmt.Errorf("producer: delete snapshot: %w", err)
		}
	}
	if err := m.fsys.SyncDir(m.dir); err != nil {
		return fmt.Errorf("producer: sync %s after deleting snapshots: %w", m.dir, err)
	}
	return nil
}
