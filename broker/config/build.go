package config

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/strait-io/strait/broker/configdef"
)

// build fills the typed fields from canonical values and checks the keys
// against each other, in the order of KafkaConfig.validateValues; the
// first failed check is the error, naming its keys.
func (c *Config) build(v values) error {
	// Identity and roles.
	c.NodeID = v.i32("node.id")
	c.ClusterID = v.str("cluster.id")
	if v.i32("broker.id") != c.NodeID {
		return errors.New("You must set `node.id` to the same value as `broker.id`.")
	}
	if c.NodeID < 0 {
		return fmt.Errorf("node.id must be at least 0, not %d", c.NodeID)
	}
	roles := configdef.SplitList(v.str("process.roles"))
	seen := map[string]bool{}
	for _, r := range roles {
		if seen[r] {
			return fmt.Errorf("Duplicate role names found in `process.roles`: %s", strings.Join(roles, ","))
		}
		seen[r] = true
	}
	c.Roles = Roles{Broker: seen["broker"], Controller: seen["controller"]}
	if !c.Roles.Broker && !c.Roles.Controller {
		return errors.New("process.roles must contain broker, controller or both")
	}
	c.BrokerRack = v.str("broker.rack")

	// Log time settings (KafkaConfig's requires on the resolved values).
	td := v.src.TopicDefaults()
	if n, _ := strconv.ParseInt(td["segment.ms"], 10, 64); n < 1 {
		return errors.New("log.roll.ms must be greater than or equal to 1")
	}
	if n, _ := strconv.ParseInt(td["segment.jitter.ms"], 10, 64); n < 0 {
		return errors.New("log.roll.jitter.ms must be greater than or equal to 0")
	}
	if n, _ := strconv.ParseInt(td["retention.ms"], 10, 64); n < 1 && n != -1 {
		return errors.New("log.retention.ms must be unlimited (-1) or, greater than or equal to 1")
	}

	// Log dirs: log.dirs, else log.dir.
	dirs := v.str("log.dir")
	if v.set("log.dirs") {
		dirs = v.str("log.dirs")
	}
	for _, d := range configdef.SplitList(dirs) {
		if d != "" {
			c.LogDirs = append(c.LogDirs, d)
		}
	}
	if len(c.LogDirs) == 0 {
		return errors.New("At least one log directory must be defined via log.dirs or log.dir.")
	}
	c.MetadataLogDir = v.str("metadata.log.dir")
	if c.MetadataLogDir == "" {
		c.MetadataLogDir = c.LogDirs[0]
	}

	if err := c.buildListeners(v); err != nil {
		return err
	}
	if err := c.buildConnectionLimits(v); err != nil {
		return err
	}
	c.ConnectionsMaxIdleMs = v.i64("connections.max.idle.ms")
	if err := c.buildSASL(); err != nil {
		return err
	}
	if err := c.buildTLS(); err != nil {
		return err
	}
	if err := c.buildAuthorizer(v); err != nil {
		return err
	}

	c.NumPartitions = v.i32("num.partitions")
	c.DefaultReplicationFactor = v.i32("default.replication.factor")
	c.AutoCreateTopicsEnable = v.boolean("auto.create.topics.enable")
	c.DeleteTopicEnable = v.boolean("delete.topic.enable")
	c.MessageMaxBytes = v.i32("message.max.bytes")
	c.MinInsyncReplicas = v.i32("min.insync.replicas")
	c.SocketRequestMaxBytes = v.i32("socket.request.max.bytes")
	c.MaxRequestPartitionSizeLimit = v.i32("max.request.partition.size.limit")
	if v.set("queued.max.request.bytes") {
		c.QueuedMaxRequestBytes = v.i64("queued.max.request.bytes")
		if c.QueuedMaxRequestBytes <= 0 {
			c.QueuedMaxRequestBytes = -1 // Kafka: anything but a positive value is unbounded
		}
	}
	c.NumNetworkThreads = v.i32("num.network.threads")
	c.RecoveryThreadsPerDataDir = v.i32("num.recovery.threads.per.data.dir")
	c.QuotaWindowNum, c.QuotaWindowSizeSeconds = v.i32("quota.window.num"), v.i32("quota.window.size.seconds")
	c.MetricsListener = v.str("metrics.listener")
	c.MetricsPprofEnable = v.boolean("metrics.pprof.enable")
	if c.MetricsPprofEnable && c.MetricsListener == "" {
		// The profiles are served on the metrics listener only; asked for
		// with none, they would silently not be there.
		return errors.New("metrics.pprof.enable=true needs metrics.listener (the profiles are served on it), which is empty")
	}
	c.FetchMaxBytes = v.i32("fetch.max.bytes")
	c.MaxIncrementalFetchSessionCacheSlots = v.i32("max.incremental.fetch.session.cache.slots")
	c.LogRetentionCheckIntervalMs = v.i64("log.retention.check.interval.ms")
	c.LogFlushOffsetCheckpointIntervalMs = v.i32("log.flush.offset.checkpoint.interval.ms")
	c.LogFlushStartOffsetCheckpointIntervalMs = v.i32("log.flush.start.offset.checkpoint.interval.ms")
	c.ProducerIDExpirationMs = v.i32("producer.id.expiration.ms")
	c.Group = GroupConfig{
		InitialRebalanceDelayMs:         v.i32("group.initial.rebalance.delay.ms"),
		MinSessionTimeoutMs:             v.i32("group.min.session.timeout.ms"),
		MaxSessionTimeoutMs:             v.i32("group.max.session.timeout.ms"),
		MaxSize:                         v.i32("group.max.size"),
		OffsetMetadataMaxBytes:          v.i32("offset.metadata.max.bytes"),
		OffsetsLoadBufferSize:           v.i32("offsets.load.buffer.size"),
		OffsetsTopicNumPartitions:       v.i32("offsets.topic.num.partitions"),
		OffsetsTopicReplicationFactor:   int16(v.i64("offsets.topic.replication.factor")),
		OffsetsTopicSegmentBytes:        v.i32("offsets.topic.segment.bytes"),
		OffsetsTopicCompressionCodec:    int8(v.i64("offsets.topic.compression.codec")),
		OffsetsRetentionMs:              v.i64("offsets.retention.minutes") * 60 * 1000,
		OffsetsRetentionCheckIntervalMs: v.i64("offsets.retention.check.interval.ms"),
		OffsetsCommitTimeoutMs:          v.i32("offsets.commit.timeout.ms"),

		ConsumerSessionTimeoutMs:       v.i32("group.consumer.session.timeout.ms"),
		ConsumerMinSessionTimeoutMs:    v.i32("group.consumer.min.session.timeout.ms"),
		ConsumerMaxSessionTimeoutMs:    v.i32("group.consumer.max.session.timeout.ms"),
		ConsumerHeartbeatIntervalMs:    v.i32("group.consumer.heartbeat.interval.ms"),
		ConsumerMinHeartbeatIntervalMs: v.i32("group.consumer.min.heartbeat.interval.ms"),
		ConsumerMaxHeartbeatIntervalMs: v.i32("group.consumer.max.heartbeat.interval.ms"),
		ConsumerMaxSize:                v.i32("group.consumer.max.size"),
		ConsumerAssignors:              consumerAssignorNames(configdef.SplitList(v.str("group.consumer.assignors"))),
		ConsumerMigrationPolicy:        strings.ToLower(v.str("group.consumer.migration.policy")),
	}
	if err := c.Group.validateConsumer(); err != nil {
		return err
	}
	var err error
	if c.ShareGroup, err = buildShareGroup(v); err != nil {
		return err
	}
	c.Txn = TxnConfig{
		StateLogNumPartitions:       v.i32("transaction.state.log.num.partitions"),
		StateLogReplicationFactor:   int16(v.i64("transaction.state.log.replication.factor")),
		StateLogMinISR:              v.i32("transaction.state.log.min.isr"),
		StateLogSegmentBytes:        v.i32("transaction.state.log.segment.bytes"),
		StateLogLoadBufferSize:      v.i32("transaction.state.log.load.buffer.size"),
		MaxTimeoutMs:                v.i32("transaction.max.timeout.ms"),
		IDExpirationMs:              v.i32("transactional.id.expiration.ms"),
		AbortTimedOutIntervalMs:     v.i32("transaction.abort.timed.out.transaction.cleanup.interval.ms"),
		RemoveExpiredIntervalMs:     v.i32("transaction.remove.expired.transaction.cleanup.interval.ms"),
		PartitionVerificationEnable: v.boolean("transaction.partition.verification.enable"),
	}
	c.Share = ShareCoordinatorConfig{
		StateTopicNumPartitions:          v.i32("share.coordinator.state.topic.num.partitions"),
		StateTopicReplicationFactor:      int16(v.i64("share.coordinator.state.topic.replication.factor")),
		StateTopicMinISR:                 int16(v.i64("share.coordinator.state.topic.min.isr")),
		StateTopicSegmentBytes:           v.i32("share.coordinator.state.topic.segment.bytes"),
		SnapshotUpdateRecordsPerSnapshot: v.i32("share.coordinator.snapshot.update.records.per.snapshot"),
		LoadBufferSize:                   v.i32("share.coordinator.load.buffer.size"),
		WriteTimeoutMs:                   v.i32("share.coordinator.write.timeout.ms"),
		StateTopicPruneIntervalMs:        v.i32("share.coordinator.state.topic.prune.interval.ms"),
		ColdPartitionSnapshotIntervalMs:  v.i32("share.coordinator.cold.partition.snapshot.interval.ms"),
	}
	c.Cluster = ClusterConfig{
		BrokerHeartbeatIntervalMs:                v.i32("broker.heartbeat.interval.ms"),
		BrokerSessionTimeoutMs:                   v.i32("broker.session.timeout.ms"),
		ControlledShutdownEnable:                 v.boolean("controlled.shutdown.enable"),
		AutoLeaderRebalanceEnable:                v.boolean("auto.leader.rebalance.enable"),
		LeaderImbalanceCheckIntervalSeconds:      v.i64("leader.imbalance.check.interval.seconds"),
		ReplicaLagTimeMaxMs:                      v.i64("replica.lag.time.max.ms"),
		ReplicaFetchWaitMaxMs:                    v.i32("replica.fetch.wait.max.ms"),
		ReplicaFetchMinBytes:                     v.i32("replica.fetch.min.bytes"),
		ReplicaFetchCoalesceMinBytes:             v.i32("replica.fetch.coalesce.min.bytes"),
		ReplicaFetchCoalesceWaitMs:               v.i32("replica.fetch.coalesce.wait.ms"),
		ReplicaFetchMaxBytes:                     v.i32("replica.fetch.max.bytes"),
		ReplicaFetchResponseMaxBytes:             v.i32("replica.fetch.response.max.bytes"),
		ReplicaFetchBackoffMs:                    v.i32("replica.fetch.backoff.ms"),
		ReplicaSocketTimeoutMs:                   v.i32("replica.socket.timeout.ms"),
		ReplicaHighWatermarkCheckpointIntervalMs: v.i64("replica.high.watermark.checkpoint.interval.ms"),
		ReplicationQuotaWindowNum:                v.i32("replication.quota.window.num"),
		ReplicationQuotaWindowSizeSeconds:        v.i32("replication.quota.window.size.seconds"),
	}
	c.Mirror = MirrorConfig{
		StateTopicNumPartitions:        v.i32("mirror.state.topic.num.partitions"),
		StateTopicReplicationFactor:    int16(v.i64("mirror.state.topic.replication.factor")),
		FailedRetryInitialBackoffMs:    v.i64("mirror.failed.retry.initial.backoff.ms"),
		FailedRetryMaxBackoffMs:        v.i64("mirror.failed.retry.max.backoff.ms"),
		FailedRetryMaxAttempts:         v.i32("mirror.failed.retry.max.attempts"),
		CoordinatorWriteTimeoutMs:      v.i32("mirror.coordinator.write.timeout.ms"),
		CoordinatorLoadBufferSizeBytes: v.i32("mirror.coordinator.load.buffer.size"),
	}
	if c.Mirror.FailedRetryMaxBackoffMs < c.Mirror.FailedRetryInitialBackoffMs {
		return fmt.Errorf("mirror.failed.retry.max.backoff.ms (%d) must be at least mirror.failed.retry.initial.backoff.ms (%d)",
			c.Mirror.FailedRetryMaxBackoffMs, c.Mirror.FailedRetryInitialBackoffMs)
	}

	log, err := configdef.EffectiveLogConfig(v.src, nil)
	if err != nil {
		return err
	}
	c.Log = log
	return nil
}

