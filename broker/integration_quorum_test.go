package broker_test

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestQuorumAPIsSingleNode drives DescribeQuorum, AddRaftVoter and
// RemoveRaftVoter on a one-voter node with kgo (kmsg requests; kadm has no
// quorum calls) at every version, and the answers Kafka gives to bad
// input: another topic or partition, a missing directory id or
// CONTROLLER listener, another cluster id, a node that does not follow the
// log, the last voter.
func TestQuorumAPIsSingleNode(t *testing.T) {
	b := brokertest.Start(t)
	ctx := testCtx(t, 30*time.Second)
	cl := b.Client(t)

	for v := int16(0); v <= 2; v++ {
		req := kmsg.NewPtrDescribeQuorumRequest()
		req.Version = v
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = "__cluster_metadata"
		rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
		req.Topics = append(req.Topics, rt)
		resp := nodeRequest(ctx, t, cl, 1, req).(*kmsg.DescribeQuorumResponse)
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("v%d: %v %+v", v, kerr.ErrorForCode(resp.ErrorCode), resp.Topics)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.LeaderID != 1 || p.LeaderEpoch < 1 || p.HighWatermark < 1 ||
			len(p.CurrentVoters) != 1 || p.CurrentVoters[0].ReplicaID != 1 || len(p.Observers) != 0 {
			t.Fatalf("v%d: %+v", v, p)
		}
		if self := p.CurrentVoters[0]; self.LogEndOffset < p.HighWatermark {
			t.Errorf("v%d: the leader's log end %d is behind the high watermark %d", v, self.LogEndOffset, p.HighWatermark)
		}
		if got, want := p.CurrentVoters[0].ReplicaDirectoryID, metaDirectoryID(t, b); v >= 2 && got != want {
			t.Errorf("v%d: voter directory id %x, meta.properties says %x", v, got, want)
		}
		if got := p.CurrentVoters[0].LastFetchTimestamp; v >= 1 && got <= 0 {
			t.Errorf("v%d: leader's last fetch timestamp %d", v, got)
		}
		if v >= 2 && (len(resp.Nodes) != 1 || resp.Nodes[0].NodeID != 1 || len(resp.Nodes[0].Listeners) != 1 ||
			resp.Nodes[0].Listeners[0].Name != "CONTROLLER" || net.JoinHostPort(resp.Nodes[0].Listeners[0].Host, strconv.Itoa(int(resp.Nodes[0].Listeners[0].Port))) != b.ControllerAddr()) {
			t.Errorf("v2 nodes: %+v, want node 1 at CONTROLLER %s", resp.Nodes, b.ControllerAddr())
		}
	}

	// Only __cluster_metadata-0 exists (KafkaRaftClient).
	for _, tp := range []struct {
		topic     string
		partition int32
	}{{"__cluster_metadata", 1}, {"orders", 0}} {
		req := kmsg.NewPtrDescribeQuorumRequest()
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = tp.topic
		rp := kmsg.NewDescribeQuorumRequestTopicPartition()
		rp.Partition = tp.partition
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := nodeRequest(ctx, t, cl, 1, req).(*kmsg.DescribeQuorumResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Errorf("DescribeQuorum of %s-%d: %+v, want UNKNOWN_TOPIC_OR_PARTITION", tp.topic, tp.partition, resp.Topics)
		}
	}

	listener := &kmsg.DescribeQuorumResponseNodeListener{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9}
	for _, c := range []struct {
		name string
		req  kmsg.Request
		want *kerr.Error
	}{
		{"AddRaftVoter without a directory id", func() kmsg.Request {
			r := kmsg.NewPtrAddRaftVoterRequest()
			r.VoterID = 2
			r.Listeners = []kmsg.AddRaftVoterRequestListener{{Name: listener.Name, Host: listener.Host, Port: listener.Port}}
			return r
		}(), kerr.InvalidRequest},
		{"AddRaftVoter of another cluster", func() kmsg.Request {
			r := kmsg.NewPtrAddRaftVoterRequest()
			r.ClusterID, r.VoterID, r.VoterDirectoryID = kmsg.StringPtr("not-this-one"), 2, [16]byte{7}
			r.Listeners = []kmsg.AddRaftVoterRequestListener{{Name: listener.Name, Host: listener.Host, Port: listener.Port}}
			return r
		}(), kerr.InconsistentClusterID},
		{"RemoveRaftVoter with a negative id", func() kmsg.Request {
			r := kmsg.NewPtrRemoveRaftVoterRequest()
			r.VoterID, r.VoterDirectoryID = -1, [16]byte{7}
			return r
		}(), kerr.InvalidRequest},
	} {
		var code int16
		switch r := nodeRequest(ctx, t, cl, 1, c.req).(type) {
		case *kmsg.AddRaftVoterResponse:
			code = r.ErrorCode
		case *kmsg.RemoveRaftVoterResponse:
			code = r.ErrorCode
		}
		if code != c.want.Code {
			t.Errorf("%s: %v, want %v", c.name, kerr.ErrorForCode(code), c.want)
		}
	}
	// Node 2 does not exist, so it follows no log: not caught up.
	if code, msg := voterChange(ctx, t, cl, 1, true, 2, [16]byte{7}, listener); code != kerr.RequestTimedOut.Code {
		t.Errorf("AddRaftVoter of a node that is no observer: %v (%s), want REQUEST_TIMED_OUT", kerr.ErrorForCode(code), msg)
	}
	if code, msg := voterChange(ctx, t, cl, 1, false, 1, metaDirectoryID(t, b), nil); code != kerr.VoterNotFound.Code {
		t.Errorf("RemoveRaftVoter of the last voter: %v (%s), want VOTER_NOT_FOUND", kerr.ErrorForCode(code), msg)
	}
	if _, st := describeQuorum(ctx, t, cl, 1); len(st.CurrentVoters) != 1 {
		t.Errorf("voters after the refused changes: %v", replicaIDs(st.CurrentVoters))
	}
}

// TestQuorumAPIsKafkaGo checks with segmentio/kafka-go, a client with its
// own protocol code, that the broker advertises the quorum APIs at the
// versions it serves. kafka-go has no message types for them and its
// protocol registry stops at key 51, so it cannot send them: the requests
// themselves are tested with kgo above.
func TestQuorumAPIsKafkaGo(t *testing.T) {
	b := brokertest.Start(t)
	conn, err := kafka.DialContext(testCtx(t, 10*time.Second), "tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	versions, err := conn.ApiVersions()
	if err != nil {
		t.Fatal(err)
	}
	want := map[int16][2]int16{55: {0, 2}, 80: {0, 1}, 81: {0, 0}}
	for _, v := range versions {
		if w, ok := want[v.ApiKey]; ok {
			if [2]int16{v.MinVersion, v.MaxVersion} != w {
				t.Errorf("key %d advertised v%d-%d, want v%d-%d", v.ApiKey, v.MinVersion, v.MaxVersion, w[0], w[1])
			}
			delete(want, v.ApiKey)
		}
	}
	if len(want) != 0 {
		t.Errorf("not advertised: %v", want)
	}
}
