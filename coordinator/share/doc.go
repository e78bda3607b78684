// Package share is Strait's share coordinator (KIP-932): Kafka's
// ShareCoordinatorService and ShareCoordinatorShard. It keeps the durable
// state of every share-partition, a share group's view of one topic
// partition: its start offset, state epoch and leader epoch, and the
// delivery state and count of the in-flight records above the start
// offset (state batches).
//
// Share-partitions are spread over the partitions of the internal topic
// __share_group_state by the hash of their key "groupId:topicId:partition"
// (PartitionFor), and each is served by the broker leading its partition,
// through a shard of coordinator/runtime's Registry that replays the
// partition when the broker is elected. The share-partition leaders read
// and write the state through the RPCs InitializeShareGroupState (83),
// ReadShareGroupState (84), WriteShareGroupState (85),
// DeleteShareGroupState (86) and ReadShareGroupStateSummary (87), having
// found the coordinator with FindCoordinator key type 2.
//
// The partition holds two kinds of records (records.go, byte for byte
// Kafka's): a ShareSnapshot, the whole state of a share-partition, and a
// ShareUpdate, a change to it. A write becomes an update, or a snapshot
// once the share-partition had
// share.coordinator.snapshot.update.records.per.snapshot updates since its
// last one; an initialize is always a snapshot, a delete a tombstone.
// Records take effect in memory when decided (applied by the same replay
// that loads the partition) and are appended with acks=all; the answer
// waits for the append, and a failed append makes the shard load the
// partition again. A read records the reader's leader epoch, so older
// leaders' reads and writes are fenced (FENCED_LEADER_EPOCH), as are
// writes and initializations at an older state epoch (FENCED_STATE_EPOCH).
//
// The topic is not compacted: an update means nothing without the
// snapshot before it, so compaction, which keeps the latest record of each
// key, would lose state. Instead the coordinator deletes, every
// share.coordinator.state.topic.prune.interval.ms, the records below the
// oldest latest snapshot of its share-partitions, and rewrites the
// snapshot of a share-partition that has not had one for
// share.coordinator.cold.partition.snapshot.interval.ms so that pruning
// moves on (prune.go).
package share
