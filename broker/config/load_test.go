package config

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/strait-io/strait/broker/configdef"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// TestDefaults pins the configuration of `strait serve` with no flags: the
// issue's single-node contract, and Kafka's defaults elsewhere.
func TestDefaults(t *testing.T) {
	c, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	plaintext := Endpoint{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092, SecurityProtocol: Plaintext}
	controller := Endpoint{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9093, SecurityProtocol: Plaintext}
	want := &Config{
		Raw:                           map[string]string{},
		NodeID:                        1,
		Roles:                         Roles{Broker: true, Controller: true},
		ControllerListenerNames:       []string{"CONTROLLER"},
		QuorumVoters:                  []configdef.Voter{{ID: 1, Host: "127.0.0.1", Port: 9093}},
		MetadataLogDir:                "./data",
		Listeners:                     []Endpoint{plaintext, controller},
		AdvertisedListeners:           []Endpoint{plaintext},
		AdvertisedControllerListeners: []Endpoint{controller},
		SecurityProtocols: map[string]SecurityProtocol{
			"PLAINTEXT": Plaintext, "SSL": SSL, "SASL_PLAINTEXT": SASLPlaintext, "SASL_SSL": SASLSSL,
			"CONTROLLER": Plaintext, // the KRaft default for controller listeners
		},
		InterBrokerListenerName:                 "PLAINTEXT",
		LogDirs:                                 []string{"./data"},
		NumPartitions:                           1,
		DefaultReplicationFactor:                1,
		AutoCreateTopicsEnable:                  true,
		DeleteTopicEnable:                       true,
		MessageMaxBytes:                         1048588,
		MinInsyncReplicas:                       1,
		SocketRequestMaxBytes:                   104857600,
		MaxRequestPartitionSizeLimit:            2000,
		ConnectionsMaxIdleMs:                    600000,
		MetricsListener:                         "127.0.0.1:9644",
		RecoveryThreadsPerDataDir:               2,
		QuotaWindowNum:                          11,
		QuotaWindowSizeSeconds:                  1,
		MaxConnections:                          -1,
		MaxConnectionsPerIP:                     2147483647,
		MaxConnectionsPerIPOverrides:            map[string]int32{},
		FetchMaxBytes:                           57671680,
		MaxIncrementalFetchSessionCacheSlots:    1000,
		LogRetentionCheckIntervalMs:             300000,
		LogFlushOffsetCheckpointIntervalMs:      60000,
		LogFlushStartOffsetCheckpointIntervalMs: 60000,
		ProducerIDExpirationMs:                  86400000,
		Group: GroupConfig{
			InitialRebalanceDelayMs:         3000,
			MinSessionTimeoutMs:             6000,
			MaxSessionTimeoutMs:             1800000,
			MaxSize:                         2147483647,
			OffsetMetadataMaxBytes:          4096,
			OffsetsLoadBufferSize:           5242880,
			OffsetsTopicNumPartitions:       50,
			OffsetsTopicReplicationFactor:   3,
			OffsetsTopicSegmentBytes:        104857600,
			OffsetsTopicCompressionCodec:    0,
			OffsetsRetentionMs:              7 * 24 * 3600 * 1000,
			OffsetsRetentionCheckIntervalMs: 600000,
			OffsetsCommitTimeoutMs:          5000,
			ConsumerSessionTimeoutMs:        45000,
			ConsumerMinSessionTimeoutMs:     45000,
			ConsumerMaxSessionTimeoutMs:     60000,
			ConsumerHeartbeatIntervalMs:     5000,
			ConsumerMinHeartbeatIntervalMs:  5000,
			ConsumerMaxHeartbeatIntervalMs:  15000,
			ConsumerMaxSize:                 2147483647,
			ConsumerAssignors:               []string{"uniform", "range"},
			ConsumerMigrationPolicy:         "bidirectional",
		},
		ShareGroup: ShareGroupConfig{
			SessionTimeoutMs: 45000, MinSessionTimeoutMs: 45000, MaxSessionTimeoutMs: 60000,
			HeartbeatIntervalMs: 5000, MinHeartbeatIntervalMs: 5000, MaxHeartbeatIntervalMs: 15000,
			MaxSize: 200, Assignors: []string{"simple"},
			RecordLockDurationMs: 30000, MinRecordLockDurationMs: 15000, MaxRecordLockDurationMs: 60000,
			DeliveryCountLimit: 5, PartitionMaxRecordLocks: 2000,
		},
		Txn: TxnConfig{
			StateLogNumPartitions: 50, StateLogReplicationFactor: 3, StateLogMinISR: 2,
			StateLogSegmentBytes: 104857600, StateLogLoadBufferSize: 5242880, MaxTimeoutMs: 900000,
			IDExpirationMs: 604800000, AbortTimedOutIntervalMs: 10000, RemoveExpiredIntervalMs: 3600000,
			PartitionVerificationEnable: true,
		},
		Share: ShareCoordinatorConfig{
			StateTopicNumPartitions: 50, StateTopicReplicationFactor: 3, StateTopicMinISR: 2,
			StateTopicSegmentBytes: 104857600, SnapshotUpdateRecordsPerSnapshot: 500, LoadBufferSize: 5242880,
			WriteTimeoutMs: 5000, StateTopicPruneIntervalMs: 300000, ColdPartitionSnapshotIntervalMs: 300000,
		},
		Cluster: ClusterConfig{
			BrokerHeartbeatIntervalMs: 2000, BrokerSessionTimeoutMs: 9000,
			ControlledShutdownEnable: true, AutoLeaderRebalanceEnable: true, LeaderImbalanceCheckIntervalSeconds: 300,
			ReplicaLagTimeMaxMs: 30000, ReplicaFetchWaitMaxMs: 500, ReplicaFetchMinBytes: 1,
			ReplicaFetchCoalesceMinBytes: 131072, ReplicaFetchCoalesceWaitMs: 3,
			ReplicaFetchMaxBytes: 1 << 20, ReplicaFetchResponseMaxBytes: 10 << 20, ReplicaFetchBackoffMs: 1000,
			ReplicaSocketTimeoutMs: 30000, ReplicaHighWatermarkCheckpointIntervalMs: 5000,
			ReplicationQuotaWindowNum: 11, ReplicationQuotaWindowSizeSeconds: 1,
		},
		Mirror: MirrorConfig{
			StateTopicNumPartitions: 50, StateTopicReplicationFactor: 3,
			FailedRetryInitialBackoffMs: 100, FailedRetryMaxBackoffMs: 300000, FailedRetryMaxAttempts: 20,
			CoordinatorWriteTimeoutMs: 5000, CoordinatorLoadBufferSizeBytes: 5242880,
		},
		Log: storage.DefaultLogConfig(),
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("defaults\n got %+v\nwant %+v", c, want)
	}
	// The listener strings as a user reads them in logs.
	if got := c.Listeners[0].String() + " " + c.Listeners[1].Addr(); got != "PLAINTEXT://127.0.0.1:9092 127.0.0.1:9093" {
		t.Fatalf("listener strings %q", got)
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadFileAndOverrides: --set beats the file; the file's Kafka-only keys
// are accepted and listed; node.id fills broker.id as in Kafka.
func TestLoadFileAndOverrides(t *testing.T) {
	path := writeFile(t, `
# A Kafka 4 KRaft combined-mode file.
process.roles=broker,controller
node.id=3
controller.quorum.voters=3@localhost:19093
listeners=PLAINTEXT://localhost:19092,CONTROLLER://localhost:19093
advertised.listeners=PLAINTEXT://kafka.example.com:19092
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=/var/lib/kafka/a, /var/lib/kafka/b
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
log.cleaner.enable=true
`)
	c, err := Load(path, []string{"num.partitions=6", "log.retention.hours=1", "broker.rack=r1", "metrics.listener="})
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeID != 3 || c.NumPartitions != 6 || c.BrokerRack != "r1" || c.MetricsListener != "" {
		t.Fatalf("node %d partitions %d rack %q metrics %q", c.NodeID, c.NumPartitions, c.BrokerRack, c.MetricsListener)
	}
	if c.Log.RetentionMs != 3600000 {
		t.Fatalf("retention %d: the override's hour", c.Log.RetentionMs)
	}
	if !slices.Equal(c.LogDirs, []string{"/var/lib/kafka/a", "/var/lib/kafka/b"}) || c.MetadataLogDir != "/var/lib/kafka/a" {
		t.Fatalf("log dirs %q metadata %q", c.LogDirs, c.MetadataLogDir)
	}
	if c.Group.OffsetsTopicReplicationFactor != 1 {
		t.Fatalf("offsets RF %d", c.Group.OffsetsTopicReplicationFactor)
	}
	if c.NumNetworkThreads != 3 {
		t.Fatalf("num.network.threads %d, want the file's 3", c.NumNetworkThreads)
	}
	if c.RecoveryThreadsPerDataDir != 1 {
		t.Fatalf("num.recovery.threads.per.data.dir %d, want the file's 1", c.RecoveryThreadsPerDataDir)
	}
	if c.Txn.StateLogReplicationFactor != 1 || c.Txn.StateLogMinISR != 1 {
		t.Fatalf("transaction state log RF %d, min ISR %d: want the file's 1 and 1", c.Txn.StateLogReplicationFactor, c.Txn.StateLogMinISR)
	}
	wantIgnored := []string{
		"num.io.threads", "socket.receive.buffer.bytes", "socket.send.buffer.bytes",
	}
	if !slices.Equal(c.Ignored, wantIgnored) {
		t.Fatalf("ignored\n got %q\nwant %q", c.Ignored, wantIgnored)
	}
	if c.Raw["broker.id"] != "3" || c.Raw["num.partitions"] != "6" || c.Raw["log.dirs"] != "/var/lib/kafka/a, /var/lib/kafka/b" {
		t.Fatalf("raw %q", c.Raw)
	}
	wantAdv := []Endpoint{{Name: "PLAINTEXT", Host: "kafka.example.com", Port: 19092, SecurityProtocol: Plaintext}}
	if !reflect.DeepEqual(c.AdvertisedListeners, wantAdv) {
		t.Fatalf("advertised %+v", c.AdvertisedListeners)
	}
	wantCtl := []Endpoint{{Name: "CONTROLLER", Host: "localhost", Port: 19093, SecurityProtocol: Plaintext}}
	if !reflect.DeepEqual(c.AdvertisedControllerListeners, wantCtl) {
		t.Fatalf("controller %+v", c.AdvertisedControllerListeners)
	}
	if !maps.Equal(c.SecurityProtocols, map[string]SecurityProtocol{"CONTROLLER": Plaintext, "PLAINTEXT": Plaintext}) {
		t.Fatalf("explicit map must be used as is: %v", c.SecurityProtocols)
	}
}

func TestLoadErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.properties")
	_, err := Load(missing, nil)
	if err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	bad := writeFile(t, "a=1\nb=\\u12")
	_, err = Load(bad, nil)
	if err == nil || err.Error() != bad+`: config: properties line 2: malformed \uxxxx encoding` {
		t.Fatalf("bad file: %v", err)
	}
	for _, o := range []string{"num.partitions", "=3", " =3"} {
		_, err = Load("", []string{o})
		if err == nil || err.Error() != `config: override "`+o+`" is not key=value` {
			t.Fatalf("override %q: %v", o, err)
		}
	}
	// An empty value and an '=' in the value are fine.
	c, err := Load("", []string{"broker.rack=a=b", "metrics.listener="})
	if err != nil || c.BrokerRack != "a=b" || c.MetricsListener != "" {
		t.Fatalf("%+v %v", c, err)
	}
}

// TestErrorsNameTheKey: each rejected configuration's message, exactly.
func TestErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"num.partition": "3"}, `unknown configuration "num.partition" (did you mean "num.partitions"?)`},
		{map[string]string{"frobnicate.level": "3"}, `unknown configuration "frobnicate.level"`},
		{map[string]string{"retention.ms": "1"}, `unknown configuration "retention.ms"`},
		{map[string]string{"num.partitions": "three"}, "Invalid value three for configuration num.partitions: Not a number of type INT"},
		{map[string]string{"num.partitions": "0"}, "Invalid value 0 for configuration num.partitions: Value must be at least 1"},
		{map[string]string{"auto.create.topics.enable": "yes"}, "Invalid value yes for configuration auto.create.topics.enable: Expected value to be either true or false"},
		{map[string]string{"metrics.pprof.enable": "on"}, "Invalid value on for configuration metrics.pprof.enable: Expected value to be either true or false"},
		{map[string]string{"metrics.pprof.enable": "true", "metrics.listener": ""}, "metrics.pprof.enable=true needs metrics.listener (the profiles are served on it), which is empty"},
		{map[string]string{"log.cleanup.policy": "forever"}, "Invalid value forever for configuration log.cleanup.policy: String must be one of: compact, delete"},
		{map[string]string{"security.inter.broker.protocol": "TLS"}, "Invalid value TLS for configuration security.inter.broker.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"},
		{map[string]string{"controller.quorum.voters": "1@localhost"}, "Invalid value 1@localhost for configuration controller.quorum.voters: Failed to parse host name and port from entry 1@localhost for the configuration controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`."},
		// Every bad key is reported, in key order.
		{map[string]string{"zz.top": "1", "num.partitions": "x", "log.segment.bytes": "1"},
			"Invalid value 1 for configuration log.segment.bytes: Value must be at least 14\nInvalid value x for configuration num.partitions: Not a number of type INT\nunknown configuration \"zz.top\""},
		{map[string]string{"node.id": "2", "broker.id": "3"}, "You must set `node.id` to the same value as `broker.id`."},
		{map[string]string{"node.id": "-1", "controller.quorum.voters": "1@h:1"}, "node.id must be at least 0, not -1"},
		{map[string]string{"process.roles": ""}, "process.roles must contain broker, controller or both"},
		{map[string]string{"process.roles": "broker,broker"}, "Duplicate role names found in `process.roles`: broker,broker"},
		{map[string]string{"node.id": "2"}, "If process.roles contains the 'controller' role, the node id 2 must be included in the set of voters controller.quorum.voters=Set(1)"},
		{map[string]string{"process.roles": "broker", "listeners": "PLAINTEXT://:9092"}, "If process.roles contains just the 'broker' role, the node id 1 must not be included in the set of voters controller.quorum.voters=Set(1)"},
		{map[string]string{"process.roles": "broker", "node.id": "2", "listeners": "PLAINTEXT://:9092", "controller.listener.names": ""}, "controller.listener.names must contain at least one value when running KRaft with just the broker role"},
		{map[string]string{"process.roles": "broker", "node.id": "2"}, "controller.listener.names must not contain a value appearing in the 'listeners' configuration when running KRaft with just the broker role"},
		{map[string]string{"controller.quorum.voters": ""}, "controller.quorum.voters must list the controllers as id@host:port (Strait has no controller.quorum.bootstrap.servers)"},
		{map[string]string{"listeners": "PLAINTEXT://127.0.0.1:9092"}, "controller.listener.names must contain at least one value appearing in the 'listeners' configuration when running the KRaft controller role"},
		{map[string]string{"controller.listener.names": "CONTROLLER,OTHER"}, "controller.listener.names must only contain values appearing in the 'listeners' configuration when running the KRaft controller role"},
		{map[string]string{"process.roles": "controller"}, "The listeners config must only contain KRaft controller listeners from controller.listener.names when process.roles=controller"},
		{map[string]string{"listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9092"}, "listeners: Each listener must have a different port unless exactly one listener has an IPv4 address and the other IPv6 address, listeners: PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9092, port: 9092"},
		{map[string]string{"listeners": "PLAINTEXT://:9092,plaintext://:9094,CONTROLLER://:9093"}, "listeners: Each listener must have a different name, listeners: PLAINTEXT://:9092,plaintext://:9094,CONTROLLER://:9093"},
		{map[string]string{"listeners": "PLAINTEXT:9092"}, "listeners: Error creating broker listeners from 'PLAINTEXT:9092': Unable to parse PLAINTEXT:9092 to a broker endpoint"},
		{map[string]string{"listeners": "PLAINTEXT://:99999,CONTROLLER://:9093"}, "listeners: Error creating broker listeners from 'PLAINTEXT://:99999,CONTROLLER://:9093': port 99999 of PLAINTEXT://:99999 is not in 0..65535"},
		{map[string]string{"listeners": "CLIENT://:9092,CONTROLLER://:9093"}, "listeners: Error creating broker listeners from 'CLIENT://:9092,CONTROLLER://:9093': No security protocol defined for listener CLIENT"},
		{map[string]string{"listener.security.protocol.map": "CLIENT:TLS"}, "Invalid security protocol `TLS` defined in listener.security.protocol.map"},
		{map[string]string{"listener.security.protocol.map": "CLIENT"}, `Error parsing configuration property 'listener.security.protocol.map': entry "CLIENT" is not NAME:PROTOCOL`},
		{map[string]string{"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT"}, "listeners: Error creating broker listeners from 'PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093': No security protocol defined for listener CONTROLLER"},
		{map[string]string{"listeners": "PLAINTEXT://0.0.0.0:9092,CONTROLLER://127.0.0.1:9093"}, "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address."},
		{map[string]string{"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}, "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address."},
		{map[string]string{"advertised.listeners": "CONTROLLER://h:1"}, "There must be at least one broker advertised listener. Perhaps all listeners appear in controller.listener.names?"},
		{map[string]string{"advertised.listeners": "SSL://h:1"}, "inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are SSL"},
		{map[string]string{"advertised.listeners": "PLAINTEXT://h:1,SSL://h:2"}, "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. Found SSL"},
		{map[string]string{"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"}, "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set."},
		{map[string]string{"inter.broker.listener.name": "INTERNAL"}, "Listener with name INTERNAL defined in inter.broker.listener.name not found in listener.security.protocol.map."},
		{map[string]string{"log.dirs": " , "}, "At least one log directory must be defined via log.dirs or log.dir."},
		{map[string]string{"log.dir": ""}, "At least one log directory must be defined via log.dirs or log.dir."},
		{map[string]string{"log.roll.ms": "0"}, "log.roll.ms must be greater than or equal to 1"},
		{map[string]string{"log.roll.jitter.ms": "-1"}, "log.roll.jitter.ms must be greater than or equal to 0"},
		{map[string]string{"log.retention.ms": "0"}, "log.retention.ms must be unlimited (-1) or, greater than or equal to 1"},
		{map[string]string{"mirror.state.topic.num.partitions": "0"}, "Invalid value 0 for configuration mirror.state.topic.num.partitions: Value must be at least 1"},
		{map[string]string{"mirror.failed.retry.max.attempts": "-1"}, "Invalid value -1 for configuration mirror.failed.retry.max.attempts: Value must be at least 0"},
		{map[string]string{"group.consumer.heartbeat.interval.ms": "45000"}, "group.consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"},
		{map[string]string{"group.consumer.session.timeout.ms": "1000", "group.consumer.min.session.timeout.ms": "500", "group.consumer.heartbeat.interval.ms": "1000", "group.consumer.min.heartbeat.interval.ms": "100"},
			"group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"},
		{map[string]string{"group.share.heartbeat.interval.ms": "20000"}, "group.share.heartbeat.interval.ms must be less than or equal to group.share.max.heartbeat.interval.ms"},
		{map[string]string{"group.share.max.size": "1001"}, "Invalid value 1001 for configuration group.share.max.size: Value must be no more than 1000"},
		{map[string]string{"group.share.assignors": "simple,simple"}, "group.share.assignors must contain exactly one assignor, but found 2"},
		{map[string]string{"group.share.assignors": "uniform"}, "Invalid value uniform for configuration group.share.assignors: String must be one of: simple, org.apache.kafka.coordinator.group.assignor.SimpleAssignor"},
		{map[string]string{"group.share.record.lock.duration.ms": "10000"}, "group.share.record.lock.duration.ms must be greater than or equal to group.share.min.record.lock.duration.ms"},
		{map[string]string{"group.share.delivery.count.limit": "11"}, "Invalid value 11 for configuration group.share.delivery.count.limit: Value must be no more than 10"},
		{map[string]string{"group.consumer.migration.policy": "sideways"}, "Invalid value sideways for configuration group.consumer.migration.policy: String must be one of (case insensitive): disabled, upgrade, downgrade, bidirectional"},
		{map[string]string{"mirror.failed.retry.initial.backoff.ms": "2000", "mirror.failed.retry.max.backoff.ms": "1000"},
			"mirror.failed.retry.max.backoff.ms (1000) must be at least mirror.failed.retry.initial.backoff.ms (2000)"},
	} {
		_, err := New(tc.props)
		if err == nil || err.Error() != tc.want {
			t.Errorf("New(%v)\n got %v\nwant %s", tc.props, err, tc.want)
		}
	}
}