// buildListeners parses and cross-checks the quorum and listener keys
// (KafkaConfig: listeners, effectiveAdvertisedBrokerListeners,
// effectiveAdvertisedControllerListeners, the KRaft role checks and the
// inter-broker listener).
func (c *Config) buildListeners(v values) error {
	voters, err := configdef.ParseVoters(v.str("controller.quorum.voters"))
	if err != nil {
		return fmt.Errorf("controller.quorum.voters: %w", err)
	}
	c.QuorumVoters = voters
	voterIDs := make([]int32, 0, len(voters))
	for _, vo := range voters {
		voterIDs = append(voterIDs, vo.ID)
	}
	sort.Slice(voterIDs, func(i, j int) bool { return voterIDs[i] < voterIDs[j] })
	inVoters := false
	for _, id := range voterIDs {
		inVoters = inVoters || id == c.NodeID
	}
	if len(voters) == 0 {
		return errors.New("controller.quorum.voters must list the controllers as id@host:port (Strait has no controller.quorum.bootstrap.servers)")
	}

	for _, n := range configdef.SplitList(v.str("controller.listener.names")) {
		if n != "" {
			c.ControllerListenerNames = append(c.ControllerListenerNames, strings.ToUpper(n))
		}
	}
	isController := func(name string) bool {
		for _, n := range c.ControllerListenerNames {
			if n == name {
				return true
			}
		}
		return false
	}

	protocols, err := parseProtocolMap(v.str("listener.security.protocol.map"))
	if err != nil {
		return err
	}
	c.SecurityProtocols = effectiveProtocolMap(protocols, v.set("listener.security.protocol.map"),
		v.str("listeners"), c.ControllerListenerNames)

	c.Listeners, err = parseListeners("listeners", v.str("listeners"), c.SecurityProtocols, true)
	if err != nil {
		return err
	}
	advertised := c.Listeners
	if v.set("advertised.listeners") {
		advertised, err = parseListeners("advertised.listeners", v.str("advertised.listeners"), c.SecurityProtocols, false)
		if err != nil {
			return err
		}
	}
	listenerNames := map[string]bool{}
	for _, l := range c.Listeners {
		listenerNames[l.Name] = true
	}
	for _, a := range advertised {
		if !isController(a.Name) {
			c.AdvertisedListeners = append(c.AdvertisedListeners, a)
		}
	}
	for _, n := range c.ControllerListenerNames {
		if ep, ok := findEndpoint(advertised, n); ok {
			c.AdvertisedControllerListeners = append(c.AdvertisedControllerListeners, ep)
		} else if ep, ok := findEndpoint(c.Listeners, n); ok {
			c.AdvertisedControllerListeners = append(c.AdvertisedControllerListeners, ep)
		}
	}
	votersText := "controller.quorum.voters=" + formatIDs(voterIDs)

	switch {
	case c.Roles.Broker && !c.Roles.Controller:
		if inVoters {
			return fmt.Errorf("If process.roles contains just the 'broker' role, the node id %d must not be included in the set of voters %s", c.NodeID, votersText)
		}
		if len(c.ControllerListenerNames) == 0 {
			return errors.New("controller.listener.names must contain at least one value when running KRaft with just the broker role")
		}
		for _, n := range c.ControllerListenerNames {
			if listenerNames[n] {
				return errors.New("controller.listener.names must not contain a value appearing in the 'listeners' configuration when running KRaft with just the broker role")
			}
			if _, ok := c.SecurityProtocols[n]; !ok {
				return fmt.Errorf("Controller listener with name %s defined in controller.listener.names not found in listener.security.protocol.map", n)
			}
		}
	case c.Roles.Controller:
		if !c.Roles.Broker && len(c.AdvertisedControllerListeners) != len(c.Listeners) {
			return errors.New("The listeners config must only contain KRaft controller listeners from controller.listener.names when process.roles=controller")
		}
		if !inVoters {
			return fmt.Errorf("If process.roles contains the 'controller' role, the node id %d must be included in the set of voters %s", c.NodeID, votersText)
		}
		if len(c.AdvertisedControllerListeners) == 0 {
			return errors.New("controller.listener.names must contain at least one value appearing in the 'listeners' configuration when running the KRaft controller role")
		}
		for _, n := range c.ControllerListenerNames {
			if !listenerNames[n] {
				return errors.New("controller.listener.names must only contain values appearing in the 'listeners' configuration when running the KRaft controller role")
			}
		}
	}

	if w := c.voterAddressWarning(); w != "" {
		c.Warnings = append(c.Warnings, w)
	}

	if err := c.interBrokerListener(v); err != nil {
		return err
	}
	if c.Roles.Broker {
		if len(c.AdvertisedListeners) == 0 {
			return errors.New("There must be at least one broker advertised listener. Perhaps all listeners appear in controller.listener.names?")
		}
		names := make([]string, 0, len(c.AdvertisedListeners))
		found := false
		for _, a := range c.AdvertisedListeners {
			names = append(names, a.Name)
			found = found || a.Name == c.InterBrokerListenerName
		}
		if !found {
			return fmt.Errorf("inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are %s", strings.Join(names, ","))
		}
		for _, a := range c.AdvertisedListeners {
			if !listenerNames[a.Name] {
				return fmt.Errorf("advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. Found %s", a.Name)
			}
		}
	}
	for _, eps := range [][]Endpoint{c.AdvertisedListeners, c.AdvertisedControllerListeners} {
		for _, ep := range eps {
			if ep.Host == "0.0.0.0" {
				return errors.New("advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.")
			}
		}
	}
	return nil
}

