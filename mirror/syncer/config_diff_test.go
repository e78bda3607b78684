package syncer

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDiffConfigs(t *testing.T) {
	exclude := map[string]bool{"mirror.name": true, "min.insync.replicas": true}
	src := map[string]string{"retention.ms": "1000", "cleanup.policy": "compact", "min.insync.replicas": "1", "segment.ms": "5"}
	dst := map[string]string{"retention.ms": "2000", "segment.ms": "5", "max.message.bytes": "9", "min.insync.replicas": "3", "mirror.name": "m1"}
	d := diffConfigs(src, dst, exclude)
	var got []string
	for _, op := range d.alterOps() {
		v := "<nil>"
		if op.Value != nil {
			v = *op.Value
		}
		got = append(got, fmt.Sprintf("%s %s=%s", map[kadm.IncrementalOp]string{kadm.SetConfig: "SET", kadm.DeleteConfig: "DELETE"}[op.Op], op.Name, v))
	}
	// Set what differs, delete what the source no longer has; excluded
	// keys (both sides) untouched.
	want := "[SET cleanup.policy=compact SET retention.ms=1000 DELETE max.message.bytes=<nil>]"
	if fmt.Sprint(got) != want {
		t.Errorf("ops %v\nwant %s", got, want)
	}
	if d := diffConfigs(map[string]string{"a": "1"}, map[string]string{"a": "1", "mirror.name": "m"}, exclude); !d.empty() {
		t.Errorf("equal configs: diff %+v", d)
	}
}

func TestDynamicConfigs(t *testing.T) {
	v := func(s string) *string { return &s }
	rc := kadm.ResourceConfig{Configs: []kadm.Config{
		{Key: "retention.ms", Value: v("1"), Source: kmsg.ConfigSourceDynamicTopicConfig},
		{Key: "segment.ms", Value: v("2"), Source: kmsg.ConfigSourceDefaultConfig},
		{Key: "cleanup.policy", Value: v("delete"), Source: kmsg.ConfigSourceStaticBrokerConfig},
		{Key: "x", Value: nil, Source: kmsg.ConfigSourceDynamicTopicConfig, Sensitive: true},
	}}
	if got := fmt.Sprint(dynamicConfigs(rc)); got != "map[retention.ms:1]" {
		t.Errorf("dynamic configs %s, want only retention.ms", got)
	}
}
