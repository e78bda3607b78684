package replication

import (
	"context"
	"path/filepath"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"github.com/strait-io/strait/storage"
)

// DescribeLogDirs: v1-5 (the wire layer gates versions)
//
// Behavior (Kafka's ReplicaManager.describeLogDirs): the one log directory
// with the size of each requested partition (every partition when Topics is
// null), OffsetLag 0 (a leader is never behind itself; Kafka reports
// max(HW - LEO, 0)), IsFuture false (no replica moves between dirs yet).
// TotalBytes and UsableBytes (v4+) come from statfs; a failed statfs gives
// KAFKA_STORAGE_ERROR for the directory.
//
// Version notes: v3 ErrorCode; v4 TotalBytes, UsableBytes; v5 IsCordoned.

// DescribeLogDirs describes the log directory.
func (r *ReplicaManager) DescribeLogDirs(ctx context.Context, req *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.Dir = r.logs.Dir()
	if abs, err := filepath.Abs(dir.Dir); err == nil {
		dir.Dir = abs
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir.Dir, &st); err != nil {
		r.logger.Warn("statfs of the log directory failed", "dir", dir.Dir, "err", err)
		dir.ErrorCode = kerr.KafkaStorageError.Code
		resp.Dirs = append(resp.Dirs, dir)
		return resp
	}
	dir.TotalBytes = int64(st.Blocks) * st.Bsize
	dir.UsableBytes = int64(st.Bavail) * st.Bsize

	var want map[storage.TopicPartition]bool
	if req.Topics != nil {
		want = map[storage.TopicPartition]bool{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				want[storage.TopicPartition{Topic: t.Topic, Partition: p}] = true
			}
		}
	}
	byTopic := map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
	for tp, p := range r.table.Load().byTP {
		if want != nil && !want[tp] {
			continue
		}
		dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		dp.Partition = tp.Partition
		dp.Size = p.log.Size()
		dp.OffsetLag = max(p.log.HighWatermark()-p.log.LogEndOffset(), 0)
		byTopic[tp.Topic] = append(byTopic[tp.Topic], dp)
	}
	names := make([]string, 0, len(byTopic))
	for n := range byTopic {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		parts := byTopic[n]
		sort.Slice(parts, func(i, j int) bool { return parts[i].Partition < parts[j].Partition })
		dt := kmsg.NewDescribeLogDirsResponseDirTopic()
		dt.Topic, dt.Partitions = n, parts
		dir.Topics = append(dir.Topics, dt)
	}
	resp.Dirs = append(resp.Dirs, dir)
	return resp
}
