package broker_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker"
	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/raftmeta/scramcred"
)

// describeSCRAMs renders DescribeUserScramCredentials of users (all when
// none) as "user:MECH/iterations" or "user:ERROR", sorted.
func describeSCRAMs(t *testing.T, adm *kadm.Client, users ...string) string {
	t.Helper()
	ds, err := adm.DescribeUserSCRAMs(testCtx(t, 10*time.Second), users...)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds.Sorted() {
		if d.Err != nil {
			var ke *kerr.Error
			if !errors.As(d.Err, &ke) {
				t.Fatalf("describe %s: %v", d.User, d.Err)
			}
			out = append(out, d.User+":"+errName(ke.Code))
			continue
		}
		for _, c := range d.CredInfos {
			out = append(out, fmt.Sprintf("%s:%s/%d", d.User, c.Mechanism, c.Iterations))
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// scramLogin logs in on the node's SCRAM mechanism in process: what a
// SASL listener of that node would answer.
func scramLogin(t *testing.T, n *broker.Node, mech kadm.ScramMechanism, user, pass string) (principal string, err error) {
	t.Helper()
	return brokertest.ScramLogin(n, mech, user, pass)
}

// alterRaw sends an AlterUserScramCredentials kadm would refuse to build
// and returns "user:ERROR" per result, sorted.
func alterRaw(t *testing.T, cl *kgo.Client, dels []kmsg.AlterUserSCRAMCredentialsRequestDeletion, ups ...kmsg.AlterUserSCRAMCredentialsRequestUpsertion) string {
	t.Helper()
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	req.Deletions, req.Upsertions = dels, ups
	resp, err := req.RequestWith(testCtx(t, 10*time.Second), cl)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range resp.Results {
		name := "NONE"
		if r.ErrorCode != 0 {
			name = errName(r.ErrorCode)
		}
		out = append(out, r.User+":"+name)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func rawUpsert(name string, mech int8, iterations int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations = name, mech, iterations
	u.Salt, u.SaltedPassword = []byte("0123456789abcdef01234567"), make([]byte, 32)
	return u
}

func rawDelete(name string, mech int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
	d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	d.Name, d.Mechanism = name, mech
	return d
}

func TestScramCredentialsSingleNode(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 30*time.Second)
	altered, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "alice-secret"},
		{User: "bob", Mechanism: kadm.ScramSha512, Password: "bob-secret"},
	})
	if err != nil || altered.Error() != nil {
		t.Fatalf("upsert: %v %v", err, altered.Error())
	}
	if got := describeSCRAMs(t, adm); got != "alice:SCRAM-SHA-256/8192 bob:SCRAM-SHA-512/4096" {
		t.Fatalf("describe all: %s", got)
	}
	if got := describeSCRAMs(t, adm, "bob", "carol"); got != "bob:SCRAM-SHA-512/4096 carol:RESOURCE_NOT_FOUND" {
		t.Fatalf("describe named: %s", got)
	}
	// kadm keys results by user: a duplicate shows as one result.
	req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, u := range []string{"alice", "alice"} {
		ru := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		ru.Name = u
		req.Users = append(req.Users, ru)
	}
	dresp, err := req.RequestWith(ctx, b.Client(t))
	if err != nil || len(dresp.Results) != 1 || dresp.Results[0].ErrorCode != kerr.DuplicateResource.Code {
		t.Fatalf("describe a user twice: %+v %v", dresp, err)
	}

	if p, err := scramLogin(t, b.Node(), kadm.ScramSha256, "alice", "alice-secret"); err != nil || p != "User:alice" {
		t.Fatalf("alice's login: %q %v", p, err)
	}
	if _, err := scramLogin(t, b.Node(), kadm.ScramSha256, "alice", "wrong"); err == nil {
		t.Fatal("a wrong password logged in")
	}
	if _, err := scramLogin(t, b.Node(), kadm.ScramSha512, "alice", "alice-secret"); err == nil {
		t.Fatal("alice logged in with a mechanism she has no credential for")
	}

	cl := b.Client(t)
	for _, tc := range []struct {
		name string
		dels []kmsg.AlterUserSCRAMCredentialsRequestDeletion
		ups  []kmsg.AlterUserSCRAMCredentialsRequestUpsertion
		want string
	}{
		{"unknown mechanism", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{rawUpsert("u", 3, 4096)}, "u:UNSUPPORTED_SASL_MECHANISM"},
		{"too few iterations", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{rawUpsert("u", 1, 4095)}, "u:UNACCEPTABLE_CREDENTIAL"},
		{"too many iterations", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{rawUpsert("u", 2, 16385)}, "u:UNACCEPTABLE_CREDENTIAL"},
		{"empty name", nil, []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{rawUpsert("", 1, 4096)}, ":UNACCEPTABLE_CREDENTIAL"},
		{"named twice", []kmsg.AlterUserSCRAMCredentialsRequestDeletion{rawDelete("alice", 1)},
			[]kmsg.AlterUserSCRAMCredentialsRequestUpsertion{rawUpsert("alice", 2, 4096)}, "alice:DUPLICATE_RESOURCE"},
		{"missing credential", []kmsg.AlterUserSCRAMCredentialsRequestDeletion{rawDelete("bob", 1)}, nil, "bob:RESOURCE_NOT_FOUND"},
	} {
		if got := alterRaw(t, cl, tc.dels, tc.ups...); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	altered, err = adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "alice", Mechanism: kadm.ScramSha256}}, nil)
	if err != nil || altered.Error() != nil {
		t.Fatalf("delete: %v %v", err, altered.Error())
	}
	if got := describeSCRAMs(t, adm); got != "bob:SCRAM-SHA-512/4096" {
		t.Fatalf("after delete: %s", got)
	}
	if _, err := scramLogin(t, b.Node(), kadm.ScramSha256, "alice", "alice-secret"); err == nil {
		t.Fatal("a deleted credential logged in")
	}
}