// voterAddressWarning checks a controller's own entry in
// controller.quorum.voters against its controller listeners. The other
// voters, and this node's own broker, reach the controller only at the
// voters address; one whose port no controller listener binds leaves the
// node unable to register, and the quorum without this voter. Kafka does
// not check this; it is a warning, not an error, because a forwarded port
// can make such a configuration work.
func (c *Config) voterAddressWarning() string {
	if !c.Roles.Controller {
		return ""
	}
	var self *configdef.Voter
	for i := range c.QuorumVoters {
		if c.QuorumVoters[i].ID == c.NodeID {
			self = &c.QuorumVoters[i]
		}
	}
	if self == nil {
		return ""
	}
	var bound []string
	for _, l := range c.Listeners {
		if !slices.Contains(c.ControllerListenerNames, l.Name) {
			continue
		}
		if l.Port == self.Port || l.Port == 0 {
			return ""
		}
		bound = append(bound, fmt.Sprintf("%s://%s", l.Name, net.JoinHostPort(l.Host, strconv.Itoa(l.Port))))
	}
	if len(bound) == 0 {
		return ""
	}
	return fmt.Sprintf("controller.quorum.voters gives this node (%d) the address %s, but no controller listener binds port %d (%s): the other voters and this node's broker connect to %s",
		c.NodeID, net.JoinHostPort(self.Host, strconv.Itoa(self.Port)), self.Port, strings.Join(bound, ","), net.JoinHostPort(self.Host, strconv.Itoa(self.Port)))
}

