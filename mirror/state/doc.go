// Package state is the __mirror_state coordinator of KIP-1279 (Cluster
// Mirroring): the prototype's ClusterMirrorCoordinator, a coordinator shard
// per __mirror_state partition in the same pattern as Kafka's group and
// share coordinators (digest §1.5), built like Strait's group coordinator
// (coordinator/), with which it shares the shard registry and the
// partition loader (coordinator/runtime).
//
// # What it stores
//
// One record per mirror partition: the key is (mirror name, topic id,
// partition) and the value the partition.Record the per-partition state
// machine writes (the digest's "Gen B" value, §4.1). records.go has the
// byte layouts. A tombstone (null value) deletes a record: Delete and
// DeleteMirror write them when a mirror or a mirror topic goes away.
//
// # Where a record lives
//
// In partition PartitionFor(mirror, topicID, partition, n) of
// __mirror_state: Kafka's Utils.abs(key.hashCode()) % n over the
// prototype's canonical string "mirrorName:topicId:partition" (key.go).
// The coordinator of a record is the leader of that partition.
//
// # How it serves
//
// The broker calls OnElection when it becomes the leader of a
// __mirror_state partition: a shard replays the partition's local log up
// to its log end offset (tombstones deleting) into a map, answering
// COORDINATOR_LOAD_IN_PROGRESS meanwhile; OnResignation drops the shard
// (NOT_COORDINATOR from then on, as for a partition never led).
// ReadMirrorStates answers from the map. WriteMirrorStates fences every
// entry (fence.go: leader epoch, then state epoch, then the transition),
// appends the accepted entries of one shard as one batch with acks=all
// (Log.Append returns once the batch is committed), and only then updates
// the map, so a read never returns a state that is not committed. Writes to
// one shard are serialized from validation to the map update, which is what
// makes the state-epoch compare-and-set atomic; reads do not wait for
// writes. A failed append leaves the log's content unknown (a timed-out
// batch may still commit), so the shard reloads from its log before it
// serves again, as the group coordinator does.
package state
