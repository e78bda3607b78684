package raftmeta

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/scramcred"
)

func upsertion(name string, mech int8, iterations int32, password string) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations = name, mech, iterations
	u.Salt = []byte("salt-" + name)
	if n := scramcred.MechanismName(mech); n != "" {
		u.SaltedPassword, _ = scramcred.SaltedPassword(n, password, u.Salt, int(iterations))
	} else {
		u.SaltedPassword = []byte("x")
	}
	return u
}

func deletion(name string, mech int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
	d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	d.Name, d.Mechanism = name, mech
	return d
}

func alterScram(c *Controller, dels []kmsg.AlterUserSCRAMCredentialsRequestDeletion, ups ...kmsg.AlterUserSCRAMCredentialsRequestUpsertion) string {
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	req.Deletions, req.Upsertions = dels, ups
	var out []string
	for _, r := range c.AlterUserScramCredentials(context.Background(), req).Results {
		out = append(out, fmt.Sprintf("%s:%s", r.User, codeName(r.ErrorCode)))
	}
	return strings.Join(out, " ")
}

func describeScram(c *Controller, users ...string) string {
	req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, u := range users {
		ru := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		ru.Name = u
		req.Users = append(req.Users, ru)
	}
	var out []string
	for _, r := range c.DescribeUserScramCredentials(context.Background(), req).Results {
		if r.ErrorCode != 0 {
			out = append(out, fmt.Sprintf("%s:%s", r.User, codeName(r.ErrorCode)))
			continue
		}
		for _, ci := range r.CredentialInfos {
			out = append(out, fmt.Sprintf("%s:%s/%d", r.User, scramcred.MechanismName(ci.Mechanism), ci.Iterations))
		}
	}
	return strings.Join(out, " ")
}

