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
// Behavior (Kafka's ReplicaManager.alterReplicaLogDirs): each partition is
// moved to the named directory, one of log.dirs by absolute path. A move
// to another directory than the replica's creates its future log there
// and starts the mover (log_dir_move.go); the answer does not wait for the
// move, which DescribeLogDirs shows as a future replica until it is done.
// A move to the directory the replica is in cancels a move under way (its
// future log is deleted, as Kafka does) and is otherwise done at once; a
// move to another directory than a move under way restarts it there. Per
// partition:
//   - a directory that is not one of log.dirs: LOG_DIR_NOT_FOUND (Kafka's
//     LogManager.isLogDirOnline compares the request's path with each log
//     dir's getAbsolutePath);
//   - a topic name too long for the future log's directory name
//     (<topic>-<partition>.<32 hex>-future over 255 bytes, KAFKA-4893):
//     INVALID_TOPIC_EXCEPTION;
//   - a partition whose log could not be opened, or whose future log
//     cannot be created: KAFKA_STORAGE_ERROR;
//   - a partition the metadata knows but this broker does not host (yet):
//     REPLICA_NOT_AVAILABLE (Kafka keeps that code for this API where it
//     would say NOT_LEADER_OR_FOLLOWER);
//   - a partition the metadata does not know: UNKNOWN_TOPIC_OR_PARTITION;
//   - a hosted replica: NONE.
//
// A partition named twice takes the last directory (Kafka collects the
// request into a map). Results are grouped by topic in name order.
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
	case errors.Is(err, kerr.NotLeaderForPartition):
		return kerr.ReplicaNotAvailable.Code
	default:
		return errorCode(err)
	}
	if err := r.moveReplicaLogDir(p, dir); err != nil {
		r.logger.Warn("cannot move a replica to another log directory", "partition", tp.String(), "dir", dir, "err", err)
		return kerr.KafkaStorageError.Code
	}
	return 0
}

// moveReplicaLogDir starts moving p's replica to dir, restarts a move
// to another directory there, or cancels a move when dir is where the
// replica is.
func (r *ReplicaManager) moveReplicaLogDir(p *Partition, dir string) error {
	if fut := r.futureLog(p.tp); fut != nil {
		if absLogDir(filepath.Dir(fut.Dir())) == dir {
			r.startLogDirMove(p) // a restart may have found it before the partition
			return nil
		}
		r.stopLogDirMove(p.tp)
		if err := r.logs.DeleteFutureLog(p.tp); err != nil {
			return err
		}
	}
	if absLogDir(filepath.Dir(p.Log().Dir())) == dir {
		return nil
	}
	if _, err := r.logs.CreateFutureLog(p.tp, dir); err != nil {
		return err
	}
	r.startLogDirMove(p)
	return nil
}
