package replication

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// AlterReplicaLogDirs: v1-2 (the wire layer gates versions and checks
// ALTER on the cluster)
//
// Behavior (Kafka's ReplicaManager.alterReplicaLogDirs) on a broker with
// one log directory, which is what Strait serves (broker/node.go refuses
// several in log.dirs): a replica can only be "moved" to the directory it
// is in, which is done at once, so no future replica is ever created and
// DescribeLogDirs never reports IsFuture. Per partition:
//   - a directory other than the absolute path of the configured one:
//     LOG_DIR_NOT_FOUND (Kafka's LogManager.isLogDirOnline compares the
//     request's path with each log dir's getAbsolutePath);
//   - a topic name too long for the future log's directory name
//     (<topic>-<partition>.<32 hex>-future over 255 bytes, KAFKA-4893):
//     INVALID_TOPIC_EXCEPTION;
//   - a partition whose log could not be opened: KAFKA_STORAGE_ERROR;
//   - a partition the metadata knows but this broker does not host (yet):
//     REPLICA_NOT_AVAILABLE (Kafka keeps that code for this API where it
//     would say NOT_LEADER_OR_FOLLOWER);
//   - a partition the metadata does not know: UNKNOWN_TOPIC_OR_PARTITION;
//   - a hosted replica: NONE.
//
// A partition named twice takes the last directory (Kafka collects the
// request into a map). Results are grouped by topic in name order.
//
// Moving replicas between several directories (the future replica of
// Kafka's ReplicaAlterLogDirsManager) waits for Strait to serve more than
// one log directory per node.
func (r *ReplicaManager) AlterReplicaLogDirs(_ context.Context, req *kmsg.AlterReplicaLogDirsRequest) *kmsg.AlterReplicaLogDirsResponse {
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	dirs := map[storage.TopicPartition]string{}
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			for _, p := range t.Partitions {
				dirs[storage.TopicPartition{Topic: t.Topic, Partition: p}] = d.Dir
			}
		}
	}
	logDirs := map[string]bool{}
	for _, d := range r.logs.Dirs() {
		logDirs[absLogDir(d)] = true
	}
	img := r.currentImage()
	byTopic := map[string][]kmsg.AlterReplicaLogDirsResponseTopicPartition{}
	for tp, dir := range dirs {
		rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
		rp.Partition = tp.Partition
		rp.ErrorCode = r.alterReplicaLogDir(tp, dir, logDirs, img)
		byTopic[tp.Topic] = append(byTopic[tp.Topic], rp)
	}
	for _, t := range slices.Sorted(maps.Keys(byTopic)) {
		rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
		rt.Topic, rt.Partitions = t, byTopic[t]
		slices.SortFunc(rt.Partitions, func(a, b kmsg.AlterReplicaLogDirsResponseTopicPartition) int { return int(a.Partition - b.Partition) })
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// futureDirSuffixLen is the length of ".<uuid without dashes>-future",
// what Kafka's UnifiedLog.logFutureDirName appends to "<topic>-<partition>".
const futureDirSuffixLen = 1 + 32 + len("-future")

// alterReplicaLogDir is one partition's answer.
func (r *ReplicaManager) alterReplicaLogDir(tp storage.TopicPartition, dir string, logDirs map[string]bool, img *raftmeta.Image) int16 {
	if len(tp.Topic)+1+len(strconv.Itoa(int(tp.Partition)))+futureDirSuffixLen > 255 {
		return kerr.InvalidTopicException.Code
	}
	if !logDirs[dir] {
		return kerr.LogDirNotFound.Code
	}
	p, err := r.getPartitionOrError(tp, img)
	switch {
	case err == nil:
		if absLogDir(filepath.Dir(p.Log().Dir())) != dir {
			return kerr.KafkaStorageError.Code // moving between directories: not yet
		}
		return 0
	case errors.Is(err, kerr.NotLeaderForPartition):
		return kerr.ReplicaNotAvailable.Code
	default:
		return errorCode(err)
	}
}
