package broker_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// describedQuotas renders kadm's DescribeClientQuotas answer as
// "entity{key=value,...}" in the broker's order.
func describedQuotas(qs kadm.DescribedClientQuotas) string {
	var out []string
	for _, q := range qs {
		var vals []string
		for _, v := range q.Values {
			vals = append(vals, fmt.Sprintf("%s=%g", v.Key, v.Value))
		}
		var ent []string
		for _, c := range q.Entity {
			ent = append(ent, c.String())
		}
		out = append(out, strings.Join(ent, ",")+"{"+strings.Join(vals, ",")+"}")
	}
	return strings.Join(out, " ")
}

func quotaEntity(kvs ...string) kadm.ClientQuotaEntity {
	var e kadm.ClientQuotaEntity
	for _, kv := range kvs {
		typ, name, _ := strings.Cut(kv, "=")
		c := kadm.ClientQuotaEntityComponent{Type: typ}
		if name != "<default>" {
			c.Name = kmsg.StringPtr(name)
		}
		e = append(e, c)
	}
	return e
}

// TestClientQuotasAdmin: AlterClientQuotas sent to a broker that is not
// the controller is forwarded and stored in the metadata log, every broker
// describes it (kadm and kafka-go), a bad entity, key or value is
// INVALID_REQUEST as in Kafka, validate_only stores nothing and removing
// every key removes the entity.
func TestClientQuotasAdmin(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	ctx := testCtx(t, 60*time.Second)
	var follower *brokertest.Broker
	for _, id := range c.Running() {
		if id != c.Controller() {
			follower = c.Node(id)
			break
		}
	}
	adm := follower.Admin(t)

	altered, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: quotaEntity("user=alice"), Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 5 << 20}, {Key: "request_percentage", Value: 12.5}}},
		{Entity: quotaEntity("user=<default>", "client-id=<default>"), Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: 1 << 20}}},
		{Entity: quotaEntity("client-id=app"), Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1000}}},
		// Refused, each on its own.
		{Entity: quotaEntity("user=bob"), Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1.5}}},
		{Entity: quotaEntity("user=bob"), Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: -1}}},
		{Entity: quotaEntity("user=bob"), Ops: []kadm.AlterClientQuotaOp{{Key: "bogus_rate", Value: 1}}},
		{Entity: quotaEntity("user=bob", "ip=10.0.0.1"), Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1}}},
		{Entity: quotaEntity("user="), Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1}}},
		{Entity: quotaEntity("group=g"), Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []error{nil, nil, nil, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest, kerr.UnsupportedVersion}
	for i, a := range altered {
		if !errors.Is(a.Err, want[i]) {
			t.Errorf("entry %d %s: %v (%s), want %v", i, a.Entity, a.Err, a.ErrMessage, want[i])
		}
	}

	all := "client-id=app{producer_byte_rate=1000} user=<default>,client-id=<default>{consumer_byte_rate=1.048576e+06} user=alice{producer_byte_rate=5.24288e+06,request_percentage=12.5}"
	for _, id := range c.Running() {
		nadm := c.Node(id).Admin(t)
		c.WaitFor(t, 10*time.Second, fmt.Sprintf("node %d to describe the quotas", id), func() bool {
			qs, err := nadm.DescribeClientQuotas(ctx, false, nil)
			return err == nil && describedQuotas(qs) == all
		})
	}
	qs, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: 2}})
	if got := describedQuotas(qs); err != nil || got != "user=alice{producer_byte_rate=5.24288e+06,request_percentage=12.5}" {
		t.Errorf("strict SPECIFIED user: %s %v", got, err)
	}
	if _, err := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: 0}}); !errors.Is(err, kerr.InvalidRequest) {
		t.Errorf("EXACT without a name: %v", err)
	}

	// validate_only stores nothing.
	if res, err := adm.ValidateAlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: quotaEntity("user=carol"), Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: 10}}}}); err != nil || res[0].Err != nil {
		t.Fatalf("validate only: %v %+v", err, res)
	}
	if qs, _ := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: kmsg.StringPtr("carol")}}); len(qs) != 0 {
		t.Errorf("validate only stored %s", describedQuotas(qs))
	}

	// kafka-go, against another broker: its "" name is the default.
	kc := &kafka.Client{Addr: kafka.TCP(c.Node(c.Controller()).Addr()), Timeout: 20 * time.Second}
	kres, err := kc.AlterClientQuotas(ctx, &kafka.AlterClientQuotasRequest{Entries: []kafka.AlterClientQuotaEntry{
		{Entities: []kafka.AlterClientQuotaEntity{{EntityType: "user", EntityName: "alice"}}, Ops: []kafka.AlterClientQuotaOps{{Key: "producer_byte_rate", Remove: true}, {Key: "request_percentage", Remove: true}}},
		{Entities: []kafka.AlterClientQuotaEntity{{EntityType: "client-id", EntityName: "app"}}, Ops: []kafka.AlterClientQuotaOps{{Key: "producer_byte_rate", Value: 2000}}},
		{Entities: []kafka.AlterClientQuotaEntity{{EntityType: "user", EntityName: "bob"}}, Ops: []kafka.AlterClientQuotaOps{{Key: "consumer_byte_rate", Value: 0}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if kres.Entries[0].Error != nil || kres.Entries[1].Error != nil || !errors.Is(kres.Entries[2].Error, kafka.InvalidRequest) {
		t.Fatalf("kafka-go AlterClientQuotas: %+v", kres.Entries)
	}
	kd, err := kc.DescribeClientQuotas(ctx, &kafka.DescribeClientQuotasRequest{Components: []kafka.DescribeClientQuotasRequestComponent{{EntityType: "client-id", MatchType: 0, Match: "app"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(kd.Entries) != 1 || len(kd.Entries[0].Values) != 1 || kd.Entries[0].Values[0].Value != 2000 {
		t.Errorf("kafka-go DescribeClientQuotas: %+v", kd.Entries)
	}
	kd, err = kc.DescribeClientQuotas(ctx, &kafka.DescribeClientQuotasRequest{Components: []kafka.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 0, Match: "alice"}}})
	if err != nil || len(kd.Entries) != 0 {
		t.Errorf("alice's quotas are all removed, yet described: %+v %v", kd, err)
	}
}

// TestClientQuotasACLs: AlterClientQuotas needs ALTER_CONFIGS on the
// cluster and DescribeClientQuotas DESCRIBE_CONFIGS, as in Kafka; an ACL
// granting them lets a principal that is not a super user through.
func TestClientQuotasACLs(t *testing.T) {
	sc := startSecured(t, 1)
	ctx := testCtx(t, 30*time.Second)
	alice, bob := kadm.NewClient(sc.clients[pAlice]), kadm.NewClient(sc.clients[pBob])
	entry := []kadm.AlterClientQuotaEntry{{Entity: quotaEntity("user=u"), Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 100}}}}
	res, err := bob.AlterClientQuotas(ctx, entry)
	if err != nil || !errors.Is(res[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("bob alters: %+v %v", res, err)
	}
	if _, err := bob.DescribeClientQuotas(ctx, false, nil); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("bob describes: %v", err)
	}
	sc.createACLs(t, []kmsg.CreateACLsRequestCreation{
		aclOf(kmsg.ACLResourceTypeCluster, "kafka-cluster", kmsg.ACLResourcePatternTypeLiteral, pAlice, kmsg.ACLOperationAlterConfigs, kmsg.ACLPermissionTypeAllow),
		aclOf(kmsg.ACLResourceTypeCluster, "kafka-cluster", kmsg.ACLResourcePatternTypeLiteral, pAlice, kmsg.ACLOperationDescribeConfigs, kmsg.ACLPermissionTypeAllow),
	})
	if res, err := alice.AlterClientQuotas(ctx, entry); err != nil || res[0].Err != nil {
		t.Fatalf("alice alters: %+v %v", res, err)
	}
	qs, err := alice.DescribeClientQuotas(ctx, false, nil)
	if err != nil || describedQuotas(qs) != "user=u{producer_byte_rate=100}" {
		t.Fatalf("alice describes: %s %v", describedQuotas(qs), err)
	}
}

// The quota keys are advertised at the versions served, v0-v1.
func TestClientQuotasAdvertised(t *testing.T) {
	b := brokertest.Start(t)
	vs, err := b.Admin(t).ApiVersions(testCtx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		for _, key := range []int16{48, 49} {
			min, max, ok := v.KeyVersions(key)
			if !ok || min != 0 || max != 1 {
				t.Errorf("key %d: %d-%d advertised %v", key, min, max, ok)
			}
		}
	}
}
