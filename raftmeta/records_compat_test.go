package raftmeta

import (
	"reflect"
	"testing"
)

// A RegisterBrokerRecord written at version 0, before LogDirs, still
// decodes (metadata logs and snapshots of older nodes), with no log dirs.
func TestRegisterBrokerRecordV0Decodes(t *testing.T) {
	want := &RegisterBrokerRecord{
		BrokerID: 3, IncarnationID: Uuid{1, 2, 3}, BrokerEpoch: 77,
		EndPoints: []Endpoint{{Listener: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}},
		Rack:      "r1", Fenced: true,
	}
	// Version 0's layout (type, version, fields) ends with Fenced: drop
	// the count of LogDirs, 0, and the version.
	v1 := EncodeRecord(nil, want)
	if v1[1] != 1 || v1[len(v1)-1] != 0 {
		t.Fatalf("encoded as %v: want version 1 ending in an empty LogDirs", v1)
	}
	v0 := append([]byte(nil), v1[:len(v1)-1]...)
	v0[1] = 0
	got, err := DecodeRecord(v0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}
