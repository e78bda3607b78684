package raftmeta

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/strait-io/strait/raftmeta/ctrlrpc"
)

// sampleRecords has one record of every type, with every field set.
func sampleRecords() []Record {
	v := "compact"
	return []Record{
		&RegisterBrokerRecord{
			BrokerID: 3, IncarnationID: Uuid{1, 2, 3}, BrokerEpoch: 77,
			EndPoints: []Endpoint{
				{Listener: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9092},
				{Listener: "SSL", SecurityProtocol: "SSL", Host: "h", Port: 9093},
			},
			Rack: "r1", Fenced: true, LogDirs: []Uuid{{4, 4}, {5, 5}},
		},
		&FenceBrokerRecord{ID: 3, Epoch: 77},
		&UnfenceBrokerRecord{ID: 3, Epoch: 78},
		&BrokerRegistrationChangeRecord{BrokerID: 3, BrokerEpoch: 78, Fenced: FenceChangeUnfence, InControlledShutdown: 1},
		&TopicRecord{Name: "orders", TopicID: Uuid{9, 9}},
		&PartitionRecord{PartitionID: 2, TopicID: Uuid{9, 9}, Replicas: []int32{3, 1, 2}, ISR: []int32{3, 1}, Leader: 3, LeaderEpoch: 4, PartitionEpoch: 5},
		&PartitionChangeRecord{PartitionID: 2, TopicID: Uuid{9, 9}, ISR: []int32{}, Leader: -1, Replicas: nil, MinLeaderEpoch: 12},
		&PartitionRecord{PartitionID: 3, TopicID: Uuid{9, 9}, Replicas: []int32{4, 3, 1}, ISR: []int32{3, 1}, Leader: 3, LeaderEpoch: 4, PartitionEpoch: 5,
			AddingReplicas: []int32{4}, RemovingReplicas: []int32{1}},
		&PartitionChangeRecord{PartitionID: 3, TopicID: Uuid{9, 9}, Leader: NoLeaderChange, Replicas: []int32{4, 3},
			AddingReplicas: []int32{}, RemovingReplicas: []int32{}},
		&UnregisterBrokerRecord{BrokerID: 3, BrokerEpoch: 78},
		&RemoveTopicRecord{TopicID: Uuid{9, 9}},
		&ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: "orders", Name: "cleanup.policy", Value: &v},
		&ConfigRecord{ResourceType: ConfigResourceBroker, ResourceName: "", Name: "log.retention.ms", Value: nil},
		&ProducerIdsRecord{BrokerID: 3, BrokerEpoch: 77, NextProducerID: 5000},
		&AccessControlEntryRecord{ACL: ACLBinding{ID: Uuid{7}, ResourceType: 2, ResourceName: "orders", PatternType: 3, Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3}},
		&RemoveAccessControlEntryRecord{ID: Uuid{7}},
		&UserScramCredentialRecord{Name: "alice", Mechanism: 2, Salt: []byte("salt"), StoredKey: []byte{1, 2, 3}, ServerKey: []byte{4, 5}, Iterations: 8192},
		&RemoveUserScramCredentialRecord{Name: "alice", Mechanism: 2},
		&ClientQuotaRecord{Entity: []QuotaEntityComponent{{Type: "user", Name: &v}, {Type: "client-id"}}, Key: "producer_byte_rate", Value: 5.5e6, Remove: true},
		&MirrorRecord{Name: "from-east", MirrorID: Uuid{5, 5}, CreateTimeMs: 1767225600000},
		&ConfigRecord{ResourceType: ConfigResourceMirror, ResourceName: "from-east", Name: "bootstrap.servers", Value: &v},
		&RemoveMirrorRecord{MirrorID: Uuid{5, 5}},
		&ForwardedRequestRecord{ID: ctrlrpc.ForwardID{Node: 2, Session: 1<<63 + 5, Seq: 77}, APIKey: 19, APIVersion: 7, Response: []byte{0, 1, 2}},
		&FeatureLevelRecord{Name: "group.version", FeatureLevel: 1},
	}
}

func TestRecordRoundTrip(t *testing.T) {
	records := sampleRecords()
	seen := map[RecordType]bool{}
	for _, r := range records {
		seen[r.Type()] = true
		got, err := DecodeRecord(EncodeRecord(nil, r))
		if err != nil {
			t.Fatalf("%s: %v", r.Type(), err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("%s: round trip\n got %#v\nwant %#v", r.Type(), got, r)
		}
	}
	for typ := range maxRecordVersion {
		if !seen[typ] {
			t.Errorf("no sample of %s", typ)
		}
	}
	batch := EncodeBatch(records)
	got, err := DecodeBatch(batch)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, records) {
		t.Errorf("batch round trip differs")
	}
	// The encoding is a function of the records alone.
	if string(EncodeBatch(got)) != string(batch) {
		t.Errorf("re-encoding changed the bytes")
	}
	if empty, err := DecodeBatch(EncodeBatch(nil)); err != nil || len(empty) != 0 {
		t.Errorf("empty batch: %v %v", empty, err)
	}
}

func TestDecodeRejects(t *testing.T) {
	good := EncodeRecord(nil, &TopicRecord{Name: "a", TopicID: Uuid{1}})
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"unknown type", []byte{42, 0}, "unknown record type 42"},
		{"unknown version", append([]byte{byte(TopicRecordType), 1}, good[2:]...), "TopicRecord version 1 not supported (max 0)"},
		{"negative version", append([]byte{byte(TopicRecordType), 0xff}, good[2:]...), "TopicRecord version -1 not supported"},
		{"truncated", good[:len(good)-1], "TopicRecord: raftmeta: corrupt record batch: length 16 exceeds the 15 bytes left"},
		{"trailing", append(append([]byte{}, good...), 0), "TopicRecord has 1 trailing bytes"},
		{"empty", nil, "truncated"},
	} {
		_, err := DecodeRecord(tc.in)
		if err == nil || !errors.Is(err, ErrCorruptBatch) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
	batch := EncodeBatch([]Record{&TopicRecord{Name: "a", TopicID: Uuid{1}}})
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"batch version", append([]byte{1}, batch[1:]...), "batch version 1 not supported (max 0)"},
		{"huge count", []byte{0, 0xff, 0xff, 0xff, 0xff, 0x0f}, "records cannot fit"},
		{"trailing", append(append([]byte{}, batch...), 9), "1 trailing bytes"},
		{"record past end", batch[:len(batch)-3], "exceeds the"},
	} {
		_, err := DecodeBatch(tc.in)
		if err == nil || !errors.Is(err, ErrCorruptBatch) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// FuzzDecodeBatch: decoding never panics, and what decodes re-encodes to
// bytes that decode to the same records.
func FuzzDecodeBatch(f *testing.F) {
	f.Add(EncodeBatch(sampleRecords()))
	f.Add(EncodeBatch(nil))
	f.Add([]byte{0, 1, 3, 2, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		records, err := DecodeBatch(b)
		if err != nil {
			return
		}
		again, err := DecodeBatch(EncodeBatch(records))
		if err != nil {
			t.Fatalf("re-encoded batch does not decode: %v", err)
		}
		if !reflect.DeepEqual(records, again) {
			t.Fatalf("re-encoded batch decodes differently")
		}
	})
}