// TestKnownUnsupportedKeys: a key Kafka defines is accepted and listed in
// Ignored, whatever its value, and its value is kept for DescribeConfigs.
func TestKnownUnsupportedKeys(t *testing.T) {
	c, err := New(map[string]string{
		"num.io.threads":                           "not validated",
		"zookeeper.connect":                        "zk:2181",
		"listener.name.plaintext.ssl.key.password": "s",
		"background.threads":                       "2",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"background.threads", "listener.name.plaintext.ssl.key.password", "num.io.threads", "zookeeper.connect"}
	if !slices.Equal(c.Ignored, want) {
		t.Fatalf("ignored %q", c.Ignored)
	}
	if c.Raw["zookeeper.connect"] != "zk:2181" {
		t.Fatalf("raw %q", c.Raw)
	}
}

// TestTimeUnitPrecedence: log.retention.ms > .minutes > .hours and
// log.roll.ms > log.roll.hours, reaching the storage config.
func TestTimeUnitPrecedence(t *testing.T) {
	for _, tc := range []struct {
		props                      map[string]string
		retention, segment, jitter int64
	}{
		{nil, 604800000, 604800000, 0},
		{map[string]string{"log.retention.hours": "2"}, 7200000, 604800000, 0},
		{map[string]string{"log.retention.hours": "2", "log.retention.minutes": "3"}, 180000, 604800000, 0},
		{map[string]string{"log.retention.hours": "2", "log.retention.minutes": "3", "log.retention.ms": "4"}, 4, 604800000, 0},
		{map[string]string{"log.retention.hours": "-1"}, -1, 604800000, 0},
		{map[string]string{"log.roll.hours": "1", "log.roll.jitter.hours": "1"}, 604800000, 3600000, 3600000},
		{map[string]string{"log.roll.hours": "1", "log.roll.ms": "60000", "log.roll.jitter.ms": "10"}, 604800000, 60000, 10},
	} {
		c, err := New(tc.props)
		if err != nil {
			t.Fatalf("%v: %v", tc.props, err)
		}
		if c.Log.RetentionMs != tc.retention || c.Log.SegmentMs != tc.segment || c.Log.SegmentJitterMs != tc.jitter {
			t.Errorf("%v: retention %d segment %d jitter %d, want %d %d %d", tc.props,
				c.Log.RetentionMs, c.Log.SegmentMs, c.Log.SegmentJitterMs, tc.retention, tc.segment, tc.jitter)
		}
	}
}

func TestListenerVariants(t *testing.T) {
	c, err := New(map[string]string{
		"listeners":                      "INTERNAL://:9092,EXTERNAL://[::1]:9094,controller://127.0.0.1:9093",
		"listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
		"sasl.enabled.mechanisms":        "PLAIN",
		"inter.broker.listener.name":     "internal",
		"controller.listener.names":      "controller",
		"advertised.listeners":           "INTERNAL://broker-1:9092,EXTERNAL://[2001:db8::1]:9094",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Endpoint{
		{Name: "INTERNAL", Host: "", Port: 9092, SecurityProtocol: Plaintext},
		{Name: "EXTERNAL", Host: "::1", Port: 9094, SecurityProtocol: SASLPlaintext},
		{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9093, SecurityProtocol: Plaintext},
	}
	if !reflect.DeepEqual(c.Listeners, want) {
		t.Fatalf("listeners %+v", c.Listeners)
	}
	if c.InterBrokerListenerName != "INTERNAL" {
		t.Fatalf("inter-broker %q", c.InterBrokerListenerName)
	}
	if got := c.Listeners[0].Addr() + " " + c.AdvertisedListeners[1].String(); got != ":9092 EXTERNAL://[2001:db8::1]:9094" {
		t.Fatalf("addresses %q", got)
	}
	// Two listeners may share a port when one is IPv4 and the other IPv6.
	if _, err := New(map[string]string{"listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://[::1]:9092"}); err != nil {
		t.Fatal(err)
	}
	// Port 0 (any free port) may repeat: tests use it.
	if _, err := New(map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
		"controller.quorum.voters": "1@127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	// An SSL listener means the controller default mapping does not apply
	// (Kafka's rule), so CONTROLLER needs an explicit protocol.
	_, err = New(map[string]string{"listeners": "SSL://:9094,CONTROLLER://:9093", "security.inter.broker.protocol": "SSL"})
	if err == nil || !strings.HasSuffix(err.Error(), "No security protocol defined for listener CONTROLLER") {
		t.Fatalf("SSL listener: %v", err)
	}
	// A broker-only node with an external quorum.
	c, err = New(map[string]string{"process.roles": "broker", "node.id": "4", "listeners": "PLAINTEXT://:9092",
		"controller.quorum.voters": "1@c1:9093,2@c2:9093,3@c3:9093"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Roles != (Roles{Broker: true}) || len(c.QuorumVoters) != 3 || c.AdvertisedControllerListeners != nil {
		t.Fatalf("broker-only %+v", c)
	}
}

func TestEffectiveLogConfigOverlay(t *testing.T) {
	c, err := New(map[string]string{"log.retention.hours": "24", "log.segment.bytes": "1048576", "log.message.timestamp.type": "LogAppendTime"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := EffectiveLogConfig(c, map[string]string{"retention.ms": "1000", "max.message.bytes": "500"})
	if err != nil {
		t.Fatal(err)
	}
	want := storage.DefaultLogConfig()
	want.RetentionMs = 1000                   // topic
	want.SegmentBytes = 1048576               // broker
	want.MaxMessageBytes = 500                // topic
	want.TimestampType = record.LogAppendTime // broker
	if got != want {
		t.Fatalf("\n got %+v\nwant %+v", got, want)
	}
	if c.Log.RetentionMs != 86400000 || c.Log.SegmentBytes != 1048576 {
		t.Fatalf("broker log defaults %+v", c.Log)
	}
	if td := c.TopicDefaults(); td["retention.ms"] != "86400000" || td["segment.bytes"] != "1048576" {
		t.Fatalf("topic defaults %v", td)
	}
}

// TestVoterAddressWarning: a controller whose own voter entry names a port
// no controller listener binds loads, with a warning that names both; a
// matching port, port 0 (tests) and a broker-only node do not warn.
func TestVoterAddressWarning(t *testing.T) {
	c, err := New(map[string]string{"listeners": "PLAINTEXT://127.0.0.1:9621,CONTROLLER://127.0.0.1:9631"})
	if err != nil {
		t.Fatal(err)
	}
	want := "controller.quorum.voters gives this node (1) the address 127.0.0.1:9093, but no controller listener binds port 9093 (CONTROLLER://127.0.0.1:9631): the other voters and this node's broker connect to 127.0.0.1:9093"
	if len(c.Warnings) != 1 || c.Warnings[0] != want {
		t.Fatalf("warnings %q", c.Warnings)
	}
	for _, m := range []map[string]string{
		{},
		{"listeners": "PLAINTEXT://127.0.0.1:9621,CONTROLLER://127.0.0.1:9631", "controller.quorum.voters": "1@localhost:9631"},
		{"listeners": "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0"},
		{"process.roles": "broker", "node.id": "4", "listeners": "PLAINTEXT://:9092", "controller.quorum.voters": "1@c1:9093"},
	} {
		c, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Warnings) != 0 {
			t.Fatalf("%v: warnings %q", m, c.Warnings)
		}
	}
}

// TestQueuedMaxRequestBytes: unset leaves the bound to the wire server
// (derived from the machine); a positive value is the bound; 0 and
// negative values mean unbounded, as in Kafka; it is no longer an ignored
// key.
func TestQueuedMaxRequestBytes(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  int64
	}{{"", 0}, {"1048576", 1048576}, {"-1", -1}, {"0", -1}, {"-5", -1}} {
		props := map[string]string{}
		if tc.value != "" {
			props["queued.max.request.bytes"] = tc.value
		}
		c, err := New(props)
		if err != nil {
			t.Fatalf("queued.max.request.bytes=%q: %v", tc.value, err)
		}
		if c.QueuedMaxRequestBytes != tc.want || slices.Contains(c.Ignored, "queued.max.request.bytes") {
			t.Errorf("queued.max.request.bytes=%q: %d (ignored %q), want %d", tc.value, c.QueuedMaxRequestBytes, c.Ignored, tc.want)
		}
	}
	if _, err := New(map[string]string{"queued.max.request.bytes": "lots"}); err == nil || !strings.Contains(err.Error(), "queued.max.request.bytes") {
		t.Fatalf("a bad value: %v", err)
	}
}
