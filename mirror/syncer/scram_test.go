package syncer

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

func srcCred(name string, mech int8, fill byte) mirrormsg.DescribeScramCredentialSecretsResponseCredential {
	return mirrormsg.DescribeScramCredentialSecretsResponseCredential{
		Name: name, Mechanism: mech, Iterations: 4096, Salt: []byte("salt-" + name),
		StoredKey: bytes.Repeat([]byte{fill}, 32), ServerKey: bytes.Repeat([]byte{fill + 1}, 32),
	}
}

func dstCred(c mirrormsg.DescribeScramCredentialSecretsResponseCredential) raftmeta.ScramCredential {
	return raftmeta.ScramCredential{Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations}
}

func (p scramPlan) String() string {
	var parts []string
	for _, d := range p.deletes {
		parts = append(parts, fmt.Sprintf("-%s/%d", d.Name, d.Mechanism))
	}
	for _, u := range p.upserts {
		parts = append(parts, fmt.Sprintf("+%s/%d", u.Name, u.Mechanism))
	}
	return strings.Join(parts, " ")
}

// TestPlanScram: the reconcile rules. A selected source credential is
// upserted when the destination lacks it or differs in any of salt, keys
// and iterations; a selected destination credential the source lacks is
// deleted; excluded and unselected destination users are never touched.
func TestPlanScram(t *testing.T) {
	alice, alice2 := srcCred("alice", 1, 1), srcCred("alice", 2, 3)
	bob := srcCred("bob", 1, 5)
	changed := func(c mirrormsg.DescribeScramCredentialSecretsResponseCredential, f func(*raftmeta.ScramCredential)) raftmeta.ScramCredential {
		d := dstCred(c)
		f(&d)
		return d
	}
	type dst = map[int8]map[string]raftmeta.ScramCredential
	for _, tc := range []struct {
		name             string
		include, exclude string
		src              []mirrormsg.DescribeScramCredentialSecretsResponseCredential
		dst              dst
		want             string
	}{
		{"new users", ".*", "", []mirrormsg.DescribeScramCredentialSecretsResponseCredential{alice, alice2, bob}, nil, "+alice/1 +alice/2 +bob/1"},
		{"in sync", ".*", "", []mirrormsg.DescribeScramCredentialSecretsResponseCredential{alice, bob},
			dst{1: {"alice": dstCred(alice), "bob": dstCred(bob)}}, ""},
		{"password changed: keys", ".*", "", []mirrormsg.DescribeScramCredentialSecretsResponseCredential{alice},
			dst{1: {"alice": changed(alice, func(d *raftmeta.ScramCredential) { d.StoredKey = bob.StoredKey })}}, "+alice/1"},
		{"password changed: salt", ".*", "", []mirrormsg.DescribeScramCredentialSecretsResponseCredential{alice},
			dst{1: {"alice": changed(alice, func(d *raftmeta.ScramCredential) { d.Salt = []byte("x") })}}, "+alice/1"},
		{"iterations changed", ".*", "", []mirrormsg.DescribeScramCredentialSecretsResponseCredential{alice},
			dst{1: {"alice": changed(alice, func(d *raftmeta.ScramCredential) { d.Iterations = 8192 })}}, "+alice/1"},
		{"server key changed", ".*", "", []mirrormsg.DescribeScramCredentialSecretsResponseCredential{alice},
			dst{1: {"alice": changed(alice, func(d *raftmeta.ScramCredential) { d.ServerKey = bob.ServerKey })}}, "+alice/1"},
		{"deleted on the source: one mechanism", ".*", "", []mirrormsg.DescribeScramCredentialSecretsResponseCredential{alice},
			dst{1: {"alice": dstCred(alice)}, 2: {"alice": dstCred(alice2)}}, "-alice/2"},
		{"deleted on the source: the user", "alice,bob", "", []mirrormsg.DescribeScramCredentialSecretsResponseCredential{alice},
			dst{1: {"alice": dstCred(alice), "bob": dstCred(bob)}}, "-bob/1"},
		{"destination-only user not selected", "alice", "", []mirrormsg.DescribeScramCredentialSecretsResponseCredential{alice},
			dst{1: {"admin": dstCred(bob)}}, "+alice/1"},
		{"excluded: neither copied nor deleted", ".*", "admin,bob", []mirrormsg.DescribeScramCredentialSecretsResponseCredential{alice, bob},
			dst{1: {"admin": dstCred(bob), "bob": changed(bob, func(d *raftmeta.ScramCredential) { d.Iterations = 8192 })}}, "+alice/1"},
		{"no include: nothing", "", "", []mirrormsg.DescribeScramCredentialSecretsResponseCredential{alice},
			dst{1: {"bob": dstCred(bob)}}, ""},
	} {
		users, err := newNameFilter(tc.include, tc.exclude)
		if err != nil {
			t.Fatal(err)
		}
		if got := planScram(users, tc.src, tc.dst).String(); got != tc.want {
			t.Errorf("%s: plan %q, want %q", tc.name, got, tc.want)
		}
	}
	// A round's batch is bounded, deletions first.
	p := scramPlan{
		deletes: []mirrormsg.SyncScramCredentialsRequestDeletion{{Name: "a"}, {Name: "b"}},
		upserts: []mirrormsg.SyncScramCredentialsRequestUpsertion{{Name: "c"}, {Name: "d"}},
	}
	for n, want := range map[int]string{1: "-a/0", 2: "-a/0 -b/0", 3: "-a/0 -b/0 +c/0", 9: "-a/0 -b/0 +c/0 +d/0"} {
		if got := p.limit(n).String(); got != want {
			t.Errorf("limit(%d): %q, want %q", n, got, want)
		}
	}
}

