package storage

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/strait-io/strait/storage/vfs"
)

// Log-directory checkpoint files, in Kafka's OffsetCheckpointFile format:
// a version line (0), a count line, then "<topic> <partition> <offset>".
const (
	RecoveryPointCheckpointFile  = "recovery-point-offset-checkpoint"
	LogStartOffsetCheckpointFile = "log-start-offset-checkpoint"
	ReplicationCheckpointFile    = "replication-offset-checkpoint"
	CleanShutdownFile            = ".kafka_cleanshutdown"
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return PartitionDirName(tp.Topic, tp.Partition) }

// writeOffsetCheckpoint writes offsets atomically in Kafka's format.
func writeOffsetCheckpoint(fsys vfs.FS, dir, name string, offsets map[TopicPartition]int64) error {
	tps := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	// Appended, not formatted: a directory with 10,000 partitions writes
	// its high watermark file every few seconds.
	b := make([]byte, 0, 32+len(tps)*32)
	b = append(b, "0\n"...)
	b = strconv.AppendInt(b, int64(len(tps)), 10)
	b = append(b, '\n')
	for _, tp := range tps {
		b = append(b, tp.Topic...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(tp.Partition), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, offsets[tp], 10)
		b = append(b, '\n')
	}
	return vfs.WriteFileAtomic(fsys, dir, name, b)
}

// ReadOffsetCheckpoint reads checkpoint file name of log directory dir
// (recovery, and tests that look at what a broker wrote); a missing file
// is empty.
func ReadOffsetCheckpoint(fsys vfs.FS, dir, name string) (map[TopicPartition]int64, error) {
	path := filepath.Join(dir, name)
	data, err := vfs.ReadFile(fsys, path)
	if vfs.IsNotExist(err) {
		return map[TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	bad := func(line int, why string) error {
		return fmt.Errorf("malformed checkpoint file %s at line %d: %s", path, line, why)
	}
	if len(lines) < 2 || lines[0] != "0" {
		return nil, bad(1, "expected version 0")
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n < 0 || n != len(lines)-2 {
		return nil, bad(2, fmt.Sprintf("count %q does not match %d entries", lines[1], len(lines)-2))
	}
	out := make(map[TopicPartition]int64, n)
	for i, line := range lines[2:] {
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, bad(i+3, "expected <topic> <partition> <offset>")
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, bad(i+3, "partition or offset is not a number")
		}
		out[TopicPartition{f[0], int32(p)}] = off
	}
	return out, nil
}
