package broker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestAlterReplicaLogDirs drives AlterReplicaLogDirs (key 34) as
// kafka-reassign-partitions.sh --reassignment-json-file with log_dirs
// does, through kadm, while a producer runs with acks=all: the broker's
// one log directory, as DescribeLogDirs names it, is where its replicas
// already are, so the "move" is done at once (no future replica:
// IsFuture stays false) and every acknowledged record is read back once;
// any other directory is LOG_DIR_NOT_FOUND, an unknown partition
// UNKNOWN_TOPIC_OR_PARTITION. (kafka-go has no AlterReplicaLogDirs.)
func TestAlterReplicaLogDirs(t *testing.T) {
	c := brokertest.StartCluster(t, 1)
	ctx := testCtx(t, time.Minute)
	adm := c.Admin(t)
	const topic = "log-dirs"
	createTopic(t, adm, topic, 2)
	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	acked := ackLedger{}
	acked.produce(ctx, t, prod, "before", 100, 2)

	described, err := adm.DescribeBrokerLogDirs(ctx, 1, nil)
	if err != nil || len(described) != 1 {
		t.Fatalf("DescribeLogDirs: %v %v", described, err)
	}
	var dir string
	for d := range described {
		dir = d
	}
	var alter kadm.AlterReplicaLogDirsReq
	alter.Add(dir, kadm.TopicsSet{topic: {0: {}, 1: {}}})
	alter.Add("/no/such/dir", kadm.TopicsSet{topic + "-x": {0: {}}})
	alter.Add(dir, kadm.TopicsSet{"no-such-topic": {0: {}}})
	rs, err := adm.AlterBrokerReplicaLogDirs(ctx, 1, alter)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]error{topic: nil, topic + "-x": kerr.LogDirNotFound, "no-such-topic": kerr.UnknownTopicOrPartition}
	n := 0
	rs.Each(func(r kadm.AlterReplicaLogDirsResponse) {
		n++
		if w := want[r.Topic]; !errors.Is(r.Err, w) && !(w == nil && r.Err == nil) {
			t.Errorf("%s[%d] to %s: %v, want %v", r.Topic, r.Partition, r.Dir, r.Err, w)
		}
	})
	if n != 4 {
		t.Fatalf("%d answers, want 4: %v", n, rs.Sorted())
	}

	acked.produce(ctx, t, prod, "after", 100, 2)
	described, err = adm.DescribeBrokerLogDirs(ctx, 1, kadm.TopicsSet{topic: {0: {}, 1: {}}})
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 2; p++ {
		dp, ok := described.Lookup(dir, topic, p)
		if !ok || dp.IsFuture || dp.Size == 0 {
			t.Fatalf("%s[%d] in %s after the alter: %+v (found %v), want it there, not a future replica", topic, p, dir, dp, ok)
		}
	}
	acked.audit(ctx, t, c, topic)
}

// TestAlterReplicaLogDirsAuthz: AlterReplicaLogDirs needs ALTER on the
// cluster; without it every partition answers
// CLUSTER_AUTHORIZATION_FAILED (KafkaApis.handleAlterReplicaLogDirsRequest).
func TestAlterReplicaLogDirsAuthz(t *testing.T) {
	sc := startSecured(t, 1)
	createTopic(t, sc.adm, "moved", 1)
	described, err := sc.adm.DescribeBrokerLogDirs(testCtx(t, 10*time.Second), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var dir string
	for d := range described {
		dir = d
	}
	req := func() kmsg.Request {
		r := kmsg.NewPtrAlterReplicaLogDirsRequest()
		d := kmsg.NewAlterReplicaLogDirsRequestDir()
		d.Dir = dir
		rt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
		rt.Topic, rt.Partitions = "moved", []int32{0}
		d.Topics = append(d.Topics, rt)
		r.Dirs = append(r.Dirs, d)
		return r
	}
	code := func(r *kmsg.AlterReplicaLogDirsResponse) int16 { return r.Topics[0].Partitions[0].ErrorCode }
	if got := code(send[*kmsg.AlterReplicaLogDirsResponse](t, sc.clients[pBob], req(), code)); got != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("without ALTER on the cluster: error %d, want CLUSTER_AUTHORIZATION_FAILED", got)
	}
	sc.createACLs(t, []kmsg.CreateACLsRequestCreation{aclOf(kmsg.ACLResourceTypeCluster, "kafka-cluster",
		kmsg.ACLResourcePatternTypeLiteral, pBob, kmsg.ACLOperationAlter, kmsg.ACLPermissionTypeAllow)})
	if got := code(send[*kmsg.AlterReplicaLogDirsResponse](t, sc.clients[pBob], req(), code)); got != 0 {
		t.Fatalf("with ALTER on the cluster: error %d", got)
	}
}
