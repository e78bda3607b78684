package wire

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// allMetadata asks for every topic and returns each partition's leader
// and error code by "topic-partition".
func allMetadata(t *testing.T, c *rawClient) map[string][2]int32 {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	c.send(1, req)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	c.readResp(resp)
	out := map[string][2]int32{}
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			out[fmt.Sprintf("%s-%d", *rt.Topic, p.Partition)] = [2]int32{p.Leader, int32(p.ErrorCode)}
		}
	}
	return out
}

// TestMetadataAnswerFollowsTheImage: Metadata's answer for every topic is
// built once per metadata image, and a new image (a topic created, a
// leader lost) shows in the next answer, for all topics and for one.
func TestMetadataAnswerFollowsTheImage(t *testing.T) {
	cluster := &laggingCluster{img: imageWithTopics("a", "b")}
	s := newTestServerSvc(t, Config{}, Services{Cluster: cluster}, nil)
	c := dialRaw(t, s.plaintextAddr())
	want := map[string][2]int32{"a-0": {1, 0}, "b-0": {1, 0}}
	for range 2 {
		if got := allMetadata(t, c); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("every topic: %v, want %v", got, want)
		}
	}

	next := imageWithTopics("a", "b", "c")
	next.Offset = cluster.img.Offset + 1
	leaderless := *next.Topics["b"].Partitions[0]
	leaderless.Leader = -1
	next.Topics["b"].Partitions[0] = &leaderless
	cluster.mu.Lock()
	cluster.img = next
	cluster.mu.Unlock()
	want = map[string][2]int32{"a-0": {1, 0}, "b-0": {-1, int32(kerr.LeaderNotAvailable.Code)}, "c-0": {1, 0}}
	if got := allMetadata(t, c); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("every topic after the image changed: %v, want %v", got, want)
	}
	if got := metadataFor(t, c, "b", "c"); got["b"] != 0 || got["c"] != 0 {
		t.Fatalf("two topics after the image changed: %v", got)
	}
}

// TestMetadataAllTopicsAllocatesPerImageOnly: asking again for every
// topic of an unchanged image of 1,000 partitions allocates the answer's
// topic list, not three slices a partition as before (issue 29: Metadata
// p99 at 10,000 partitions).
func TestMetadataAllTopicsAllocatesPerImageOnly(t *testing.T) {
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("t%03d", i)
	}
	img := imageWithTopics(names...)
	for _, tp := range img.Topics {
		for p := int32(1); p < 10; p++ {
			tp.Partitions = append(tp.Partitions, &raftmeta.Partition{Topic: tp.Name, TopicID: tp.ID, Index: p, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1})
		}
	}
	s := newTestServerSvc(t, Config{}, Services{Cluster: &laggingCluster{img: img}}, nil)
	ask := func() {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		resp, err := s.handleMetadata(context.Background(), req)
		if err != nil || len(resp.(*kmsg.MetadataResponse).Topics) != len(names) {
			t.Fatalf("every topic: %v, %v", resp, err)
		}
	}
	ask()
	if n := testing.AllocsPerRun(10, ask); n > 50 {
		t.Fatalf("%v allocations for an answer of 1,000 partitions already built for this image", n)
	}
}
