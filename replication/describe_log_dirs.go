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
// Behavior (Kafka's ReplicaManager.describeLogDirs): every log directory
// (log.dirs, by absolute path) with the replicas it holds among the
// requested partitions (every partition when Topics is null): the size of
// each, OffsetLag max(HW - LEO, 0) for a current replica (a leader is never
// behind itself) and, for the future replica of a replica moving into the
// directory (AlterReplicaLogDirs), IsFuture with the lag of its log end
// offset behind the current replica's. TotalBytes and UsableBytes (v4+)
// come from statfs; a failed statfs gives KAFKA_STORAGE_ERROR for the
// directory.
//
// Version notes: v3 ErrorCode; v4 TotalBytes, UsableBytes; v5 IsCordoned.

// DescribeLogDirs describes the log directories.
func (r *ReplicaManager) DescribeLogDirs(ctx context.Context, req *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	var want map[storage.TopicPartition]bool
	if req.Topics != nil {
		want = map[storage.TopicPartition]bool{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				want[storage.TopicPartition{Topic: t.Topic, Partition: p}] = true
			}
		}
	}
	// The replicas by directory: the current ones, then the futures.
	byDir := map[string]map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
	add := func(tp storage.TopicPartition, l *storage.Log, lag int64, future bool) {
		if want != nil && !want[tp] {
			return
		}
		dir := filepath.Dir(l.Dir())
		if byDir[dir] == nil {
			byDir[dir] = map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
		}
		dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		dp.Partition, dp.Size, dp.OffsetLag, dp.IsFuture = tp.Partition, l.Size(), max(lag, 0), future
		byDir[dir][tp.Topic] = append(byDir[dir][tp.Topic], dp)
	}
	for tp, p := range r.table.Load().byTP {
		l := p.Log()
		add(tp, l, l.HighWatermark()-l.LogEndOffset(), false)
		if f := r.futureLog(tp); f != nil {
			add(tp, f, l.LogEndOffset()-f.LogEndOffset(), true)
		}
	}
	for _, d := range r.logs.Dirs() {
		resp.Dirs = append(resp.Dirs, r.describeLogDir(d, byDir[filepath.Clean(d)]))
	}
	return resp
}

// describeLogDir is one directory's answer.
func (r *ReplicaManager) describeLogDir(path string, byTopic map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition) kmsg.DescribeLogDirsResponseDir {
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.Dir = absLogDir(path)
	var st unix.Statfs_t
	if err := unix.Statfs(dir.Dir, &st); err != nil {
		r.logger.Warn("statfs of the log directory failed", "dir", dir.Dir, "err", err)
		dir.ErrorCode = kerr.KafkaStorageError.Code
		return dir
	}
	dir.TotalBytes = int64(st.Blocks) * st.Bsize
	dir.UsableBytes = int64(st.Bavail) * st.Bsize
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
	return dir
}

// absLogDir is a log directory as Kafka names it to clients: its absolute
// path (File.getAbsolutePath).
func absLogDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
