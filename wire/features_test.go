package wire

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// TestApiVersionsFeatures: the feature fields of ApiVersions at each
// version, on a raw connection. v0-2 have none; v3 leaves out the ranges
// that start at 0 (KAFKA-17492: older clients cannot read them), v4 lists
// them all; finalized levels above 0 at the image's offset. An image with
// group.version 0 takes ConsumerGroupHeartbeat and ConsumerGroupDescribe
// out of the list and answers them UNSUPPORTED_VERSION.
func TestApiVersionsFeatures(t *testing.T) {
	img := imageWithTopics()
	img.Offset = 42
	cluster := &laggingCluster{img: img}
	s := newTestServerSvc(t, Config{}, Services{Cluster: cluster}, nil)
	c := dialRaw(t, s.plaintextAddr())
	ask := func(v int16) *kmsg.ApiVersionsResponse {
		t.Helper()
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version, req.ClientSoftwareName, req.ClientSoftwareVersion = v, "strait-test", "1"
		c.send(int32(v), req)
		resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
		c.readResp(resp)
		return resp
	}
	describe := func(resp *kmsg.ApiVersionsResponse) string {
		s := ""
		for _, f := range resp.SupportedFeatures {
			s += fmt.Sprintf("%s=%d-%d ", f.Name, f.MinVersion, f.MaxVersion)
		}
		s += "| "
		for _, f := range resp.FinalizedFeatures {
			s += fmt.Sprintf("%s=%d-%d ", f.Name, f.MinVersionLevel, f.MaxVersionLevel)
		}
		return s + fmt.Sprintf("| %d", resp.FinalizedFeaturesEpoch)
	}
	finalized := "| group.version=1-1 kraft.version=1-1 metadata.version=25-25 share.version=1-1 transaction.version=2-2 | 42"
	for v, want := range map[int16]string{
		2: "| | -1",
		3: "metadata.version=25-25 share.version=1-1 " + finalized,
		4: "eligible.leader.replicas.version=0-0 group.version=0-1 kraft.version=0-1 metadata.version=25-25 share.version=1-1 transaction.version=0-2 " + finalized,
	} {
		if got := describe(ask(v)); got != want {
			t.Errorf("v%d:\n got %s\nwant %s", v, got, want)
		}
	}
	has := func(resp *kmsg.ApiVersionsResponse, key int16) bool {
		return slices.ContainsFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool { return k.ApiKey == key })
	}
	if r := ask(4); !has(r, 68) || !has(r, 69) {
		t.Fatal("group.version 1 does not advertise the KIP-848 APIs")
	}

	off := *img
	off.Features = map[string]int16{raftmeta.FeatureGroup: 0}
	cluster.mu.Lock()
	cluster.img = &off
	cluster.mu.Unlock()
	r := ask(4)
	if has(r, 68) || has(r, 69) || !has(r, 18) || len(r.ApiKeys) != len(s.apis.versions)-2 {
		t.Errorf("group.version 0: keys %v", r.ApiKeys)
	}
	if got := describe(r); got != "eligible.leader.replicas.version=0-0 group.version=0-1 kraft.version=0-1 metadata.version=25-25 share.version=1-1 transaction.version=0-2 | kraft.version=1-1 metadata.version=25-25 share.version=1-1 transaction.version=2-2 | 42" {
		t.Errorf("group.version 0: features %s", got)
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group = "g"
	c.send(50, hb)
	hbResp := hb.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	if c.readResp(hbResp); hbResp.ErrorCode != 35 { // UNSUPPORTED_VERSION
		t.Errorf("ConsumerGroupHeartbeat with group.version 0: error %d", hbResp.ErrorCode)
	}
	desc := kmsg.NewPtrConsumerGroupDescribeRequest()
	desc.Groups = []string{"a", "b"}
	c.send(51, desc)
	descResp := desc.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	if c.readResp(descResp); len(descResp.Groups) != 2 || descResp.Groups[0].ErrorCode != 35 || descResp.Groups[1].Group != "b" || descResp.Groups[1].ErrorCode != 35 {
		t.Errorf("ConsumerGroupDescribe with group.version 0: %+v", descResp.Groups)
	}
}
