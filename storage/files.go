package storage

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// File suffixes, as Kafka's LogFileUtils names them.
const (
	LogFileSuffix       = ".log"
	IndexFileSuffix     = ".index"
	TimeIndexFileSuffix = ".timeindex"
	TxnIndexFileSuffix  = ".txnindex"
	SnapshotFileSuffix  = ".snapshot"
	DeletedFileSuffix   = ".deleted"
	CleanedFileSuffix   = ".cleaned"
	SwapFileSuffix      = ".swap"
	TmpFileSuffix       = ".tmp"

	LeaderEpochCheckpointFile = "leader-epoch-checkpoint"
	PartitionMetadataFile     = "partition.metadata"
)

// filenamePrefixFromOffset is the 20-digit zero-padded base offset that
// names every file of a segment (LogFileUtils.filenamePrefixFromOffset).
func filenamePrefixFromOffset(offset int64) string { return fmt.Sprintf("%020d", offset) }

func segmentPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, filenamePrefixFromOffset(base)+suffix)
}

// offsetFromFileName parses the base offset out of "<20 digits><suffix>".
func offsetFromFileName(name string) (int64, bool) {
	dot := strings.IndexByte(name, '.')
	if dot != 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(name[:dot], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// PartitionDirName is "<topic>-<partition>", Kafka's partition directory.
func PartitionDirName(topic string, partition int32) string {
	return topic + "-" + strconv.FormatInt(int64(partition), 10)
}

// ParsePartitionDirName splits a partition directory name at its last dash.
func ParsePartitionDirName(name string) (topic string, partition int32, ok bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return "", 0, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 {
		return "", 0, false
	}
	return name[:i], int32(p), true
}
