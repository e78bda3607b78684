package configdef

import "slices"

// DefaultListenerSecurityProtocolMap is Kafka's default
// listener.security.protocol.map (SocketServerConfigs): every security
// protocol is a listener name mapped to itself.
const DefaultListenerSecurityProtocolMap = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"

// brokerDefs are the broker configs Strait implements, under Kafka's names
// with Kafka's types, validators and defaults — except where the issue's
// contract gives a single node that works with no configuration at all:
// node.id and broker.id (1; Kafka has none), process.roles
// (broker,controller; Kafka has none), listeners (PLAINTEXT on
// 127.0.0.1:9092 and CONTROLLER on 127.0.0.1:9093; Kafka PLAINTEXT://:9092),
// controller.listener.names (CONTROLLER), controller.quorum.voters
// (1@127.0.0.1:9093) and log.dir (./data; Kafka /tmp/kafka-logs).
// metrics.listener, metrics.pprof.enable, replica.fetch.coalesce.min.bytes
// and replica.fetch.coalesce.wait.ms are Strait's own keys.
//
// Dynamic marks what Kafka can change at runtime and Strait can apply: the
// log defaults (DynamicLogConfig: only the first synonym of each topic key,
// so log.retention.ms but not log.retention.hours), message.max.bytes,
// compression.*, min.insync.replicas, unclean.leader.election.enable and
// producer.id.expiration.ms, and the log cleaner's keys (cleaner.go).
// The listener keys, dynamic in Kafka, are read from server.properties
// only: set at runtime they are stored and ignored, as are the dynamic
// keys of Kafka's that Strait does not implement (dynamic_broker.go).
var brokerDefs = append([]Def{
	// Identity and roles (KRaftConfigs, ServerConfigs).
	{
		Name: "node.id", Type: Int, Default: str("1"),
		Doc: `The node's id in the cluster, shared by its broker and controller roles.`,
	},
	{
		Name: "cluster.id", Type: String,
		Validate: clusterIDValue,
		Doc:      `The cluster id written to meta.properties when a log directory is formatted (Kafka's kafka-storage.sh format --cluster-id), a base64url-encoded 16-byte UUID. Unset: a node formatting an empty directory derives the id from controller.quorum.voters when there are several voters, so every node of a new cluster agrees on it, and picks a random one for a single voter. A directory formatted for another cluster is refused.`,
	},
	{
		Name: "broker.id", Type: Int, Default: str("1"),
		Doc: `Older name of node.id; when both are set they must be equal.`,
	},
	{
		Name: "process.roles", Type: List, Default: str("broker,controller"),
		Validate: validList(false, "broker", "controller"),
		Doc:      `The roles this process plays: broker, controller, or both.`,
	},
	{
		Name: "broker.rack", Type: String,
		Doc: `The broker's rack, reported to clients in Metadata responses.`,
	},

	// Metadata quorum (QuorumConfig, KRaftConfigs).
	{
		Name: "controller.quorum.voters", Type: List, Default: str("1@127.0.0.1:9093"),
		Validate: validateVoters,
		Doc:      `The controller quorum's voters as id@host:port entries, separated by commas.`,
	},
	{
		Name: "controller.listener.names", Type: String, Default: str("CONTROLLER"),
		Doc: `The names of the listeners the controller uses, separated by commas; the first one is used to reach other controllers.`,
	},
	{
		Name: "metadata.log.dir", Type: String,
		Doc: `Where the metadata quorum keeps its log; unset means the first entry of log.dirs.`,
	},

	// Listeners (SocketServerConfigs, ReplicationConfigs).
	{
		Name: "listeners", Type: String, Default: str("PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"),
		Doc: `The listeners to accept connections on, as NAME://host:port separated by commas; an empty host binds every interface.`,
	},
	{
		Name: "advertised.listeners", Type: String,
		Doc: `The addresses given to clients, when different from listeners; controller listeners are never advertised to clients. 0.0.0.0 may not be advertised.`,
	},
	{
		Name: "listener.security.protocol.map", Type: String, Default: str(DefaultListenerSecurityProtocolMap),
		Doc: `The security protocol of each listener name, as NAME:PROTOCOL separated by commas. When it is not set, controller listeners are PLAINTEXT unless some listener uses SSL or SASL.`,
	},
	{
		Name: "inter.broker.listener.name", Type: String,
		Doc: `The listener brokers use to reach each other; unset means the listener named after security.inter.broker.protocol.`,
	},
	{
		Name: "security.inter.broker.protocol", Type: String, Default: str("PLAINTEXT"),
		Validate: in("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
		Doc:      `The security protocol brokers use to reach each other; set this or inter.broker.listener.name, not both.`,
	},
	{
		// KIP-966: the cap on the partitions one DescribeTopicPartitions
		// answers, whatever the client's ResponsePartitionLimit.
		Name: "max.request.partition.size.limit", Type: Int, Default: str("2000"),
		Validate: atLeast(1),
		Doc:      `The maximum number of partitions can be served in one request: a DescribeTopicPartitions answers at most this many, and a cursor to the rest.`,
	},
	{
		Name: "socket.request.max.bytes", Type: Int, Default: str("104857600"),
		Validate: atLeast(1),
		Doc:      `The largest request the broker reads; a larger size prefix closes the connection before anything is allocated.`,
	},
	{
		// KIP-72's memory pool. Kafka defaults to -1, unbounded; unset
		// here derives a bound from the machine
		// (wire.DefaultQueuedMaxRequestBytes), so a few clients sending
		// 100 MB requests cannot take a broker's memory.
		Name: "queued.max.request.bytes", Type: Long,
		Doc: `The number of queued bytes allowed before no more requests are read: request frames are read into memory reserved from a pool this large, and a connection whose next request does not fit is not read until memory comes back (requests up to 64 KiB are always read, and one request larger than the pool is read alone). Unset means an eighth of the memory the process may use (GOMEMLIMIT, else its cgroup's memory limit, else physical memory), at least 16 MiB and at most 256 MiB; 0 or a negative value means unbounded, as -1 (Kafka's default) does in Kafka.`,
	},
	{
		// Kafka's network threads read requests and write responses; ours
		// are gnet event loops. Kafka defaults to 3; unset here sizes them
		// from GOMAXPROCS (wire.defaultEventLoops), so a broker given one
		// core does not run three loops that fight for it.
		Name: "num.network.threads", Type: Int,
		Validate: atLeast(1),
		Doc:      `The number of event loops per listener that read requests and write responses; unset means half of GOMAXPROCS, at least 1.`,
	},
	{
		// Kafka's LogManager opens (and recovers) the logs at start-up
		// and flushes and closes them at shutdown on this many threads per
		// log directory; 2 since Kafka 4.0 (KIP-1030). Strait reads it when
		// the log directories open, before the metadata image is there, so
		// only server.properties (or --set) counts (staticOnlyBrokerKeys).
		Name: "num.recovery.threads.per.data.dir", Type: Int, Default: str("2"),
		Validate: atLeast(1),
		Doc:      `The number of logs of one log directory opened (and recovered after an unclean shutdown) at once at start-up, and flushed and closed at once at shutdown.`,
	},
	{
		Name: "connections.max.idle.ms", Type: Long, Default: str("600000"),
		Doc: `Close a connection that has been idle this long; a negative value never closes idle connections.`,
	},
	{
		// Kafka's default is Int.MaxValue. Unset, Strait derives a
		// limit from the open-file limit (broker/fdbudget.go), so that a
		// storm of connections is held back before the process runs
		// out of descriptors and storage fails.
		Name: "max.connections", Type: Int,
		Dynamic:  true,
		Validate: atLeast(0),
		Doc:      `The most connections the broker holds on all its listeners together; past it a listener accepts no more until one closes, and the new ones wait in the kernel's listen backlog. A limit for one listener is set as listener.name.<listener>.max.connections. The inter-broker listener is exempt when there are other listeners: a connection it takes past the limit makes another listener close its least recently used connection. Unset means a limit derived from the open-file limit that leaves descriptors for the logs and the metadata quorum (logged at start).`,
	},
	{
		Name: "max.connections.per.ip", Type: Int, Default: str("2147483647"),
		Dynamic:  true,
		Validate: atLeast(0),
		Doc:      `The most connections one address may hold; a new connection from an address at its maximum is closed at once. May be 0 only when max.connections.per.ip.overrides is set.`,
	},
	{
		Name: "max.connections.per.ip.overrides", Type: String, Default: str(""),
		Dynamic:  true,
		Validate: perIPOverridesValue,
		Doc:      `Per-address or per-host-name overrides of max.connections.per.ip, as host:count separated by commas, e.g. "hostName:100,127.0.0.1:200". Host names are resolved when the broker starts and when the value changes.`,
	},
	{
		Name: "metrics.listener", Type: String, Default: str("127.0.0.1:9644"),
		Validate: validateHostPortOrEmpty,
		Doc:      `Strait only: the host:port of the Prometheus metrics HTTP endpoint; empty disables it.`,
	},
	{
		Name: "metrics.pprof.enable", Type: Boolean, Default: str("false"),
		Doc: `Strait only: also serve Go's runtime profiles (net/http/pprof: CPU, heap, allocations, goroutines, ` +
			`mutex, block, execution trace) under /debug/pprof/ on metrics.listener, which must then be set. ` +
			`Off by default: the profiles expose the broker's internals (goroutine stacks, the command line, ` +
			`memory contents' shape) to anyone who can reach the metrics listener, and a CPU profile or trace ` +
			`costs CPU while it runs. Enable it on a trusted listener only.`,
	},

	// Topics (ServerLogConfigs, ReplicationConfigs, ServerConfigs).
	{
		Name: "log.dirs", Type: String,
		Doc: `The directories holding partition data, separated by commas; unset means log.dir.`,
	},
	{
		Name: "log.dir", Type: String, Default: str("./data"),
		Doc: `The directory holding partition data, used when log.dirs is not set.`,
	},
	{
		Name: "num.partitions", Type: Int, Default: str("1"),
		Validate: atLeast(1),
		Doc:      `The partition count of topics created without one, including automatically created topics.`,
	},
	{
		Name: "default.replication.factor", Type: Int, Default: str("1"),
		Doc: `The replication factor of topics created without one, including automatically created topics.`,
	},
	{
		Name: "auto.create.topics.enable", Type: Boolean, Default: str("true"),
		Doc: `Create a topic when a client produces to it or asks for its metadata and it does not exist.`,
	},
	{
		Name: "authorizer.class.name", Type: String, Default: str(""),
		Doc: `The authorizer: org.apache.kafka.metadata.authorizer.StandardAuthorizer enforces the ACLs stored in the metadata log on every request; empty (the default) enforces nothing.`,
	},
	{
		Name: "super.users", Type: String, Default: str(""),
		Doc: `Principals allowed every operation whatever the ACLs, separated by semicolons (User:admin;User:CN=broker,O=example).`,
	},
	{
		Name: "allow.everyone.if.no.acl.found", Type: Boolean, Default: str("false"),
		Doc: `With an authorizer, allow an operation on a resource no ACL names at all (an ACL for anyone on it denies everyone else).`,
	},
	{
		Name: "delete.topic.enable", Type: Boolean, Default: str("true"),
		Doc: `Allow DeleteTopics; when false it fails with TOPIC_DELETION_DISABLED.`,
	},
	{
		Name: "message.max.bytes", Type: Int, Default: str("1048588"), Dynamic: true,
		Validate: atLeast(0),
		Doc:      `The largest record batch a topic accepts after compression, unless the topic sets max.message.bytes.`,
	},
	{
		Name: "compression.type", Type: String, Default: str("producer"), Dynamic: true,
		Validate: in("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
		Doc:      `The default compression.type of topics: gzip, snappy, lz4, zstd, uncompressed, or producer to keep the producer's codec.`,
	},
	{
		Name: "compression.gzip.level", Type: Int, Default: str("-1"), Dynamic: true,
		Validate: gzipLevel,
		Doc:      `The default compression.gzip.level of topics.`,
	},
	{
		Name: "compression.lz4.level", Type: Int, Default: str("9"), Dynamic: true,
		Validate: between(1, 17),
		Doc:      `The default compression.lz4.level of topics.`,
	},
	{
		Name: "compression.zstd.level", Type: Int, Default: str("3"), Dynamic: true,
		Validate: between(-131072, 22),
		Doc:      `The default compression.zstd.level of topics.`,
	},
	{
		Name: "min.insync.replicas", Type: Int, Default: str("1"), Dynamic: true,
		Validate: atLeast(1),
		Doc:      `The default min.insync.replicas of topics: with acks=all, how many in-sync replicas must have a write.`,
	},
	{
		Name: "unclean.leader.election.enable", Type: Boolean, Default: str("false"), Dynamic: true,
		Doc: `The default unclean.leader.election.enable of topics.`,
	},

	// Cluster membership and replication (KRaftConfigs, ReplicationConfigs).
	{
		Name: "broker.heartbeat.interval.ms", Type: Int, Default: str("2000"),
		Validate: atLeast(1),
		Doc:      `How often a broker heartbeats to the active controller.`,
	},
	{
		Name: "broker.session.timeout.ms", Type: Int, Default: str("9000"),
		Validate: atLeast(1),
		Doc:      `How long a broker may go without heartbeating before the controller fences it and moves its leaderships away.`,
	},
	{
		Name: "controlled.shutdown.enable", Type: Boolean, Default: str("true"),
		Doc: `Whether a stopping broker first asks the controller to move its leaderships to other in-sync replicas.`,
	},
	{
		Name: "auto.leader.rebalance.enable", Type: Boolean, Default: str("true"),
		Doc: `Whether the controller periodically moves leadership back to each partition's preferred (first) replica.`,
	},
	{
		Name: "leader.imbalance.check.interval.seconds", Type: Long, Default: str("300"),
		Validate: atLeast(1),
		Doc:      `How often the controller checks for partitions not led by their preferred replica.`,
	},
	{
		Name: "replica.lag.time.max.ms", Type: Long, Default: str("30000"),
		Validate: atLeast(1),
		Doc:      `A follower that has not caught up with the leader's log end for this long leaves the ISR.`,
	},
	{
		Name: "replica.fetch.wait.max.ms", Type: Int, Default: str("500"),
		Validate: atLeast(0),
		Doc:      `How long a follower's fetch waits at the leader for data; keep it below replica.lag.time.max.ms.`,
	},
	{
		Name: "replica.fetch.min.bytes", Type: Int, Default: str("1"),
		Validate: atLeast(1),
		Doc:      `How much data a follower's fetch waits for at the leader.`,
	},
	{
		Name: "replica.fetch.coalesce.min.bytes", Type: Int, Default: str("131072"),
		Validate: atLeast(1),
		Doc: `How much data a follower's fetch waits for at the leader while the leader streams to it ` +
			`(its last answer held at least half of this), instead of replica.fetch.min.bytes. Strait's own key.`,
	},
	{
		Name: "replica.fetch.coalesce.wait.ms", Type: Int, Default: str("3"),
		Validate: atLeast(0),
		Doc: `How long a follower's fetch waits at the leader for replica.fetch.coalesce.min.bytes while the ` +
			`leader streams to it: fewer, larger round trips under load, at most this much later replication. ` +
			`0 fetches as Kafka does. Strait's own key.`,
	},
	{
		Name: "replica.fetch.max.bytes", Type: Int, Default: str("1048576"),
		Validate: atLeast(0),
		Doc:      `How many bytes a follower fetches per partition at most (a larger first batch is still returned).`,
	},
	{
		Name: "replica.fetch.response.max.bytes", Type: Int, Default: str("10485760"),
		Validate: atLeast(0),
		Doc:      `How many bytes a follower's fetch returns at most in all.`,
	},
	{
		Name: "replica.fetch.backoff.ms", Type: Int, Default: str("1000"),
		Validate: atLeast(0),
		Doc:      `How long a follower waits after a failed fetch before it tries again.`,
	},
	{
		Name: "replica.socket.timeout.ms", Type: Int, Default: str("30000"),
		Doc: `How long a follower waits for the leader's answer beyond the fetch's own wait.`,
	},
	{
		// KIP-73 (QuotaConfig, DynamicConfig.Broker): dynamic, usually set
		// per broker with AlterConfigs; a static value is a starting point.
		Name: "leader.replication.throttled.rate", Type: Long, Default: str(maxInt64), Dynamic: true,
		Validate: atLeast(0),
		Doc: `The most bytes per second this broker sends, as leader, to followers catching up the replicas ` +
			`leader.replication.throttled.replicas names; a follower in the ISR is never held back. The default is no limit.`,
	},
	{
		Name: "follower.replication.throttled.rate", Type: Long, Default: str(maxInt64), Dynamic: true,
		Validate: atLeast(0),
		Doc: `The most bytes per second this broker fetches, as follower, for the replicas ` +
			`follower.replication.throttled.replicas names while they are not in sync. The default is no limit.`,
	},
	{
		// Kafka's QuotaConfig: dynamic, per broker or cluster default.
		Name: "replica.alter.log.dirs.io.max.bytes.per.second", Type: Long, Default: str(maxInt64), Dynamic: true,
		Validate: atLeast(0),
		Doc: `The most bytes per second this broker copies while it moves replicas between its log directories ` +
			`(AlterReplicaLogDirs). The default is no limit.`,
	},
	{
		Name: "replication.quota.window.num", Type: Int, Default: str("11"),
		Validate: atLeast(1),
		Doc:      `The number of windows the replication throttles measure their byte rate over.`,
	},
	{
		Name: "replication.quota.window.size.seconds", Type: Int, Default: str("1"),
		Validate: atLeast(1),
		Doc:      `The length in seconds of each window the replication throttles measure their byte rate over.`,
	},
	{
		Name: "replica.high.watermark.checkpoint.interval.ms", Type: Long, Default: str("5000"),
		Validate: atLeast(1),
		Doc:      `How often the high watermarks are written to the log directory.`,
	},

	// Log defaults (ServerLogConfigs, CleanerConfig, RemoteLogManagerConfig).
	{
		Name: "log.segment.bytes", Type: Int, Default: str("1073741824"), Dynamic: true,
		Validate: atLeast(14),
		Doc:      `The default segment.bytes of topics.`,
	},
	{
		Name: "log.roll.ms", Type: Long, Dynamic: true,
		Doc: `The default segment.ms of topics; unset means log.roll.hours.`,
	},
	{
		Name: "log.roll.hours", Type: Int, Default: str("168"),
		Validate: atLeast(1),
		Doc:      `The default segment.ms of topics in hours, used when log.roll.ms is not set.`,
	},
	{
		Name: "log.roll.jitter.ms", Type: Long, Dynamic: true,
		Doc: `The default segment.jitter.ms of topics; unset means log.roll.jitter.hours.`,
	},
	{
		Name: "log.roll.jitter.hours", Type: Int, Default: str("0"),
		Validate: atLeast(0),
		Doc:      `The default segment.jitter.ms of topics in hours, used when log.roll.jitter.ms is not set.`,
	},
	{
		Name: "log.retention.ms", Type: Long, Dynamic: true,
		Doc: `The default retention.ms of topics; -1 keeps data forever. Unset means log.retention.minutes.`,
	},
	{
		Name: "log.retention.minutes", Type: Int,
		Doc: `The default retention.ms of topics in minutes, used when log.retention.ms is not set; unset means log.retention.hours.`,
	},
	{
		Name: "log.retention.hours", Type: Int, Default: str("168"),
		Doc: `The default retention.ms of topics in hours, used when neither log.retention.ms nor log.retention.minutes is set.`,
	},
	{
		Name: "log.retention.bytes", Type: Long, Default: str("-1"), Dynamic: true,
		Doc: `The default retention.bytes of topics; -1 is no limit.`,
	},
	{
		Name: "log.retention.check.interval.ms", Type: Long, Default: str("300000"),
		Validate: atLeast(1),
		Doc:      `How often the broker looks for segments to delete under the retention policies.`,
	},
	{
		Name: "log.cleanup.policy", Type: List, Default: str("delete"), Dynamic: true,
		Validate: validList(true, "compact", "delete"),
		Doc:      `The default cleanup.policy of topics.`,
	},
	{
		Name: "log.index.size.max.bytes", Type: Int, Default: str("10485760"), Dynamic: true,
		Validate: atLeast(4),
		Doc:      `The default segment.index.bytes of topics.`,
	},
	{
		Name: "log.index.interval.bytes", Type: Int, Default: str("4096"), Dynamic: true,
		Validate: atLeast(0),
		Doc:      `The default index.interval.bytes of topics.`,
	},
	{
		Name: "log.flush.interval.messages", Type: Long, Default: str(maxInt64), Dynamic: true,
		Validate: atLeast(1),
		Doc:      `The default flush.messages of topics: fsync after this many messages.`,
	},
	{
		Name: "log.flush.interval.ms", Type: Long, Dynamic: true,
		Doc: `The default flush.ms of topics; unset means log.flush.scheduler.interval.ms.`,
	},
	{
		Name: "log.flush.scheduler.interval.ms", Type: Long, Default: str(maxInt64),
		Doc: `The default flush.ms of topics when log.flush.interval.ms is not set.`,
	},
	{
		Name: "log.flush.offset.checkpoint.interval.ms", Type: Int, Default: str("60000"),
		Validate: atLeast(0),
		Doc: `How often the recovery point checkpoint of each log directory is written; 0 writes it only at shutdown. ` +
			`After a crash every segment from the checkpointed point on is recovered, so a longer interval costs ` +
			`start-up time, never data. A truncation's lowered recovery point is written with the next high watermark checkpoint.`,
	},
	{
		Name: "log.flush.start.offset.checkpoint.interval.ms", Type: Int, Default: str("60000"),
		Validate: atLeast(0),
		Doc: `How often the log start offset checkpoint of each log directory is written; 0 writes it only at shutdown. ` +
			`As in Kafka, records that DeleteRecords removed within the interval before a crash, from a segment ` +
			`not yet deleted, can be read again after it.`,
	},
	{
		Name: "log.segment.delete.delay.ms", Type: Long, Default: str("60000"), Dynamic: true,
		Validate: atLeast(0),
		Doc:      `The default file.delete.delay.ms of topics.`,
	},
	{
		Name: "log.preallocate", Type: Boolean, Default: str("false"), Dynamic: true,
		Doc: `The default preallocate of topics.`,
	},
	{
		Name: "log.message.timestamp.type", Type: String, Default: str("CreateTime"), Dynamic: true,
		Validate: in("CreateTime", "LogAppendTime"),
		Doc:      `The default message.timestamp.type of topics.`,
	},
	{
		Name: "log.message.timestamp.before.max.ms", Type: Long, Default: str(maxInt64), Dynamic: true,
		Validate: atLeast(0),
		Doc:      `The default message.timestamp.before.max.ms of topics.`,
	},
	{
		Name: "log.message.timestamp.after.max.ms", Type: Long, Default: str("3600000"), Dynamic: true,
		Validate: atLeast(0),
		Doc:      `The default message.timestamp.after.max.ms of topics.`,
	},
	{
		Name: "log.message.downconversion.enable", Type: Boolean, Default: str("true"), Dynamic: true,
		Doc: `Deprecated and ignored, like the topic's message.downconversion.enable.`,
	},
	{
		Name: "log.cleaner.delete.retention.ms", Type: Long, Default: str("86400000"), Dynamic: true,
		Validate: atLeast(0),
		Doc:      `The default delete.retention.ms of topics.`,
	},
	{
		Name: "log.cleaner.min.compaction.lag.ms", Type: Long, Default: str("0"), Dynamic: true,
		Validate: atLeast(0),
		Doc:      `The default min.compaction.lag.ms of topics.`,
	},
	{
		Name: "log.cleaner.max.compaction.lag.ms", Type: Long, Default: str(maxInt64), Dynamic: true,
		Validate: atLeast(1),
		Doc:      `The default max.compaction.lag.ms of topics.`,
	},
	{
		Name: "log.cleaner.min.cleanable.ratio", Type: Double, Default: str("0.5"), Dynamic: true,
		Validate: betweenDouble(0, 1),
		Doc:      `The default min.cleanable.dirty.ratio of topics.`,
	},
	{
		Name: "log.local.retention.ms", Type: Long, Default: str("-2"), Dynamic: true,
		Validate: atLeast(-2),
		Doc:      `The default local.retention.ms of topics. Strait has no tiered storage.`,
	},
	{
		Name: "log.local.retention.bytes", Type: Long, Default: str("-2"), Dynamic: true,
		Validate: atLeast(-2),
		Doc:      `The default local.retention.bytes of topics. Strait has no tiered storage.`,
	},
	{
		Name: "producer.id.expiration.ms", Type: Int, Default: str("86400000"), Dynamic: true,
		Validate: atLeast(1),
		Doc:      `How long a partition keeps an idle producer's state before forgetting its id.`,
	},

	// Fetch (ServerConfigs).
	{
		Name: "fetch.max.bytes", Type: Int, Default: str("57671680"),
		Validate: atLeast(1024),
		Doc:      `The most bytes one Fetch response carries, whatever the request asks.`,
	},
	{
		Name: "max.incremental.fetch.session.cache.slots", Type: Int, Default: str("1000"),
		Validate: atLeast(0),
		Doc:      `How many incremental fetch sessions (KIP-227) the broker keeps.`,
	},

	// Consumer groups (GroupCoordinatorConfig, classic protocol).
	{
		Name: "group.initial.rebalance.delay.ms", Type: Int, Default: str("3000"),
		Doc: `How long the first rebalance of an empty group waits for more members to join.`,
	},
	{
		Name: "group.min.session.timeout.ms", Type: Int, Default: str("6000"),
		Doc: `The shortest session timeout a group member may ask for.`,
	},
	{
		Name: "group.max.session.timeout.ms", Type: Int, Default: str("1800000"),
		Doc: `The longest session timeout a group member may ask for.`,
	},
	{
		Name: "group.max.size", Type: Int, Default: str(maxInt32),
		Validate: atLeast(1),
		Doc:      `The most members a group may have.`,
	},
	// Consumer groups of the KIP-848 protocol (GroupCoordinatorConfig).
	{
		Name: "group.consumer.session.timeout.ms", Type: Int, Default: str("45000"),
		Validate: atLeast(1),
		Doc:      `How long a consumer group member may go without a ConsumerGroupHeartbeat before it is fenced.`,
	},
	{
		Name: "group.consumer.min.session.timeout.ms", Type: Int, Default: str("45000"),
		Validate: atLeast(1),
		Doc:      `The least group.consumer.session.timeout.ms may be.`,
	},
	{
		Name: "group.consumer.max.session.timeout.ms", Type: Int, Default: str("60000"),
		Validate: atLeast(1),
		Doc:      `The most group.consumer.session.timeout.ms may be.`,
	},
	{
		Name: "group.consumer.heartbeat.interval.ms", Type: Int, Default: str("5000"),
		Validate: atLeast(1),
		Doc:      `How often consumer group members are told to heartbeat; below the session timeout.`,
	},
	{
		Name: "group.consumer.min.heartbeat.interval.ms", Type: Int, Default: str("5000"),
		Validate: atLeast(1),
		Doc:      `The least group.consumer.heartbeat.interval.ms may be.`,
	},
	{
		Name: "group.consumer.max.heartbeat.interval.ms", Type: Int, Default: str("15000"),
		Validate: atLeast(1),
		Doc:      `The most group.consumer.heartbeat.interval.ms may be.`,
	},
	{
		Name: "group.consumer.max.size", Type: Int, Default: str(maxInt32),
		Validate: atLeast(1),
		Doc:      `The most members a consumer group may have.`,
	},
	{
		Name: "group.consumer.assignors", Type: List, Default: str("uniform,range"),
		Validate: validList(true, "uniform", "range",
			"org.apache.kafka.coordinator.group.assignor.UniformAssignor",
			"org.apache.kafka.coordinator.group.assignor.RangeAssignor"),
		Doc: `The server-side assignors consumer groups may ask for, the first being the default.`,
	},
	{
		Name: "group.consumer.migration.policy", Type: String, Default: str("bidirectional"),
		Validate: inIgnoreCase("disabled", "upgrade", "downgrade", "bidirectional"),
		Doc:      `Whether empty groups may switch between the classic and the consumer protocol: disabled, upgrade, downgrade or bidirectional.`,
	},
	{
		Name: "offset.metadata.max.bytes", Type: Int, Default: str("4096"),
		Doc: `The largest metadata string an offset commit may carry.`,
	},
	{
		Name: "offsets.load.buffer.size", Type: Int, Default: str("5242880"),
		Validate: atLeast(1),
		Doc:      `How many bytes are read at a time when loading group state from __consumer_offsets.`,
	},
	{
		Name: "offsets.topic.num.partitions", Type: Int, Default: str("50"),
		Validate: atLeast(1),
		Doc:      `The partition count of __consumer_offsets; do not change it once the topic exists.`,
	},
	{
		Name: "offsets.topic.replication.factor", Type: Short, Default: str("3"),
		Validate: atLeast(1),
		Doc:      `The replication factor of __consumer_offsets. A broker that is down when the topic is created still gets its replica; only a cluster with fewer brokers registered gets one replica per broker.`,
	},
	{
		Name: "offsets.topic.segment.bytes", Type: Int, Default: str("104857600"),
		Validate: atLeast(1),
		Doc:      `The segment size of __consumer_offsets.`,
	},
	{
		Name: "offsets.topic.compression.codec", Type: Int, Default: str("0"),
		Validate: between(0, 4),
		Doc:      `The compression codec id of records written to __consumer_offsets: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.`,
	},
	{
		Name: "offsets.retention.minutes", Type: Int, Default: str("10080"),
		Validate: atLeast(1),
		Doc:      `How long the committed offsets of an empty group are kept.`,
	},
	{
		Name: "offsets.retention.check.interval.ms", Type: Long, Default: str("600000"),
		Validate: atLeast(1),
		Doc:      `How often expired committed offsets are looked for.`,
	},
	{
		Name: "offsets.commit.timeout.ms", Type: Int, Default: str("5000"),
		Validate: atLeast(1),
		Doc:      `How long an offset commit waits for the replicas of __consumer_offsets.`,
	},

	// Transactions (TransactionLogConfig, TransactionStateManagerConfig).
	{
		Name: "transaction.state.log.num.partitions", Type: Int, Default: str("50"),
		Validate: atLeast(1),
		Doc:      `The partition count of __transaction_state; do not change it once the topic exists.`,
	},
	{
		Name: "transaction.state.log.replication.factor", Type: Short, Default: str("3"),
		Validate: atLeast(1),
		Doc:      `The replication factor of __transaction_state. A broker that is down when the topic is created still gets its replica; only a cluster with fewer brokers registered gets one replica per broker.`,
	},
	{
		Name: "transaction.state.log.min.isr", Type: Int, Default: str("2"),
		Validate: atLeast(1),
		Doc:      `The min.insync.replicas of __transaction_state (capped at its replica count).`,
	},
	{
		Name: "transaction.state.log.segment.bytes", Type: Int, Default: str("104857600"),
		Validate: atLeast(1),
		Doc:      `The segment size of __transaction_state.`,
	},
	{
		Name: "transaction.state.log.load.buffer.size", Type: Int, Default: str("5242880"),
		Validate: atLeast(1),
		Doc:      `How many bytes are read at a time when loading transaction state from __transaction_state.`,
	},
	{
		Name: "transaction.max.timeout.ms", Type: Int, Default: str("900000"),
		Validate: atLeast(1),
		Doc:      `The longest transaction.timeout.ms a producer may ask for; InitProducerId with a longer one fails with INVALID_TRANSACTION_TIMEOUT.`,
	},
	{
		Name: "transactional.id.expiration.ms", Type: Int, Default: str("604800000"),
		Validate: atLeast(1),
		Doc:      `How long a transactional id with no transaction is kept after its last use.`,
	},
	{
		Name: "transaction.abort.timed.out.transaction.cleanup.interval.ms", Type: Int, Default: str("10000"),
		Validate: atLeast(1),
		Doc:      `How often transactions past their timeout are looked for and aborted.`,
	},
	{
		Name: "transaction.remove.expired.transaction.cleanup.interval.ms", Type: Int, Default: str("3600000"),
		Validate: atLeast(1),
		Doc:      `How often expired transactional ids are looked for and removed.`,
	},
	{
		Name: "transaction.partition.verification.enable", Type: Boolean, Default: str("true"), Dynamic: true,
		Doc: `Whether a partition leader asks the transaction coordinator that a transactional batch's partition is in its transaction before it appends it (KIP-890), so a late or stray write of an ended transaction is refused.`,
	},

	// Share coordinator (KIP-932's ShareCoordinatorConfig).
	{
		Name: "share.coordinator.state.topic.num.partitions", Type: Int, Default: str("50"),
		Validate: atLeast(1),
		Doc:      `The partition count of __share_group_state; do not change it once the topic exists.`,
	},
	{
		Name: "share.coordinator.state.topic.replication.factor", Type: Short, Default: str("3"),
		Validate: atLeast(1),
		Doc:      `The replication factor of __share_group_state. A broker that is down when the topic is created still gets its replica; only a cluster with fewer brokers registered gets one replica per broker.`,
	},
	{
		Name: "share.coordinator.state.topic.min.isr", Type: Short, Default: str("2"),
		Validate: atLeast(1),
		Doc:      `The min.insync.replicas of __share_group_state (capped at its replica count).`,
	},
	{
		Name: "share.coordinator.state.topic.segment.bytes", Type: Int, Default: str("104857600"),
		Validate: atLeast(1),
		Doc:      `The segment size of __share_group_state.`,
	},
	{
		Name: "share.coordinator.snapshot.update.records.per.snapshot", Type: Int, Default: str("500"),
		Validate: between(0, 500),
		Doc:      `How many update records a share-partition gets in __share_group_state between two snapshots of its whole state; 0 writes a snapshot every time.`,
	},
	{
		Name: "share.coordinator.load.buffer.size", Type: Int, Default: str("5242880"),
		Validate: atLeast(1),
		Doc:      `How many bytes are read at a time when loading share-partition state from __share_group_state.`,
	},
	{
		Name: "share.coordinator.write.timeout.ms", Type: Int, Default: str("5000"),
		Validate: atLeast(1),
		Doc:      `How long a write to __share_group_state waits for its replicas.`,
	},
	{
		Name: "share.coordinator.state.topic.prune.interval.ms", Type: Int, Default: str("300000"),
		Validate: atLeast(1),
		Doc:      `How often the share coordinator deletes the records of __share_group_state that later snapshots made redundant (the topic has no retention and is not compacted).`,
	},
	{
		Name: "share.coordinator.cold.partition.snapshot.interval.ms", Type: Int, Default: str("300000"),
		Validate: atLeast(1),
		Doc:      `How old a share-partition's last snapshot may get before the share coordinator writes it again, so that pruning moves past a share-partition that is not written to.`,
	},

	// Cluster mirroring (KIP-1279's ClusterMirrorConfigs, digest §5.2).
	{
		Name: "mirror.state.topic.num.partitions", Type: Int, Default: str("50"),
		Validate: atLeast(1),
		Doc:      `The partition count of __mirror_state, created with the first mirror; do not change it once the topic exists.`,
	},
	{
		Name: "mirror.state.topic.replication.factor", Type: Short, Default: str("3"),
		Validate: atLeast(1),
		Doc:      `The replication factor of __mirror_state. A broker that is down when the topic is created still gets its replica; only a cluster with fewer brokers registered gets one replica per broker.`,
	},
	{
		Name: "mirror.failed.retry.initial.backoff.ms", Type: Long, Default: str("100"),
		Validate: atLeast(1),
		Doc:      `How long a FAILED mirror partition waits before its first automatic retry; each retry doubles it, with full jitter.`,
	},
	{
		Name: "mirror.failed.retry.max.backoff.ms", Type: Long, Default: str("300000"),
		Validate: atLeast(1),
		Doc:      `The longest wait between automatic retries of a FAILED mirror partition.`,
	},
	{
		Name: "mirror.failed.retry.max.attempts", Type: Int, Default: str("20"),
		Validate: atLeast(0),
		Doc:      `How many times a FAILED mirror partition is retried automatically before it waits for an operator; 0 disables automatic retries.`,
	},
	{
		Name: "mirror.coordinator.write.timeout.ms", Type: Int, Default: str("5000"),
		Validate: atLeast(1),
		Doc:      `How long a write to __mirror_state waits for its replicas.`,
	},
	{
		Name: "mirror.coordinator.load.buffer.size", Type: Int, Default: str("5242880"),
		Validate: atLeast(1),
		Doc:      `How many bytes are read at a time when loading mirror partition states from __mirror_state.`,
	},
}, slices.Concat(cleanerDefs, shareGroupDefs, clientQuotaDefs)...)
