package wire

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// TestListConfigResources: v1 lists the resources of the requested types
// (every supported type when none is asked) in Kafka's order, groups only
// when they have configs, brokers only when unfenced and on the
// request's listener; an unsupported type fails the whole request with
// UNSUPPORTED_VERSION; v0 lists client metrics resources, of which
// Strait has none.
func TestListConfigResources(t *testing.T) {
	img := imageWithTopics("b-topic", "a-topic")
	img.Brokers[3] = &raftmeta.Broker{ID: 3, Endpoints: []raftmeta.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9093}}}
	img.Brokers[2] = &raftmeta.Broker{ID: 2, Fenced: true, Endpoints: []raftmeta.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9094}}}
	img.Brokers[4] = &raftmeta.Broker{ID: 4, Endpoints: []raftmeta.Endpoint{{Listener: "OTHER", Host: "127.0.0.1", Port: 9095}}}
	img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceGroup, Name: "g2"}] = map[string]string{"share.auto.offset.reset": "earliest"}
	img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceGroup, Name: "g1"}] = map[string]string{"consumer.session.timeout.ms": "50000"}
	img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceGroup, Name: "emptied"}] = map[string]string{}
	img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceTopic, Name: "a-topic"}] = map[string]string{"retention.ms": "1"}
	s := newTestServerSvc(t, Config{}, Services{Cluster: &laggingCluster{img: img}}, nil)
	c := dialRaw(t, s.plaintextAddr())

	list := func(version int16, types ...kmsg.ConfigResourceType) (int16, []string) {
		t.Helper()
		req := kmsg.NewPtrListConfigResourcesRequest()
		req.Version = version
		for _, typ := range types {
			req.ResourceTypes = append(req.ResourceTypes, int8(typ))
		}
		c.send(7, req)
		resp := req.ResponseKind().(*kmsg.ListConfigResourcesResponse)
		if corr := c.readResp(resp); corr != 7 {
			t.Fatalf("correlation id %d", corr)
		}
		var out []string
		for _, r := range resp.ConfigResources {
			out = append(out, fmt.Sprintf("%s/%s", kmsg.ConfigResourceType(r.Type), r.Name))
		}
		return resp.ErrorCode, out
	}
	all := []string{"GROUP_CONFIG/g1", "GROUP_CONFIG/g2", "BROKER/1", "BROKER/3", "TOPIC/a-topic", "TOPIC/b-topic"}
	for _, tc := range []struct {
		name    string
		version int16
		types   []kmsg.ConfigResourceType
		code    int16
		want    []string
	}{
		{"v1, every type", 1, nil, 0, all},
		{"v1, asked in another order, answered in Kafka's", 1, []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceTypeGroupConfig, kmsg.ConfigResourceTypeTopic}, 0,
			[]string{"GROUP_CONFIG/g1", "GROUP_CONFIG/g2", "TOPIC/a-topic", "TOPIC/b-topic"}},
		{"v1, none of a type", 1, []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeClientMetrics, kmsg.ConfigResourceTypeBrokerLogger}, 0, nil},
		{"v1, an unsupported type", 1, []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeTopic, 64}, kerr.UnsupportedVersion.Code, nil},
		{"v0", 0, nil, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, got := list(tc.version, tc.types...)
			if code != tc.code || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %d %v, want %d %v", code, got, tc.code, tc.want)
			}
		})
	}
}