// TestScramCredentialsCluster creates a credential through one node of a
// three-node cluster (forwarded to the active controller), finds it on
// every node, and again after every node was stopped and started.
func TestScramCredentialsCluster(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	for _, via := range []int32{1, 2, 3} {
		// Sent to node via itself (kadm would send it to any broker),
		// which forwards it to the active controller.
		user := fmt.Sprintf("user%d", via)
		salt := []byte("salt-of-" + user)
		salted, err := scramcred.SaltedPassword("SCRAM-SHA-512", user+"-secret", salt, int(4096+via))
		if err != nil {
			t.Fatal(err)
		}
		cl := c.Node(via).Client(t).Broker(int(via))
		alter := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		alter.Upsertions = append(alter.Upsertions, kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
			Name: user, Mechanism: int8(kadm.ScramSha512), Iterations: 4096 + via, Salt: salt, SaltedPassword: salted})
		altered, err := alter.RequestWith(testCtx(t, 20*time.Second), cl)
		if err != nil || len(altered.Results) != 1 || altered.Results[0].ErrorCode != 0 {
			t.Fatalf("upsert through node %d: %v %+v", via, err, altered)
		}
		// That node answers once it applied the write itself: its own
		// describe sees it at once.
		req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
		req.Users = append(req.Users, kmsg.DescribeUserSCRAMCredentialsRequestUser{Name: user})
		resp, err := req.RequestWith(testCtx(t, 10*time.Second), cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) != 1 || resp.Results[0].ErrorCode != 0 || len(resp.Results[0].CredentialInfos) != 1 ||
			resp.Results[0].CredentialInfos[0].Iterations != 4096+via {
			t.Fatalf("node %d right after its upsert: %+v", via, resp.Results)
		}
	}
	want := "user1:SCRAM-SHA-512/4097 user2:SCRAM-SHA-512/4098 user3:SCRAM-SHA-512/4099"
	everywhere := func(when string) {
		t.Helper()
		for _, id := range []int32{1, 2, 3} {
			adm := c.Node(id).Admin(t)
			waitUntil(t, 15*time.Second, fmt.Sprintf("%s: node %d describes %s", when, id, want), func() bool {
				return describeSCRAMs(t, adm) == want
			})
			if p, err := scramLogin(t, c.Node(id).Node(), kadm.ScramSha512, "user2", "user2-secret"); err != nil || p != "User:user2" {
				t.Fatalf("%s: login on node %d: %q %v", when, id, p, err)
			}
		}
	}
	everywhere("after creation")

	for _, b := range c.Nodes() {
		b.Stop(t)
	}
	var wg sync.WaitGroup
	for _, b := range c.Nodes() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.StartAgain(t)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	everywhere("after a restart of every node")
}