func TestScramCredentialsController(t *testing.T) {
	c, log := newTestController(t, Config{}, 1)
	if got := alterScram(c, nil,
		upsertion("alice", scramcred.TypeSHA256, 4096, "a"),
		upsertion("bob", scramcred.TypeSHA512, 16384, "b"),
	); got != "alice:NONE bob:NONE" {
		t.Fatalf("upsert: %s", got)
	}
	// The record keeps StoredKey and ServerKey, not the salted password.
	cred, ok := log.Image().ScramCredential(scramcred.TypeSHA256, "alice")
	sp, _ := scramcred.SaltedPassword(scramcred.SHA256, "a", []byte("salt-alice"), 4096)
	stored, server, _ := scramcred.Keys(scramcred.SHA256, sp)
	if !ok || !bytes.Equal(cred.StoredKey, stored) || !bytes.Equal(cred.ServerKey, server) || string(cred.Salt) != "salt-alice" || cred.Iterations != 4096 {
		t.Fatalf("alice's credential: %+v %t", cred, ok)
	}
	if got := alterScram(c, nil, upsertion("alice", scramcred.TypeSHA512, 8192, "a2")); got != "alice:NONE" {
		t.Fatalf("second mechanism: %s", got)
	}
	if got := describeScram(c); got != "alice:SCRAM-SHA-256/4096 alice:SCRAM-SHA-512/8192 bob:SCRAM-SHA-512/16384" {
		t.Fatalf("describe all: %s", got)
	}
	if got := describeScram(c, "bob", "carol", "alice", "bob"); got != "alice:SCRAM-SHA-256/4096 alice:SCRAM-SHA-512/8192 bob:DUPLICATE_RESOURCE carol:RESOURCE_NOT_FOUND" {
		t.Fatalf("describe named: %s", got)
	}

	for _, tc := range []struct {
		name string
		dels []kmsg.AlterUserSCRAMCredentialsRequestDeletion
		ups  []kmsg.AlterUserSCRAMCredentialsRequestUpsertion
		want string
	}{
		{"unknown mechanism", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{upsertion("u", 3, 4096, "p")}, "u:UNSUPPORTED_SASL_MECHANISM"},
		{"unknown mechanism deletion", []kmsg.AlterUserSCRAMCredentialsRequestDeletion{deletion("alice", 0)}, nil, "alice:UNSUPPORTED_SASL_MECHANISM"},
		{"too few iterations", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{upsertion("u", 1, 4095, "p")}, "u:UNACCEPTABLE_CREDENTIAL"},
		{"too many iterations", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{upsertion("u", 2, 16385, "p")}, "u:UNACCEPTABLE_CREDENTIAL"},
		{"empty name", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{upsertion("", 1, 4096, "p")}, ":UNACCEPTABLE_CREDENTIAL"},
		{"empty name deletion", []kmsg.AlterUserSCRAMCredentialsRequestDeletion{deletion("", 1)}, nil, ":UNACCEPTABLE_CREDENTIAL"},
		{"missing credential", []kmsg.AlterUserSCRAMCredentialsRequestDeletion{deletion("bob", 1)}, nil, "bob:RESOURCE_NOT_FOUND"},
		{"twice", []kmsg.AlterUserSCRAMCredentialsRequestDeletion{deletion("bob", 2)},
			[]kmsg.AlterUserSCRAMCredentialsRequestUpsertion{upsertion("bob", 1, 4096, "p"), upsertion("dave", 1, 4096, "d")}, "bob:DUPLICATE_RESOURCE dave:NONE"},
		{"twice upserted", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{upsertion("erin", 1, 4096, "p"), upsertion("erin", 2, 4096, "p")}, "erin:DUPLICATE_RESOURCE"},
	} {
		if got := alterScram(c, tc.dels, tc.ups...); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// Only dave was added; bob is untouched by the refused request.
	if got := describeScram(c, "bob", "dave", "erin"); got != "bob:SCRAM-SHA-512/16384 dave:SCRAM-SHA-256/4096 erin:RESOURCE_NOT_FOUND" {
		t.Fatalf("after refusals: %s", got)
	}
	if got := alterScram(c, []kmsg.AlterUserSCRAMCredentialsRequestDeletion{deletion("alice", 1), deletion("dave", 1)}); got != "alice:NONE dave:NONE" {
		t.Fatalf("delete: %s", got)
	}
	if got := describeScram(c); got != "alice:SCRAM-SHA-512/8192 bob:SCRAM-SHA-512/16384" {
		t.Fatalf("after delete: %s", got)
	}
	if _, ok := log.Image().Scram[scramcred.TypeSHA256]; ok {
		t.Errorf("an emptied mechanism map is kept: %v", log.Image().Scram)
	}
}

func TestScramReplayAndSnapshot(t *testing.T) {
	f := NewFSM("c", nil)
	put := func(name string, mech int8, it int32) Record {
		return &UserScramCredentialRecord{Name: name, Mechanism: mech, Salt: []byte("s" + name), StoredKey: []byte("k" + name), ServerKey: []byte("v" + name), Iterations: it}
	}
	if err := f.applyRecords(1, []Record{put("alice", 1, 4096), put("bob", 2, 8192)}); err != nil {
		t.Fatal(err)
	}
	first := f.Image()
	if err := f.applyRecords(2, []Record{put("alice", 1, 5000), &RemoveUserScramCredentialRecord{Name: "bob", Mechanism: 2}}); err != nil {
		t.Fatal(err)
	}
	// Copy-on-write: the published image is untouched.
	if c, _ := first.ScramCredential(1, "alice"); c.Iterations != 4096 {
		t.Errorf("the previous image changed: %+v", c)
	}
	if _, ok := first.ScramCredential(2, "bob"); !ok {
		t.Errorf("the previous image lost bob")
	}
	for _, bad := range []Record{
		&RemoveUserScramCredentialRecord{Name: "bob", Mechanism: 2},
		&RemoveUserScramCredentialRecord{Name: "alice", Mechanism: 2},
		put("", 1, 4096),
		put("carol", 0, 4096),
		put("carol", 3, 4096),
	} {
		if err := f.applyRecords(3, []Record{bad}); err == nil {
			t.Errorf("%#v applied", bad)
		}
	}
	var d *Delta
	cancel := f.Subscribe(func(delta *Delta, _ *Image) { d = delta })
	if err := f.applyRecords(4, []Record{put("carol", 2, 4096)}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if d == nil || !d.ScramChanged || d.Empty() {
		t.Errorf("delta %+v", d)
	}

	img := f.Image()
	got := snapshotRoundTrip(t, img)
	if !reflect.DeepEqual(got.Scram, img.Scram) {
		t.Fatalf("snapshot: %v, want %v", got.Scram, img.Scram)
	}
	if diff := diffImages(EmptyImage(), got); !diff.ScramChanged {
		t.Errorf("restoring a snapshot with credentials: delta %+v", diff)
	}
	if diff := diffImages(got, img); diff.ScramChanged {
		t.Errorf("equal credentials differ: %+v", diff)
	}
}

func TestScramWriteErrors(t *testing.T) {
	c, log := newTestController(t, Config{}, 1)
	log.mu.Lock()
	log.leader = false
	log.mu.Unlock()
	if got := alterScram(c, nil, upsertion("alice", 1, 4096, "a"), upsertion("", 1, 4096, "a")); got != "alice:NOT_CONTROLLER :UNACCEPTABLE_CREDENTIAL" {
		t.Fatalf("not the controller: %s", got)
	}
}