// interBrokerListener resolves inter.broker.listener.name, or the listener
// named after security.inter.broker.protocol; setting both is an error.
func (c *Config) interBrokerListener(v values) error {
	if v.set("inter.broker.listener.name") {
		if v.set("security.inter.broker.protocol") {
			return errors.New("Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.")
		}
		c.InterBrokerListenerName = strings.ToUpper(v.str("inter.broker.listener.name"))
		if _, ok := c.SecurityProtocols[c.InterBrokerListenerName]; !ok {
			return fmt.Errorf("Listener with name %s defined in inter.broker.listener.name not found in listener.security.protocol.map.", c.InterBrokerListenerName)
		}
		return nil
	}
	c.InterBrokerListenerName = v.str("security.inter.broker.protocol")
	return nil
}

func findEndpoint(eps []Endpoint, name string) (Endpoint, bool) {
	for _, e := range eps {
		if e.Name == name {
			return e, true
		}
	}
	return Endpoint{}, false
}

// formatIDs prints ids as Scala prints a Set: Set(1, 2, 3).
func formatIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return "Set(" + strings.Join(s, ", ") + ")"
}

// consumerAssignorNames maps group.consumer.assignors' entries to the
// assignors' names: Kafka takes a class name or the short name.
func consumerAssignorNames(entries []string) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		switch e {
		case "org.apache.kafka.coordinator.group.assignor.UniformAssignor":
			e = "uniform"
		case "org.apache.kafka.coordinator.group.assignor.RangeAssignor":
			e = "range"
		}
		out = append(out, e)
	}
	return out
}

// validateConsumer checks the group.consumer.* timeouts against each other
// as Kafka's GroupCoordinatorConfig does, with its messages.
func (g GroupConfig) validateConsumer() error {
	return validateGroupTimeouts("group.consumer", g.ConsumerSessionTimeoutMs, g.ConsumerMinSessionTimeoutMs, g.ConsumerMaxSessionTimeoutMs,
		g.ConsumerHeartbeatIntervalMs, g.ConsumerMinHeartbeatIntervalMs, g.ConsumerMaxHeartbeatIntervalMs)
}
