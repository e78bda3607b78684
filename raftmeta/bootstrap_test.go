package raftmeta

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestQuorumBootstrapRecords(t *testing.T) {
	dir := t.TempDir()
	cred := &UserScramCredentialRecord{Name: "admin", Mechanism: 2, Salt: []byte("s"), StoredKey: []byte("k"), ServerKey: []byte("v"), Iterations: 4096}
	// Records the empty image cannot take are refused up front.
	bad := &RemoveUserScramCredentialRecord{Name: "nobody", Mechanism: 2}
	if q, err := Open(Config{NodeID: 1, Dir: t.TempDir(), ClusterID: "A", BindAddr: "127.0.0.1:0", BootstrapRecords: []Record{bad}}); err == nil {
		q.Close()
		t.Fatal("Open took bootstrap records that do not apply")
	}
	// Formatting keeps them; a restart before the first election, without
	// them, still writes them.
	q := openQuorum(t, Config{NodeID: 1, Dir: dir, ClusterID: "A", BindAddr: "127.0.0.1:0", BootstrapRecords: []Record{cred}})
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	q = openQuorum(t, Config{NodeID: 1, Dir: dir, ClusterID: "A", BindAddr: "127.0.0.1:0"})
	startQuorum(t, q)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Controller().RegisterBroker(ctx, Broker{ID: 1, Endpoints: []Endpoint{{Listener: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}}}); err != nil {
		t.Fatal(err)
	}
	img := q.Image()
	if c, ok := img.ScramCredential(2, "admin"); !ok || c.Iterations != 4096 || len(img.Brokers) != 1 {
		t.Fatalf("after the first write: credential %+v %t, brokers %d", c, ok, len(img.Brokers))
	}
	// Written once: the credential deleted stays deleted across writes.
	req := alterScram(q.Controller(), []kmsg.AlterUserSCRAMCredentialsRequestDeletion{deletion("admin", 2)})
	if req != "admin:NONE" {
		t.Fatalf("delete: %s", req)
	}
	if err := q.Controller().RegisterBroker(ctx, Broker{ID: 2, Endpoints: []Endpoint{{Listener: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9093}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := q.Image().ScramCredential(2, "admin"); ok {
		t.Fatal("the bootstrap records were written again")
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	// A log that exists refuses them, as kafka-storage format refuses a
	// formatted directory.
	q2, err := Open(Config{NodeID: 1, Dir: dir, ClusterID: "A", BindAddr: "127.0.0.1:0", BootstrapRecords: []Record{cred}})
	if err == nil {
		q2.Close()
		t.Fatal("Open took bootstrap records for an existing log")
	}
	if !errors.Is(err, ErrBootstrapExistingLog) {
		t.Fatalf("error %v", err)
	}
}
