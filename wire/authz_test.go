package wire

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// deniedPartitions answers each inter-broker RPC refused whole with the
// code as its top-level error (when the response has one) and as the
// error of the partition the request names, whatever the message's field
// names (Partition or PartitionIndex, partitions as structs or int32s).
func TestDeniedPartitionsEveryInterBrokerRPC(t *testing.T) {
	id := [16]byte{1}
	const code = 31
	reqs := []kmsg.Request{
		&kmsg.InitializeShareGroupStateRequest{Topics: []kmsg.InitializeShareGroupStateRequestTopic{{TopicID: id, Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{{Partition: 3}}}}},
		&kmsg.ReadShareGroupStateRequest{Topics: []kmsg.ReadShareGroupStateRequestTopic{{TopicID: id, Partitions: []kmsg.ReadShareGroupStateRequestTopicPartition{{Partition: 3}}}}},
		&kmsg.WriteShareGroupStateRequest{Topics: []kmsg.WriteShareGroupStateRequestTopic{{TopicID: id, Partitions: []kmsg.WriteShareGroupStateRequestTopicPartition{{Partition: 3}}}}},
		&kmsg.DeleteShareGroupStateRequest{Topics: []kmsg.DeleteShareGroupStateRequestTopic{{TopicID: id, Partitions: []kmsg.DeleteShareGroupStateRequestTopicPartition{{Partition: 3}}}}},
		&kmsg.ReadShareGroupStateSummaryRequest{Topics: []kmsg.ReadShareGroupStateSummaryRequestTopic{{TopicID: id, Partitions: []kmsg.ReadShareGroupStateSummaryRequestTopicPartition{{Partition: 3}}}}},
		&mirrormsg.ReadMirrorStatesRequest{Topics: []mirrormsg.ReadMirrorStatesRequestTopicData{{Name: "t", Partitions: []mirrormsg.ReadMirrorStatesRequestPartitionData{{PartitionIndex: 3}}}}},
		&mirrormsg.WriteMirrorStatesRequest{Topics: []mirrormsg.WriteMirrorStatesRequestTopicMetadata{{TopicName: "t", Partitions: []mirrormsg.WriteMirrorStatesRequestPartitionData{{PartitionIndex: 3}}}}},
		&mirrormsg.BumpLeaderEpochsRequest{Topics: []mirrormsg.BumpLeaderEpochsRequestTopicState{{TopicID: id, Partitions: []mirrormsg.BumpLeaderEpochsRequestLeaderEpochState{{PartitionIndex: 3}}}}},
	}
	for _, req := range reqs {
		resp := reflect.ValueOf(deniedPartitions(req, code)).Elem()
		name := NameForKey(req.Key())
		if f := resp.FieldByName("ErrorCode"); f.IsValid() && f.Int() != code {
			t.Errorf("%s: top-level error %d", name, f.Int())
		}
		topics := resp.FieldByName("Topics")
		if topics.Len() != 1 || topics.Index(0).FieldByName("Partitions").Len() != 1 {
			t.Fatalf("%s: %+v", name, resp.Interface())
		}
		p := topics.Index(0).FieldByName("Partitions").Index(0)
		idx := p.FieldByName("Partition")
		if !idx.IsValid() {
			idx = p.FieldByName("PartitionIndex")
		}
		if p.FieldByName("ErrorCode").Int() != code || idx.Int() != 3 {
			t.Errorf("%s: partition %+v", name, p.Interface())
		}
	}
}
