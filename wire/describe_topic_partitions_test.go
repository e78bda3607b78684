package wire

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// TestDescribeTopicPartitionsOffline: a replica on a fenced broker, or on
// one without an endpoint on the request's listener, is offline; a leader
// that is offline is answered -1 with its epoch, as
// KRaftMetadataCache.getPartitionMetadataForDescribeTopicResponse does.
func TestDescribeTopicPartitionsOffline(t *testing.T) {
	img := imageWithTopics("t")
	img.Brokers[2] = &raftmeta.Broker{ID: 2, Fenced: true, Endpoints: []raftmeta.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9093}}}
	img.Brokers[3] = &raftmeta.Broker{ID: 3, Endpoints: []raftmeta.Endpoint{{Listener: "OTHER", Host: "127.0.0.1", Port: 9094}}}
	tp := img.Topics["t"]
	tp.Partitions = []*raftmeta.Partition{
		{Topic: "t", TopicID: tp.ID, Index: 0, Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1}, Leader: 1, LeaderEpoch: 3},
		{Topic: "t", TopicID: tp.ID, Index: 1, Replicas: []int32{2, 1}, ISR: []int32{2, 1}, Leader: 2, LeaderEpoch: 5},
	}
	s := newTestServerSvc(t, Config{}, Services{Cluster: &laggingCluster{img: img}}, nil)
	c := dialRaw(t, s.plaintextAddr())
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = 10
	c.send(1, req)
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	c.readResp(resp)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("response %+v", resp)
	}
	p0, p1 := resp.Topics[0].Partitions[0], resp.Topics[0].Partitions[1]
	// Broker 4 is not registered at all: offline too.
	if p0.LeaderID != 1 || p0.LeaderEpoch != 3 || !slices.Equal(p0.OfflineReplicas, []int32{2, 3, 4}) || !slices.Equal(p0.Replicas, []int32{1, 2, 3, 4}) {
		t.Errorf("partition 0: %+v", p0)
	}
	if p1.LeaderID != -1 || p1.LeaderEpoch != 5 || !slices.Equal(p1.OfflineReplicas, []int32{2}) || !slices.Equal(p1.ISR, []int32{2, 1}) || p1.ErrorCode != 0 {
		t.Errorf("partition 1: %+v", p1)
	}
}
