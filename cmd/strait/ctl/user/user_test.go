package user

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

func TestMain(m *testing.M) { os.Exit(ctltest.Main(m)) }

// scramsOf is every credential kadm reads, "user MECHANISM iterations"
// sorted.
func scramsOf(t *testing.T, tg ctltest.Target) []string {
	t.Helper()
	described, err := kadm.NewClient(ctltest.KgoClient(t, tg)).DescribeUserSCRAMs(ctltest.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range described {
		if d.Err != nil {
			t.Fatal(d.Err)
		}
		for _, ci := range d.CredInfos {
			out = append(out, strings.Join([]string{d.User, ci.Mechanism.String(), itoa(ci.Iterations)}, " "))
		}
	}
	sort.Strings(out)
	return out
}

func itoa(n int32) string { b, _ := json.Marshal(n); return string(b) }

// login checks a password against Strait's SCRAM mechanism (what its SASL
// listeners check); kfake's is not reachable without a SASL listener.
func login(t *testing.T, tg ctltest.Target, mech kadm.ScramMechanism, user, pass string) error {
	t.Helper()
	if tg.Strait == nil {
		return nil
	}
	_, err := brokertest.ScramLogin(tg.Strait.Node(), mech, user, pass)
	return err
}

func same(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// TestUser: create (both mechanisms, iterations, password from stdin),
// refusing an existing credential without --update, list (table, --json,
// by name), delete of every mechanism and of one, each checked with kadm
// (and on Strait by a SCRAM login with the password).
func TestUser(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			r := ctltest.Must(t, tg, "", "user", "create", "alice", "--password", "s3cret")
			if !strings.Contains(r.Stdout, "USER") || !strings.Contains(r.Stdout, "SCRAM-SHA-256") {
				t.Fatalf("%s", r)
			}
			var creds []credential
			r = ctltest.Must(t, tg, "pw-from-stdin\n", "user", "create", "bob", "--password", "-", "--mechanism", "scram-sha-512",
				"--iterations", "8192", "--json")
			if err := json.Unmarshal([]byte(r.Stdout), &creds); err != nil || len(creds) != 1 ||
				creds[0] != (credential{User: "bob", Mechanism: "SCRAM-SHA-512", Iterations: 8192}) {
				t.Fatalf("%v %+v\n%s", err, creds, r)
			}
			ctltest.Must(t, tg, "", "user", "create", "alice", "--password", "other", "--mechanism", "SCRAM-SHA-512")
			want := []string{"alice SCRAM-SHA-256 4096", "alice SCRAM-SHA-512 4096", "bob SCRAM-SHA-512 8192"}
			if got := scramsOf(t, tg); !same(got, want) {
				t.Fatalf("kadm reads %q", got)
			}
			if err := login(t, tg, kadm.ScramSha512, "bob", "pw-from-stdin"); err != nil {
				t.Fatalf("bob's login: %v", err)
			}

			r = ctltest.Run(t, tg, "", "user", "create", "alice", "--password", "changed")
			if r.Code != 1 || !strings.Contains(r.Stderr, "user alice already has a SCRAM-SHA-256 credential") {
				t.Fatalf("%s", r)
			}
			if err := login(t, tg, kadm.ScramSha256, "alice", "s3cret"); err != nil {
				t.Fatalf("the refused create changed the password: %v", err)
			}
			ctltest.Must(t, tg, "", "user", "create", "alice", "--password", "changed", "--update")
			if err := login(t, tg, kadm.ScramSha256, "alice", "changed"); err != nil {
				t.Fatalf("--update: %v", err)
			}

			r = ctltest.Must(t, tg, "", "user", "list")
			for _, w := range []string{"USER", "MECHANISM", "ITERATIONS", "alice", "bob", "8192"} {
				if !strings.Contains(r.Stdout, w) {
					t.Fatalf("list lacks %q\n%s", w, r)
				}
			}
			creds = nil
			r = ctltest.Must(t, tg, "", "user", "list", "bob", "--json")
			if err := json.Unmarshal([]byte(r.Stdout), &creds); err != nil || len(creds) != 1 || creds[0].User != "bob" {
				t.Fatalf("%v %+v\n%s", err, creds, r)
			}

			r = ctltest.Must(t, tg, "", "user", "delete", "alice")
			if strings.Count(r.Stdout, "alice") != 2 {
				t.Fatalf("delete printed %s", r)
			}
			ctltest.Must(t, tg, "", "user", "delete", "bob", "--mechanism", "SCRAM-SHA-512")
			if got := scramsOf(t, tg); len(got) != 0 {
				t.Fatalf("after delete kadm reads %q", got)
			}
			if err := login(t, tg, kadm.ScramSha256, "alice", "changed"); err == nil && tg.Strait != nil {
				t.Fatal("alice still logs in after delete")
			}
		})
	}
}

// TestUserMissing: deleting or listing a user that does not exist names
// it with RESOURCE_NOT_FOUND and exits 1; the other users are still done.
func TestUserMissing(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			ctltest.Must(t, tg, "", "user", "create", "carol", "--password", "pw")
			r := ctltest.Run(t, tg, "", "user", "delete", "carol", "ghost")
			if r.Code != 1 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "ghost: RESOURCE_NOT_FOUND") ||
				!strings.Contains(r.Stdout, "carol") {
				t.Fatalf("%s", r)
			}
			if got := scramsOf(t, tg); len(got) != 0 {
				t.Fatalf("carol not deleted: %q", got)
			}
			r = ctltest.Run(t, tg, "", "user", "list", "ghost", "--json")
			if r.Code != 1 || !strings.Contains(r.Stdout, `"error": "RESOURCE_NOT_FOUND"`) {
				t.Fatalf("%s", r)
			}
		})
	}
}

// TestUserErrors: usage errors exit 2 naming the problem; an unreachable
// cluster exits 1 with one line.
func TestUserErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"user", "create", "a"}, "--password is required"},
		{[]string{"user", "create", "a", "--password", "p", "--mechanism", "PLAIN"}, `--mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512, got "PLAIN"`},
		{[]string{"user", "create", "a", "--password", "p", "--iterations", "100"}, "--iterations must be 4096 to 16384, got 100"},
		{[]string{"user", "create"}, "missing argument"},
		{[]string{"user", "delete", "a", "--mechanism", "md5"}, "--mechanism must be"},
		{[]string{"user", "list", "--bogus"}, "flag provided but not defined: -bogus"},
	} {
		r := ctltest.Run(t, ctltest.Target{Brokers: "127.0.0.1:1"}, "", c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("want exit 2 and %q\n%s", c.want, r)
		}
	}
	for _, args := range [][]string{{"user", "--help"}, {"user", "create", "--help"}} {
		r := ctltest.Run(t, ctltest.Target{}, "", args...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "strait user create alice --password s3cret") {
			t.Errorf("%s", r)
		}
	}
	for _, args := range [][]string{{"user", "list"}, {"user", "delete", "a"}, {"user", "create", "a", "--password", "p"}} {
		r := ctltest.Run(t, ctltest.Target{Brokers: "127.0.0.1:1"}, "", append(args, "--timeout", "3s")...)
		if r.Code != 1 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "127.0.0.1:1") {
			t.Errorf("unreachable: %s", r)
		}
	}
}
