package configdef

// shareGroupDefs are the group.share.* broker configs of KIP-932 share
// groups, with Kafka's types, defaults and ranges (GroupCoordinatorConfig
// and ShareGroupConfig, Kafka 4.1). The group coordinator reads the
// session, heartbeat, size and assignor keys; the record lock, delivery
// count and record lock count keys are the share partitions'.
var shareGroupDefs = []Def{
	{
		Name: "group.share.session.timeout.ms", Type: Int, Default: str("45000"),
		Validate: atLeast(1),
		Doc:      `How long a share group member may go without a ShareGroupHeartbeat before it is fenced.`,
	},
	{
		Name: "group.share.min.session.timeout.ms", Type: Int, Default: str("45000"),
		Validate: atLeast(1),
		Doc:      `The least group.share.session.timeout.ms may be.`,
	},
	{
		Name: "group.share.max.session.timeout.ms", Type: Int, Default: str("60000"),
		Validate: atLeast(1),
		Doc:      `The most group.share.session.timeout.ms may be.`,
	},
	{
		Name: "group.share.heartbeat.interval.ms", Type: Int, Default: str("5000"),
		Validate: atLeast(1),
		Doc:      `How often share group members are told to heartbeat; below the session timeout.`,
	},
	{
		Name: "group.share.min.heartbeat.interval.ms", Type: Int, Default: str("5000"),
		Validate: atLeast(1),
		Doc:      `The least group.share.heartbeat.interval.ms may be.`,
	},
	{
		Name: "group.share.max.heartbeat.interval.ms", Type: Int, Default: str("15000"),
		Validate: atLeast(1),
		Doc:      `The most group.share.heartbeat.interval.ms may be.`,
	},
	{
		Name: "group.share.max.size", Type: Int, Default: str("200"),
		Validate: between(1, 1000),
		Doc:      `The most members a share group may have.`,
	},
	{
		Name: "group.share.assignors", Type: List, Default: str("simple"),
		Validate: validList(true, "simple", "org.apache.kafka.coordinator.group.assignor.SimpleAssignor"),
		Doc:      `The server-side assignor of share groups: exactly one, simple.`,
	},
	{
		Name: "group.share.record.lock.duration.ms", Type: Int, Default: str("30000"),
		Validate: between(1000, 3600000),
		Doc:      `How long a share group member holds the records it acquired before they may go to another.`,
	},
	{
		Name: "group.share.min.record.lock.duration.ms", Type: Int, Default: str("15000"),
		Validate: between(1000, 30000),
		Doc:      `The least group.share.record.lock.duration.ms (and a group's share.record.lock.duration.ms) may be.`,
	},
	{
		Name: "group.share.max.record.lock.duration.ms", Type: Int, Default: str("60000"),
		Validate: between(30000, 3600000),
		Doc:      `The most group.share.record.lock.duration.ms (and a group's share.record.lock.duration.ms) may be.`,
	},
	{
		Name: "group.share.delivery.count.limit", Type: Int, Default: str("5"),
		Validate: between(2, 10),
		Doc:      `How many times a record of a share group is delivered before it is archived.`,
	},
	{
		Name: "group.share.partition.max.record.locks", Type: Int, Default: str("2000"),
		Validate: between(100, 10000),
		Doc:      `The most records of a share partition acquired and not yet acknowledged at once.`,
	},
}
