package broker_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestReplicationThrottleConfigs: the KIP-73 rates are dynamic broker
// configs (kadm and kafka-go set them; DescribeConfigs shows them with
// their source; a broker's own value beats the cluster default, which
// beats the static one), the replica manager applies them at once, and
// bad values are refused with INVALID_CONFIG as Kafka's validators do
// (a rate must be a long >= 0; the throttled-replica lists "*" or
// partition:broker entries). replication.quota.window.* are read-only. A
// restarted broker applies them from the metadata log.
func TestReplicationThrottleConfigs(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig("follower.replication.throttled.rate=7000"), brokertest.WithMetrics())
	ctx := testCtx(t, time.Minute)
	adm := b.Admin(t)
	quotas := func() (leader, follower int64) {
		qs := b.Node().Replicas().Quotas()
		return qs.Leader.Bound(), qs.Follower.Bound()
	}
	waitBounds := func(leader, follower int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			l, f := quotas()
			if l == leader && f == follower {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica manager bounds leader %d follower %d, want %d and %d", l, f, leader, follower)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	alter := func(broker *int32, cfgs ...kadm.AlterConfig) error {
		t.Helper()
		var ids []int32
		if broker != nil {
			ids = []int32{*broker}
		}
		rs, err := adm.AlterBrokerConfigs(ctx, cfgs, ids...)
		if err == nil {
			err = rs[0].Err
		}
		return err
	}
	one := int32(1)
	set := func(k, v string) kadm.AlterConfig {
		return kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(v)}
	}
	del := func(k string) kadm.AlterConfig { return kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k} }
	describe := func(key string) kadm.Config {
		t.Helper()
		rcs, err := adm.DescribeBrokerConfigs(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rcs[0].Configs {
			if c.Key == key {
				return c
			}
		}
		t.Fatalf("DescribeConfigs of broker 1 has no %s", key)
		return kadm.Config{}
	}

	// The static value, and Kafka's default (Long.MAX_VALUE: unlimited).
	waitBounds(9223372036854775807, 7000)
	if c := describe("follower.replication.throttled.rate"); c.MaybeValue() != "7000" || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("static follower rate described as %q source %v", c.MaybeValue(), c.Source)
	}
	if c := describe("leader.replication.throttled.rate"); c.MaybeValue() != "9223372036854775807" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("default leader rate described as %q source %v", c.MaybeValue(), c.Source)
	}

	// The cluster default, then the broker's own value over it.
	if err := alter(nil, set("leader.replication.throttled.rate", "3000"), set("follower.replication.throttled.rate", "4000")); err != nil {
		t.Fatalf("setting the cluster-wide rates: %v", err)
	}
	waitBounds(3000, 4000)
	if err := alter(&one, set("leader.replication.throttled.rate", "1048576")); err != nil {
		t.Fatalf("setting broker 1's leader rate: %v", err)
	}
	waitBounds(1048576, 4000)
	if c := describe("leader.replication.throttled.rate"); c.MaybeValue() != "1048576" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Fatalf("broker leader rate described as %q source %v", c.MaybeValue(), c.Source)
	}
	if c := describe("follower.replication.throttled.rate"); c.MaybeValue() != "4000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("default follower rate described as %q source %v", c.MaybeValue(), c.Source)
	}

	// kafka-go sets broker 1's follower rate and reads it back.
	kc := &kafka.Client{Addr: kafka.TCP(b.Addr()), Timeout: 10 * time.Second}
	ir, err := kc.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{
		ResourceType: kafka.ResourceTypeBroker, ResourceName: "1",
		Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: "follower.replication.throttled.rate", Value: "2097152"}},
	}}})
	if err == nil && ir.Resources[0].Error != nil {
		err = ir.Resources[0].Error
	}
	if err != nil {
		t.Fatalf("kafka-go IncrementalAlterConfigs: %v", err)
	}
	waitBounds(1048576, 2097152)
	dr, err := kc.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeBroker, ResourceName: "1",
		ConfigNames: []string{"follower.replication.throttled.rate"},
	}}})
	if err != nil || len(dr.Resources) != 1 || len(dr.Resources[0].ConfigEntries) != 1 {
		t.Fatalf("kafka-go DescribeConfigs: %+v %v", dr, err)
	}
	if e := dr.Resources[0].ConfigEntries[0]; e.ConfigValue != "2097152" || e.ReadOnly {
		t.Fatalf("kafka-go sees the follower rate as %q read-only=%v", e.ConfigValue, e.ReadOnly)
	}

	// A restart takes them from the metadata log again.
	b.Restart(t)
	waitBounds(1048576, 2097152)

	// Removing the broker's values falls back to the cluster default.
	if err := alter(&one, del("leader.replication.throttled.rate"), del("follower.replication.throttled.rate")); err != nil {
		t.Fatalf("deleting broker 1's rates: %v", err)
	}
	waitBounds(3000, 4000)

	// The bounds and rates are exported as metrics.
	body := string(scrape(t, b))
	for _, want := range []string{
		`strait_replication_throttled_rate_limit{side="leader"} 3000`,
		`strait_replication_throttled_rate_limit{side="follower"} 4000`,
		`strait_replication_throttled_byte_rate{side="leader"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}

	// Bad input.
	for _, c := range []struct {
		cfg  kadm.AlterConfig
		want error
	}{
		{set("leader.replication.throttled.rate", "-1"), kerr.InvalidConfig},
		{set("follower.replication.throttled.rate", "fast"), kerr.InvalidConfig},
		{set("leader.replication.throttled.rate", "9223372036854775808"), kerr.InvalidConfig},
		{set("replication.quota.window.num", "3"), kerr.InvalidRequest},
	} {
		if err := alter(&one, c.cfg); !errors.Is(err, c.want) {
			t.Errorf("%s=%s: %v, want %v", c.cfg.Name, *c.cfg.Value, err, c.want)
		}
	}
	waitBounds(3000, 4000)
	createTopic(t, adm, "throttled", 2)
	for _, v := range []string{"0-1", "0:1:2", "a:1", "*,0:1", ":1"} {
		rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("leader.replication.throttled.replicas", v)}, "throttled")
		if err == nil {
			err = rs[0].Err
		}
		if !errors.Is(err, kerr.InvalidConfig) {
			t.Errorf("leader.replication.throttled.replicas=%q: %v, want INVALID_CONFIG", v, err)
		}
	}
	for _, v := range []string{"*", "0:1,1:1", " 1:1 "} {
		rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("follower.replication.throttled.replicas", v)}, "throttled")
		if err == nil {
			err = rs[0].Err
		}
		if err != nil {
			t.Errorf("follower.replication.throttled.replicas=%q: %v", v, err)
		}
	}
}

// TestReplicationThrottleConfigsAuthz: setting a replication throttle is
// altering a broker config, ALTER_CONFIGS on the CLUSTER resource (Kafka's
// AuthHelper for BROKER resources).
func TestReplicationThrottleConfigsAuthz(t *testing.T) {
	sc := startSecured(t, 1)
	req := func() kmsg.Request {
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
		rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		rc.Name, rc.Op, rc.Value = "leader.replication.throttled.rate", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("1000")
		rr.Configs = append(rr.Configs, rc)
		r.Resources = append(r.Resources, rr)
		return r
	}
	code := func(r *kmsg.IncrementalAlterConfigsResponse) int16 { return r.Resources[0].ErrorCode }
	if got := code(send[*kmsg.IncrementalAlterConfigsResponse](t, sc.clients[pBob], req(), code)); got != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("a principal without ALTER_CONFIGS on the cluster: error %d, want CLUSTER_AUTHORIZATION_FAILED", got)
	}
	sc.createACLs(t, []kmsg.CreateACLsRequestCreation{aclOf(kmsg.ACLResourceTypeCluster, "kafka-cluster",
		kmsg.ACLResourcePatternTypeLiteral, pBob, kmsg.ACLOperationAlterConfigs, kmsg.ACLPermissionTypeAllow)})
	if got := code(send[*kmsg.IncrementalAlterConfigsResponse](t, sc.clients[pBob], req(), code)); got != 0 {
		t.Fatalf("with ALTER_CONFIGS on the cluster: error %d", got)
	}
	// The change reaches the replica manager with the next delta.
	deadline := time.Now().Add(10 * time.Second)
	for sc.nodes[0].Node().Replicas().Quotas().Leader.Bound() != 1000 {
		if time.Now().After(deadline) {
			t.Fatal("the authorized leader rate never reached the replica manager")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
