package wire

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// laggingCluster is a ClusterView whose image lacks the topic "late" until
// CatchUpMetadata is called, as on a broker that has received the record
// creating it but not applied it yet.
type laggingCluster struct {
	mu       sync.Mutex
	img      *raftmeta.Image
	pending  *raftmeta.Image // applied by CatchUpMetadata; nil: nothing received
	catchUps atomic.Int32
}

func (c *laggingCluster) NodeID() int32       { return 1 }
func (c *laggingCluster) ControllerID() int32 { return 1 }
func (c *laggingCluster) Image() *raftmeta.Image {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.img
}

func (c *laggingCluster) CatchUpMetadata(context.Context) bool {
	c.catchUps.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		return false
	}
	c.img, c.pending = c.pending, nil
	return true
}

func (c *laggingCluster) AutoCreateTopics(_ context.Context, topics []string) map[string]int16 {
	out := map[string]int16{}
	for _, t := range topics {
		out[t] = kerr.UnknownTopicOrPartition.Code
	}
	return out
}

func imageWithTopics(names ...string) *raftmeta.Image {
	img := raftmeta.EmptyImage()
	img.Brokers[1] = &raftmeta.Broker{ID: 1, Endpoints: []raftmeta.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}}}
	for i, name := range names {
		t := &raftmeta.Topic{Name: name, ID: raftmeta.Uuid{byte(i + 1)}}
		t.Partitions = []*raftmeta.Partition{{Topic: name, TopicID: t.ID, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}}
		img.Topics[name], img.TopicsByID[t.ID] = t, t
	}
	return img
}

func metadataFor(t *testing.T, c *rawClient, topics ...string) map[string]int16 {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	for _, name := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	c.send(1, req)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	c.readResp(resp)
	out := map[string]int16{}
	for _, rt := range resp.Topics {
		out[*rt.Topic] = rt.ErrorCode
	}
	return out
}

// TestMetadataCatchesUpBeforeCallingATopicUnknown: a broker asked about a
// topic it does not know applies the metadata it has received first, so a
// client that just created the topic elsewhere finds it; known topics and
// topics nobody created cost no wait beyond that.
func TestMetadataCatchesUpBeforeCallingATopicUnknown(t *testing.T) {
	cluster := &laggingCluster{img: imageWithTopics("known"), pending: imageWithTopics("known", "late")}
	s := newTestServerSvc(t, Config{}, Services{Cluster: cluster}, nil)
	c := dialRaw(t, s.plaintextAddr())

	if got := metadataFor(t, c, "known"); got["known"] != 0 {
		t.Fatalf("known topic: %v", got)
	}
	if n := cluster.catchUps.Load(); n != 0 {
		t.Fatalf("a request for a known topic caught up %d times", n)
	}
	if got := metadataFor(t, c, "known", "late"); got["late"] != 0 || got["known"] != 0 {
		t.Fatalf("a topic in received metadata: %v", got)
	}
	if got := metadataFor(t, c, "never"); got["never"] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("a topic nobody created: %v", got)
	}
	if n := cluster.catchUps.Load(); n != 2 {
		t.Fatalf("caught up %d times for two requests naming unknown topics", n)
	}
}