// TestSyncScramReportsOnce: with the sync disabled the step does nothing;
// over a PLAINTEXT source link, or from a source that cannot export (an
// Apache Kafka cluster, here kfake), it writes nothing and reports the
// reason once (one error, one status), not every round.
func TestSyncScramReportsOnce(t *testing.T) {
	src := kfakeClient(t, 0)
	var writes int
	cfgs := map[string]string{"bootstrap.servers": "x:1"}
	img := mirrorImage(cfgs)
	s, err := New(Config{Mirror: "m1", Source: src, Destination: src, Image: func() *raftmeta.Image { return img },
		ScramSync: func(context.Context, *mirrormsg.SyncScramCredentialsRequest) (*mirrormsg.SyncScramCredentialsResponse, error) {
			writes++
			return mirrormsg.NewPtrSyncScramCredentialsResponse(), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	round := func() int {
		set, err := parseSettings(img.MirrorConfig("m1"))
		if err != nil {
			t.Fatal(err)
		}
		v := s.view(img)
		v.set = set
		return s.syncScram(context.Background(), v)
	}
	if n := round(); n != 0 || s.ScramSyncStatus() != "" {
		t.Fatalf("disabled: %d errors, status %q", n, s.ScramSyncStatus())
	}
	cfgs[raftmeta.MirrorScramSyncEnableConfig] = "true"
	for i, want := range []int{1, 0, 0} {
		if n := round(); n != want || !strings.Contains(s.ScramSyncStatus(), "security.protocol=PLAINTEXT") {
			t.Fatalf("PLAINTEXT link, round %d: %d errors (want %d), status %q", i, n, want, s.ScramSyncStatus())
		}
	}
	cfgs["security.protocol"] = "SSL" // the test's client is plaintext all the same
	for i, want := range []int{1, 0, 0} {
		if n := round(); n != want || !strings.Contains(s.ScramSyncStatus(), "the source cannot export SCRAM credentials") {
			t.Fatalf("kfake source, round %d: %d errors (want %d), status %q", i, n, want, s.ScramSyncStatus())
		}
	}
	if writes != 0 {
		t.Fatalf("%d writes", writes)
	}
}
