package configdef

// cleanerDefs are the log cleaner's own keys (Kafka's CleanerConfig). The
// dynamic ones are LogCleaner.ReconfigurableConfigs less
// log.cleaner.io.buffer.size, which Strait has no use for (it reads whole
// batches): the cleaner applies them at once (storage.SetCleanerConfig).
// The topic-level defaults log.cleaner.min.cleanable.ratio,
// log.cleaner.min/max.compaction.lag.ms and log.cleaner.delete.retention.ms
// are with the other log defaults.
var cleanerDefs = []Def{
	{
		Name: "log.cleaner.enable", Type: Boolean, Default: str("true"),
		Doc: `Enable the log cleaner, which compacts topics with cleanup.policy=compact, __consumer_offsets among them. If disabled those topics are not compacted and keep growing.`,
	},
	{
		Name: "log.cleaner.threads", Type: Int, Default: str("1"), Dynamic: true,
		Validate: atLeast(0),
		Doc:      `The number of cleaner threads, each cleaning one log at a time; 0 runs none. Changed at runtime, the value must be at least 1.`,
	},
	{
		Name: "log.cleaner.backoff.ms", Type: Long, Default: str("15000"), Dynamic: true,
		Validate: atLeast(0),
		Doc:      `How long a cleaner thread sleeps when no log is due for cleaning. A log is due once its dirty ratio passes min.cleanable.dirty.ratio or its oldest uncompacted record passes max.compaction.lag.ms.`,
	},
	{
		Name: "log.cleaner.dedupe.buffer.size", Type: Long, Default: str("134217728"), Dynamic: true,
		Validate: atLeast(1),
		Doc:      `The memory used for the key-to-offset maps of log compaction across all cleaner threads (each thread gets its share); a log with more keys in its dirty part is cleaned in several passes. A map is sized to the dirty part, so small logs use far less.`,
	},
	{
		Name: "log.cleaner.io.buffer.load.factor", Type: Double, Default: str("0.9"), Dynamic: true,
		Validate: betweenDouble(0, 1),
		Doc:      `How full the cleaner's key-to-offset map may get.`,
	},
	{
		Name: "log.cleaner.io.max.bytes.per.second", Type: Double, Default: str("1.7976931348623157E308"), Dynamic: true,
		Doc: `The log cleaner is throttled so that the sum of its read and write IO is below this value on average.`,
	},
}
