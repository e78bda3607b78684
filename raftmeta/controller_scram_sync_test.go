package raftmeta

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/raftmeta/scramcred"
)

func syncUpsertion(name string, mech int8, iterations int32, fill byte) mirrormsg.SyncScramCredentialsRequestUpsertion {
	size := scramKeySize(mech)
	return mirrormsg.SyncScramCredentialsRequestUpsertion{
		Name: name, Mechanism: mech, Iterations: iterations, Salt: []byte("salt-" + name),
		StoredKey: bytes.Repeat([]byte{fill}, size), ServerKey: bytes.Repeat([]byte{fill + 1}, size),
	}
}

func syncScram(c *Controller, mirror string, dels []mirrormsg.SyncScramCredentialsRequestDeletion, ups ...mirrormsg.SyncScramCredentialsRequestUpsertion) (string, string) {
	req := mirrormsg.NewPtrSyncScramCredentialsRequest()
	req.MirrorName, req.Upsertions, req.Deletions = mirror, ups, dels
	resp := c.scram.SyncScramCredentials(context.Background(), req)
	return mirrorCode(resp.ErrorCode), deref(resp.ErrorMessage)
}

// SyncScramCredentials writes the keys it is given as they are, only for
// a mirror that exists with the sync enabled, and refuses a malformed
// credential (naming its user) without writing any of the batch.
func TestSyncScramCredentials(t *testing.T) {
	c, log := newTestController(t, Config{}, 1)
	alice := syncUpsertion("alice", scramcred.TypeSHA512, 8192, 7)

	if code, _ := syncScram(c, "north", nil, alice); code != mirrormsg.UnknownClusterMirror.Message {
		t.Fatalf("unknown mirror: %s", code)
	}
	mustCreateMirror(t, c, "off")
	if code, msg := syncScram(c, "off", nil, alice); code != "CLUSTER_AUTHORIZATION_FAILED" || !strings.Contains(msg, MirrorScramSyncEnableConfig) {
		t.Fatalf("sync disabled: %s %s", code, msg)
	}
	mustCreateMirror(t, c, "m", "bootstrap.servers", "source:9092", MirrorScramSyncEnableConfig, "true")

	for _, bad := range []struct {
		name string
		up   mirrormsg.SyncScramCredentialsRequestUpsertion
		want string
	}{
		{"short key", func() mirrormsg.SyncScramCredentialsRequestUpsertion {
			u := syncUpsertion("bob", scramcred.TypeSHA512, 8192, 1)
			u.StoredKey = u.StoredKey[:32]
			return u
		}(), "UNACCEPTABLE_CREDENTIAL"},
		{"few iterations", syncUpsertion("bob", scramcred.TypeSHA256, 100, 1), "UNACCEPTABLE_CREDENTIAL"},
		{"no salt", func() mirrormsg.SyncScramCredentialsRequestUpsertion {
			u := syncUpsertion("bob", scramcred.TypeSHA256, 4096, 1)
			u.Salt = nil
			return u
		}(), "UNACCEPTABLE_CREDENTIAL"},
		{"mechanism", syncUpsertion("bob", 3, 4096, 1), "UNSUPPORTED_SASL_MECHANISM"},
		{"empty name", syncUpsertion("", scramcred.TypeSHA256, 4096, 1), "UNACCEPTABLE_CREDENTIAL"},
		{"twice", alice, "DUPLICATE_RESOURCE"},
	} {
		if code, msg := syncScram(c, "m", nil, alice, bad.up); code != bad.want {
			t.Errorf("%s: %s %s, want %s", bad.name, code, msg, bad.want)
		}
	}
	if len(log.Image().Scram) != 0 {
		t.Fatalf("a refused batch wrote credentials: %v", log.Image().Scram)
	}

	bob := syncUpsertion("bob", scramcred.TypeSHA256, 4096, 3)
	if code, msg := syncScram(c, "m", nil, alice, bob); code != "NONE" {
		t.Fatalf("sync: %s %s", code, msg)
	}
	got, ok := log.Image().ScramCredential(scramcred.TypeSHA512, "alice")
	if !ok || !bytes.Equal(got.Salt, alice.Salt) || !bytes.Equal(got.StoredKey, alice.StoredKey) || !bytes.Equal(got.ServerKey, alice.ServerKey) || got.Iterations != 8192 {
		t.Fatalf("alice on the destination: %v %t", got, ok)
	}
	// Deleting bob and a credential that is not there.
	dels := []mirrormsg.SyncScramCredentialsRequestDeletion{{Name: "bob", Mechanism: scramcred.TypeSHA256}, {Name: "carol", Mechanism: scramcred.TypeSHA256}}
	if code, msg := syncScram(c, "m", dels); code != "NONE" {
		t.Fatalf("delete: %s %s", code, msg)
	}
	if _, ok := log.Image().ScramCredential(scramcred.TypeSHA256, "bob"); ok {
		t.Fatal("bob was not deleted")
	}
	if _, ok := log.Image().ScramCredential(scramcred.TypeSHA512, "alice"); !ok {
		t.Fatal("alice was deleted")
	}

	// A user the mirror's rules do not select is refused, upsert or
	// deletion, and nothing of the batch is written.
	mustCreateMirror(t, c, "ex", "bootstrap.servers", "source:9092", MirrorScramSyncEnableConfig, "true",
		"mirror.scram.users.exclude", "admin.*")
	if code, msg := syncScram(c, "ex", nil, syncUpsertion("carol", scramcred.TypeSHA256, 4096, 1), syncUpsertion("admin1", scramcred.TypeSHA256, 4096, 1)); code != "POLICY_VIOLATION" || !strings.Contains(msg, "admin1") {
		t.Fatalf("excluded upsert: %s %s", code, msg)
	}
	if code, msg := syncScram(c, "ex", []mirrormsg.SyncScramCredentialsRequestDeletion{{Name: "admin", Mechanism: scramcred.TypeSHA256}}); code != "POLICY_VIOLATION" {
		t.Fatalf("excluded deletion: %s %s", code, msg)
	}
	if _, ok := log.Image().ScramCredential(scramcred.TypeSHA256, "carol"); ok {
		t.Fatal("a refused batch wrote carol")
	}

	// The export returns exactly what the log holds.
	exp := DescribeScramCredentialSecrets(log.Image(), mirrormsg.NewPtrDescribeScramCredentialSecretsRequest())
	if len(exp.Credentials) != 1 || exp.Credentials[0].Name != "alice" || !bytes.Equal(exp.Credentials[0].StoredKey, alice.StoredKey) {
		t.Fatalf("export: %v", exp.Credentials)
	}
	req := mirrormsg.NewPtrDescribeScramCredentialSecretsRequest()
	req.Mechanisms = []int8{scramcred.TypeSHA256}
	if exp := DescribeScramCredentialSecrets(log.Image(), req); len(exp.Credentials) != 0 {
		t.Fatalf("export of SHA-256 only: %v", exp.Credentials)
	}
}
