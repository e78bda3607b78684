// Package syncer is a cluster mirror's metadata synchronisation (KIP-1279
// digest §6, the prototype's MirrorSourceSyncer): on the broker that leads
// the mirror's __mirror_state partition (state.PartitionForMirror), every
// mirror.metadata.refresh.interval.ms it pulls from the source cluster
// what failing over needs on the destination, each step independent of
// the others:
//
//   - topic discovery: source topics matching mirror.topics.include and
//     not mirror.topics.exclude start mirroring (StartMirrorTopics);
//   - partitions: a source partition-count increase is applied with
//     CreatePartitions; a source topic that is gone is stopped
//     (StopMirrorTopics) with a WARN naming it, never silently;
//   - topic configs: the source topics' dynamic configs minus
//     mirror.topic.properties.exclude (and mirror.name) are applied with
//     IncrementalAlterConfigs;
//   - consumer group offsets: groups matching mirror.groups.include and
//     not mirror.groups.exclude that are not active on the destination get
//     max(destLogStart, min(sourceCommitted, destEnd)) per partition; active
//     ones are skipped, or with mirror.consumer.offsets.sync.active.groups=
//     forward-only synced forward only (active_groups.go), and what a round
//     leaves alone is reported (Skipped, DescribeMirrors, metrics, log);
//   - ACLs: the source ACLs matching mirror.acl.include are reconciled
//     onto the destination;
//   - SCRAM credentials (opt-in, mirror.scram.sync.enable; scram.go): the
//     source's users matching mirror.scram.users.include and not
//     mirror.scram.users.exclude get the same salts and keys on the
//     destination, from a Strait source over an encrypted link.
//
// The syncer writes to the destination with plain Kafka requests through
// a client of its own broker, so every write takes the normal paths
// (forwarding to the controller, the group coordinator) and their checks.
// It only ever touches topics of its mirror whose mirror.name asks them
// to mirror: paused and stopped topics are left alone. The one exception
// is the promotion barrier's last group offset round (SyncGroupsNow,
// issue 27), which `strait mirror stop` asks for once the topics it stops
// are paused at rest: the same consumer group step, over those topics.
package syncer
