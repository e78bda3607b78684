package configdef

import "strconv"

const (
	maxInt32 = "2147483647"
	maxInt64 = "9223372036854775807"
)

// topicDefs are Kafka 4.x's topic configs (TopicConfig, LogConfig's
// ConfigDef, QuotaConfig's throttled-replica lists), with Kafka's defaults
// and validators and the broker synonyms of ServerTopicConfigSynonyms.
//
// Departures, each deliberate:
//   - message.format.version and message.timestamp.difference.max.ms are
//     gone, as in Kafka 4.0 (KIP-724, KIP-937): they are unknown keys.
//   - message.downconversion.enable is kept as a no-op, as Kafka 4.x keeps it
//     (deprecated for removal in 5.0): clients and mirroring tools copying
//     configs from a 3.x cluster still send it.
//   - segment.bytes keeps the 14-byte floor of Kafka 3.x rather than the
//     1 MiB floor of KIP-1030, so tests can roll segments without writing
//     megabytes; storage.ParseLogConfig has the same floor.
//   - cleanup.policy must not be empty: the storage engine has no "neither
//     delete nor compact" policy.
var topicDefs = allDynamic([]Def{
	{
		Name: "cleanup.policy", Type: List, Default: str("delete"),
		Validate:       validList(true, "compact", "delete"),
		BrokerSynonyms: []string{"log.cleanup.policy"},
		Doc:            `The retention policy for old log segments: "delete" discards segments past the retention time or size, "compact" keeps the latest value for each key, and "compact,delete" does both.`,
	},
	{
		Name: "compression.type", Type: String, Default: str("producer"),
		Validate:       in("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
		BrokerSynonyms: []string{"compression.type"},
		Doc:            `The compression of batches stored for the topic: gzip, snappy, lz4, zstd, uncompressed, or producer to keep the codec the producer used.`,
	},
	{
		Name: "compression.gzip.level", Type: Int, Default: str("-1"),
		Validate:       gzipLevel,
		BrokerSynonyms: []string{"compression.gzip.level"},
		Doc:            `The gzip level used when compression.type is gzip.`,
	},
	{
		Name: "compression.lz4.level", Type: Int, Default: str("9"),
		Validate:       between(1, 17),
		BrokerSynonyms: []string{"compression.lz4.level"},
		Doc:            `The lz4 level used when compression.type is lz4.`,
	},
	{
		Name: "compression.zstd.level", Type: Int, Default: str("3"),
		Validate:       between(-131072, 22),
		BrokerSynonyms: []string{"compression.zstd.level"},
		Doc:            `The zstd level used when compression.type is zstd.`,
	},
	{
		Name: "delete.retention.ms", Type: Long, Default: str("86400000"),
		Validate:       atLeast(0),
		BrokerSynonyms: []string{"log.cleaner.delete.retention.ms"},
		Doc:            `How long delete tombstones are kept in a compacted topic; a consumer reading from the start must finish within this time to see a consistent snapshot.`,
	},
	{
		Name: "file.delete.delay.ms", Type: Long, Default: str("60000"),
		Validate:       atLeast(0),
		BrokerSynonyms: []string{"log.segment.delete.delay.ms"},
		Doc:            `How long a deleted segment's files stay on disk before they are removed.`,
	},
	{
		Name: "flush.messages", Type: Long, Default: str(maxInt64),
		Validate:       atLeast(1),
		BrokerSynonyms: []string{"log.flush.interval.messages"},
		Doc:            `Force an fsync after this many messages. The default leaves durability to replication and the operating system.`,
	},
	{
		Name: "flush.ms", Type: Long, Default: str(maxInt64),
		Validate:       atLeast(0),
		BrokerSynonyms: []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"},
		Doc:            `Force an fsync when a message has waited this long. The default leaves durability to replication and the operating system.`,
	},
	{
		Name: "follower.replication.throttled.replicas", Type: List, Default: str(""),
		Validate: throttledReplicas("follower.replication.throttled.replicas"),
		Doc:      `Replicas whose follower side is throttled: "*" or partitionId:brokerId pairs. Accepted and stored; Strait does not throttle replication.`,
	},
	{
		Name: "index.interval.bytes", Type: Int, Default: str("4096"),
		Validate:       atLeast(0),
		BrokerSynonyms: []string{"log.index.interval.bytes"},
		Doc:            `How many bytes of batches go between two offset index entries.`,
	},
	{
		Name: "leader.replication.throttled.replicas", Type: List, Default: str(""),
		Validate: throttledReplicas("leader.replication.throttled.replicas"),
		Doc:      `Replicas whose leader side is throttled: "*" or partitionId:brokerId pairs. Accepted and stored; Strait does not throttle replication.`,
	},
	{
		Name: "local.retention.bytes", Type: Long, Default: str("-2"),
		Validate:       atLeast(-2),
		BrokerSynonyms: []string{"log.local.retention.bytes"},
		Doc:            `Local size limit of a tiered partition; -2 means retention.bytes. Strait has no tiered storage.`,
	},
	{
		Name: "local.retention.ms", Type: Long, Default: str("-2"),
		Validate:       atLeast(-2),
		BrokerSynonyms: []string{"log.local.retention.ms"},
		Doc:            `Local time limit of a tiered partition; -2 means retention.ms. Strait has no tiered storage.`,
	},
	{
		Name: "max.compaction.lag.ms", Type: Long, Default: str(maxInt64),
		Validate:       atLeast(1),
		BrokerSynonyms: []string{"log.cleaner.max.compaction.lag.ms"},
		Doc:            `The longest a message may stay uncompacted in a compacted topic.`,
	},
	{
		Name: "max.message.bytes", Type: Int, Default: str("1048588"),
		Validate:       atLeast(0),
		BrokerSynonyms: []string{"message.max.bytes"},
		Doc:            `The largest record batch the topic accepts, after compression.`,
	},
	{
		Name: "message.downconversion.enable", Type: Boolean, Default: str("true"),
		BrokerSynonyms: []string{"log.message.downconversion.enable"},
		Doc:            `Deprecated and ignored: brokers no longer down-convert records for old consumers.`,
	},
	{
		Name: "message.timestamp.after.max.ms", Type: Long, Default: str("3600000"),
		Validate:       atLeast(0),
		BrokerSynonyms: []string{"log.message.timestamp.after.max.ms"},
		Doc:            `With CreateTime timestamps, reject a batch whose timestamp is more than this far ahead of the broker's clock.`,
	},
	{
		Name: "message.timestamp.before.max.ms", Type: Long, Default: str(maxInt64),
		Validate:       atLeast(0),
		BrokerSynonyms: []string{"log.message.timestamp.before.max.ms"},
		Doc:            `With CreateTime timestamps, reject a batch whose timestamp is more than this far behind the broker's clock.`,
	},
	{
		Name: "message.timestamp.type", Type: String, Default: str("CreateTime"),
		Validate:       in("CreateTime", "LogAppendTime"),
		BrokerSynonyms: []string{"log.message.timestamp.type"},
		Doc:            `Whether record timestamps are the producer's (CreateTime) or the broker's append time (LogAppendTime).`,
	},
	{
		Name: "min.cleanable.dirty.ratio", Type: Double, Default: str("0.5"),
		Validate:       betweenDouble(0, 1),
		BrokerSynonyms: []string{"log.cleaner.min.cleanable.ratio"},
		Doc:            `The share of uncompacted log above which a compacted topic is cleaned.`,
	},
	{
		Name: "min.compaction.lag.ms", Type: Long, Default: str("0"),
		Validate:       atLeast(0),
		BrokerSynonyms: []string{"log.cleaner.min.compaction.lag.ms"},
		Doc:            `The shortest time a message stays uncompacted in a compacted topic.`,
	},
	{
		Name: "min.insync.replicas", Type: Int, Default: str("1"),
		Validate:       atLeast(1),
		BrokerSynonyms: []string{"min.insync.replicas"},
		Doc:            `With acks=all, the number of in-sync replicas that must have a write before it is acknowledged; fewer fails the write with NOT_ENOUGH_REPLICAS.`,
	},
	{
		Name: "preallocate", Type: Boolean, Default: str("false"),
		BrokerSynonyms: []string{"log.preallocate"},
		Doc:            `Preallocate a new segment's file on disk.`,
	},
	{
		Name: "remote.log.copy.disable", Type: Boolean, Default: str("false"),
		Doc: `Stop copying a tiered topic's segments to remote storage. Strait has no tiered storage.`,
	},
	{
		Name: "remote.log.delete.on.disable", Type: Boolean, Default: str("false"),
		Doc: `Delete remote data when tiered storage is turned off for the topic. Strait has no tiered storage.`,
	},
	{
		Name: "remote.storage.enable", Type: Boolean, Default: str("false"),
		Doc: `Tier the topic's data to remote storage. Strait has no tiered storage, so true is rejected.`,
	},
	{
		Name: "retention.bytes", Type: Long, Default: str("-1"),
		BrokerSynonyms: []string{"log.retention.bytes"},
		Doc:            `The size a partition may grow to before the oldest segments are deleted (delete policy); -1 is no limit.`,
	},
	{
		Name: "retention.ms", Type: Long, Default: str(strconv.Itoa(7 * 24 * 3600 * 1000)),
		Validate:       atLeast(-1),
		BrokerSynonyms: []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
		Doc:            `How long a segment is kept before it is deleted (delete policy); -1 is no limit.`,
	},
	{
		Name: "segment.bytes", Type: Int, Default: str("1073741824"),
		Validate:       atLeast(14),
		BrokerSynonyms: []string{"log.segment.bytes"},
		Doc:            `The size of a segment file; retention and compaction work a segment at a time.`,
	},
	{
		Name: "segment.index.bytes", Type: Int, Default: str("10485760"),
		Validate:       atLeast(4),
		BrokerSynonyms: []string{"log.index.size.max.bytes"},
		Doc:            `The size an offset or time index file is preallocated to.`,
	},
	{
		Name: "segment.jitter.ms", Type: Long, Default: str("0"),
		Validate:       atLeast(0),
		BrokerSynonyms: []string{"log.roll.jitter.ms", "log.roll.jitter.hours"},
		Doc:            `The most random time subtracted from segment.ms, so partitions do not all roll at once.`,
	},
	{
		Name: "segment.ms", Type: Long, Default: str(strconv.Itoa(7 * 24 * 3600 * 1000)),
		Validate:       atLeast(1),
		BrokerSynonyms: []string{"log.roll.ms", "log.roll.hours"},
		Doc:            `Roll a new segment after this long even if the active one is not full, so retention and compaction can act on it.`,
	},
	{
		Name: "unclean.leader.election.enable", Type: Boolean, Default: str("false"),
		BrokerSynonyms: []string{"unclean.leader.election.enable"},
		Doc:            `Let a replica outside the ISR become leader as a last resort, which may lose acknowledged writes.`,
	},
})

// allDynamic marks every def dynamic: every topic config can be altered.
func allDynamic(defs []Def) []Def {
	for i := range defs {
		defs[i].Dynamic = true
	}
	return defs
}
