package state

import (
	"encoding/base64"
	"strconv"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/raftmeta"
)

// Key names one mirror partition's record: the prototype's
// ClusterMirrorRecordKey(mirrorName, topicId, partition) (digest §4.1).
type Key struct {
	Mirror    string
	TopicID   [16]byte
	Partition int32
}

// String is the key's canonical form, the prototype's
// "mirrorName:topicId:partition" with the topic id as Kafka's
// Uuid.toString (URL-safe base64 without padding). PartitionFor hashes it.
func (k Key) String() string {
	return k.Mirror + ":" + base64.RawURLEncoding.EncodeToString(k.TopicID[:]) + ":" + strconv.FormatInt(int64(k.Partition), 10)
}

// PartitionFor is the __mirror_state partition holding the record of a
// mirror partition: Utils.abs(key.hashCode()) % numPartitions over
// Key.String, as the prototype's MirrorMetadataManager places partition
// state ("distributing partition-level coordination across brokers so a
// mirror with many partitions does not bottleneck on one node") and as
// GroupCoordinatorService.partitionFor places groups. The digest leaves
// the hash open (§4.1 [INF]); Java's String.hashCode keeps the placement
// identical to a Java implementation using the same key string, and is
// stable across Strait versions (golden values in key_test.go).
func PartitionFor(mirror string, topicID [16]byte, partition int32, numPartitions int32) int32 {
	return Key{Mirror: mirror, TopicID: topicID, Partition: partition}.PartitionFor(numPartitions)
}

// PartitionFor is PartitionFor of the key.
func (k Key) PartitionFor(numPartitions int32) int32 {
	return coordinator.PartitionFor(k.String(), numPartitions)
}

// PartitionForMirror is the __mirror_state partition whose leader does a
// mirror's mirror-level work (source sync of configs, groups, ACLs and
// topic discovery): the prototype hashes the mirror name alone for it "so
// all mirror-level work … is handled by a single broker per mirror"
// (digest §4.1, §6).
func PartitionForMirror(mirror string, numPartitions int32) int32 {
	return coordinator.PartitionFor(mirror, numPartitions)
}

// CoordinatorFor returns the broker coordinating key in img: the leader of
// its __mirror_state partition. ok is false when the topic does not exist
// yet or the partition has no leader.
func CoordinatorFor(img *raftmeta.Image, key Key) (nodeID int32, ok bool) {
	if img == nil {
		return -1, false
	}
	t, found := img.Topics[raftmeta.MirrorStateTopic]
	if !found || len(t.Partitions) == 0 {
		return -1, false
	}
	p := t.Partitions[key.PartitionFor(int32(len(t.Partitions)))]
	if p.Leader < 0 {
		return -1, false
	}
	return p.Leader, true
}
