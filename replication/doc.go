// Package replication is Strait's ReplicaManager: one Partition per local
// replica of a topic partition, created, led and deleted as the metadata
// image says (Kafka's ReplicaManager and cluster.Partition). It serves the
// partition data APIs — Produce with acks 0/1/all, Fetch with long polls and
// KIP-227 fetch sessions, ListOffsets, OffsetForLeaderEpoch, DeleteRecords
// and DescribeLogDirs — over storage.Log, and gives the group coordinator
// its leader appends and committed reads.
//
// In issue 3 every partition has one replica, so the in-sync replica set is
// this node and the high watermark follows the log end offset. The code is
// shaped for followers all the same: the high watermark is computed from
// replica progress (highWatermark), and requests that wait for it (acks=all,
// long-poll fetches, DeleteRecords) park on per-partition watchers, one
// list per kind of wait, that appends, high watermark moves and role
// changes wake as each kind needs (Kafka's DelayedOperationPurgatory per
// operation, keyed by partition; watch.go).
//
// Concurrency: the set of local partitions is an immutable map published
// through an atomic pointer, so the data path never takes a manager lock.
// A Partition's role (leader, epoch, ISR) is an immutable partitionState
// behind an atomic pointer; appends hold the partition's
// leaderIsrUpdateLock shared and role changes hold it exclusively, so an
// append is never stamped with an epoch the partition no longer has.
package replication
