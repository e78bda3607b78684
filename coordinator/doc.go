// Package coordinator is Strait's consumer group coordinator for the classic
// group protocol, and the producer-id side of InitProducerId.
//
// The coordinator follows Kafka's group-coordinator module (KIP-848's Java
// rewrite of the old GroupCoordinator.scala): group state lives in memory,
// partitioned by the __consumer_offsets partition that owns each group
// (Utils.abs(groupId.hashCode) % offsets.topic.num.partitions), and every
// durable change is a record appended to that partition with acks=all:
// OffsetCommitKey/Value for committed offsets and GroupMetadataKey/Value for
// a group's generation and assignment, with null values (tombstones) for
// deletions. A partition is served by a shard (GroupCoordinatorShard) that
// exists while this broker leads the partition: OnElection replays the
// partition's records into memory, OnResignation drops them. Which shard
// serves which partition is kept by a runtime.Registry, a shard loads its
// partition with a runtime.Loader and writes through a runtime.Writer, and
// its timers are a runtime.Timer (coordinator/runtime; the __mirror_state
// coordinator shares the registry and the loader, the transaction
// coordinator all four).
//
// Concurrency: each shard has one mutex guarding its groups and offsets.
// Requests run on the wire layer's request goroutines and hold the mutex
// only while they decide; a JoinGroup or SyncGroup that must wait for other
// members parks on a channel, never on the mutex, and never on a network
// event loop. Records are queued under the mutex, so the log holds them in
// the order the decisions were made, and a per-shard writer goroutine
// appends them (Kafka's CoordinatorRuntime does the same with its event
// loop and deferred responses). Offset commits and tombstones take effect
// in memory when they are queued, as Kafka's runtime replays records before
// they are committed; the request is answered only once the append is
// acknowledged, and a failed append makes the shard reload from the log so
// memory never stays ahead of what is durable. Timers (session timeouts,
// rebalance timeouts, the initial rebalance delay, offset expiration) are
// per shard and run their callbacks under the shard mutex after checking
// they were not cancelled meanwhile (Kafka's CoordinatorTimer).
//
// Transactional offset commits (TxnOffsetCommit, KIP-98/447) are written
// in the producer's transactional batch and kept pending by producer id
// (pendingOffsets) until the transaction's marker, which the transaction
// coordinator's WriteTxnMarkers hands to CompleteTransaction: the shard
// writes the marker itself, in order with its other records, and once it
// is replicated commits the pending offsets (a later plain commit in the
// log wins) or drops them. Loading does the same from the log's
// transactional batches and markers.
package coordinator
