package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestGroupConfigs: the strait binary keeps a group's configs (Kafka's
// GROUP config resource, as kafka-configs.sh --entity-type groups sets
// them) across a SIGKILL: set with IncrementalAlterConfigs, described
// with their sources, listed by ListConfigResources, and a bad value
// refused with INVALID_CONFIG.
func TestGroupConfigs(t *testing.T) {
	const group = "configured-e2e"
	n := newNode(t)
	n.start()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	alter := func(key, value string) (int16, string) {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = key, kmsg.StringPtr(value)
		r.Configs = append(r.Configs, c)
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(ctx, newClient(t, n.kafkaAddr()))
		if err != nil || len(resp.Resources) != 1 {
			t.Fatalf("IncrementalAlterConfigs: %v %+v", err, resp)
		}
		msg := ""
		if m := resp.Resources[0].ErrorMessage; m != nil {
			msg = *m
		}
		return resp.Resources[0].ErrorCode, msg
	}
	describe := func(key string) (string, kmsg.ConfigSource) {
		t.Helper()
		req := kmsg.NewPtrDescribeConfigsRequest()
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName, r.ConfigNames = kmsg.ConfigResourceTypeGroupConfig, group, []string{key}
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(ctx, newClient(t, n.kafkaAddr()))
		if err != nil || len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 || len(resp.Resources[0].Configs) != 1 {
			t.Fatalf("DescribeConfigs: %v %+v", err, resp)
		}
		c := resp.Resources[0].Configs[0]
		if c.Value == nil {
			t.Fatalf("%s has no value", key)
		}
		return *c.Value, c.Source
	}

	if code, msg := alter("share.auto.offset.reset", "earliest"); code != 0 {
		t.Fatalf("set: %v %s", kerr.ErrorForCode(code), msg)
	}
	if code, msg := alter("share.auto.offset.reset", "beginning"); code != kerr.InvalidConfig.Code || msg == "" {
		t.Fatalf("a bad value: %v %q", kerr.ErrorForCode(code), msg)
	}

	n.kill()
	n.start()
	if v, src := describe("share.auto.offset.reset"); v != "earliest" || src != kmsg.ConfigSourceGroupConfig {
		t.Fatalf("after the restart: share.auto.offset.reset=%s (%s)", v, src)
	}
	if v, src := describe("consumer.session.timeout.ms"); v != "45000" || src != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("consumer.session.timeout.ms=%s (%s)", v, src)
	}
	listed, err := newAdmin(t, n.kafkaAddr()).ListConfigResources(ctx, kadm.ConfigResourceGroupConfig)
	if err != nil || listed.Err != nil || len(listed.Resources) != 1 || listed.Resources[0].Name != group {
		t.Fatalf("ListConfigResources: %v %+v", err, listed)
	}
}
