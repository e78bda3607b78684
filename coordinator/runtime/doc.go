// Package runtime is the part of a coordinator over a compacted internal
// topic that does not depend on what the topic holds: which partitions of
// the topic this broker serves, by which shard, loaded at which leader
// epoch, and how a shard reads its partition, writes to it and keeps
// time. The consumer group coordinator (coordinator/, over
// __consumer_offsets) and the KIP-1279 mirror state coordinator
// (mirror/state/, over __mirror_state) both keep their shards in a
// Registry, a shard type being all that differs, and both load a shard by
// replaying its partition with a Loader (Kafka's CoordinatorLoaderImpl),
// a record decoder being all that differs. Loader.Replay hands each record
// with its batch's producer id, epoch and transactional flag, and each
// COMMIT/ABORT marker, to a Playback (Kafka's CoordinatorPlayback), which
// is what transactional offset commits (KIP-447) need on load.
//
// A shard writes with a Writer and keeps its timers in a Timer, both
// guarded by the shard's own mutex: records are queued under it in the
// order the shard decides on them, and one writer goroutine per shard
// appends them with acks=all, coalescing plain records into batches,
// writing a transactional producer's records (a TxnOffsetCommit) and a
// transaction marker (the group coordinator completing a transaction on
// its partition) each as a batch of its own, in queue order. Timer is
// Kafka's CoordinatorTimer: keyed callbacks run under the shard mutex
// unless rescheduled or cancelled meanwhile.
//
// It follows the shard bookkeeping of Kafka's CoordinatorRuntime
// (group-coordinator's org.apache.kafka.coordinator.common.runtime, which
// the group, share and transaction coordinators share):
// scheduleLoadOperation is OnElection, scheduleUnloadOperation is
// OnResignation, and the runtime's shard builder (one per coordinator, given
// when the runtime is built) is the constructor given to New. Unlike
// Kafka's runtime it has no event loop: each shard runs on its own goroutine
// (Shard.Run) and serializes its own work.
//
// Lock order: the registry's lock before a shard's. The registry calls
// Shard.Closed and Shard.Epoch, and the constructor, with its lock held,
// and never calls Shard.Unload or Shard.Run with it held, so a shard may
// call back into the registry from those two.
package runtime
