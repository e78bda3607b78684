package acl

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

func TestMain(m *testing.M) { os.Exit(ctltest.Main(m)) }

// aclsOf lists every ACL of the target through a kgo client, as
// "PERMISSION principal host TYPE:name PATTERN OPERATION" sorted.
func aclsOf(t *testing.T, tg ctltest.Target) []string {
	t.Helper()
	// Every ACL: the all-ANY filter, sent as is.
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(ctltest.Context(t), ctltest.KgoClient(t, tg))
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range resp.Resources {
		for _, d := range r.ACLs {
			out = append(out, strings.Join([]string{d.PermissionType.String(), d.Principal, d.Host,
				r.ResourceType.String() + ":" + r.ResourceName, r.ResourcePatternType.String(), d.Operation.String()}, " "))
		}
	}
	sort.Strings(out)
	return out
}

func rowsOf(t *testing.T, r ctltest.Result) []row {
	t.Helper()
	var rows []row
	if err := json.Unmarshal([]byte(r.Stdout), &rows); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	return rows
}

func rowStrings(rows []row) []string {
	var out []string
	for _, d := range rows {
		out = append(out, strings.Join([]string{d.Permission, d.Principal, d.Host,
			d.ResourceType + ":" + d.ResourceName, d.PatternType, d.Operation}, " "))
	}
	sort.Strings(out)
	return out
}

func same(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// TestACL: create (table and --json), list with filters (principal,
// match), delete printing what matched (and --dry-run deleting nothing),
// each checked against what kadm reads back.
func TestACL(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			r := ctltest.Must(t, tg, "", "acl", "create", "--allow-principal", "alice", "--operation", "read,describe", "--topic", "orders")
			for _, want := range []string{"PRINCIPAL", "RESOURCE-PATTERN-TYPE", "ERROR", "User:alice"} {
				if !strings.Contains(r.Stdout, want) {
					t.Fatalf("create table lacks %q\n%s", want, r)
				}
			}
			rows := rowsOf(t, ctltest.Must(t, tg, "", "acl", "create", "--deny-principal", "User:bob", "--deny-host", "10.0.0.7",
				"--operation", "write", "--topic", "ord", "--resource-pattern-type", "prefixed", "--json"))
			if len(rows) != 1 || rows[0] != (row{Principal: "User:bob", Host: "10.0.0.7", ResourceType: "TOPIC", ResourceName: "ord",
				PatternType: "PREFIXED", Operation: "WRITE", Permission: "DENY"}) {
				t.Fatalf("%+v", rows)
			}
			ctltest.Must(t, tg, "", "acl", "create", "--allow-principal", "carol", "--operation", "read", "--group", "billing")
			want := []string{
				"ALLOW User:alice * TOPIC:orders LITERAL DESCRIBE",
				"ALLOW User:alice * TOPIC:orders LITERAL READ",
				"ALLOW User:carol * GROUP:billing LITERAL READ",
				"DENY User:bob 10.0.0.7 TOPIC:ord PREFIXED WRITE",
			}
			if got := aclsOf(t, tg); !same(got, want) {
				t.Fatalf("kadm reads %q, want %q", got, want)
			}

			if got := rowStrings(rowsOf(t, ctltest.Must(t, tg, "", "acl", "list", "--json"))); !same(got, want) {
				t.Fatalf("list: %q", got)
			}
			if got := rowStrings(rowsOf(t, ctltest.Must(t, tg, "", "acl", "list", "--principal", "alice", "--json"))); !same(got, want[:2]) {
				t.Fatalf("list --principal alice: %q", got)
			}
			// match: the ACLs that apply to topic orders, the prefixed
			// one on "ord" too.
			got := rowStrings(rowsOf(t, ctltest.Must(t, tg, "", "acl", "list", "--topic", "orders", "--resource-pattern-type", "match", "--json")))
			wantMatch := []string{want[0], want[1], want[3]}
			if tg.Name == "kfake" {
				// kfake's DescribeAcls takes MATCH as the exact name: no
				// prefixed or wildcard ACL applies.
				wantMatch = want[:2]
			}
			if !same(got, wantMatch) {
				t.Fatalf("list match orders: %q", got)
			}
			r = ctltest.Must(t, tg, "", "acl", "list", "--group", "billing")
			if !strings.Contains(r.Stdout, "User:carol") || strings.Contains(r.Stdout, "alice") || strings.Contains(r.Stdout, "ERROR") {
				t.Fatalf("%s", r)
			}

			r = ctltest.Must(t, tg, "", "acl", "delete", "--principal", "bob", "--dry-run")
			if !strings.Contains(r.Stdout, "User:bob") || len(aclsOf(t, tg)) != 4 {
				t.Fatalf("dry run: %s", r)
			}
			rows = rowsOf(t, ctltest.Must(t, tg, "", "acl", "delete", "--allow-principal", "alice", "--operation", "read", "--json"))
			if got := rowStrings(rows); !same(got, want[1:2]) || rows[0].Error != "" {
				t.Fatalf("delete printed %q", got)
			}
			r = ctltest.Must(t, tg, "", "acl", "delete", "--topic", "ord")
			if !strings.Contains(r.Stdout, "User:bob") {
				t.Fatalf("%s", r)
			}
			if got := aclsOf(t, tg); !same(got, []string{want[0], want[2]}) {
				t.Fatalf("after delete kadm reads %q", got)
			}
			r = ctltest.Must(t, tg, "", "acl", "delete", "--all", "--json")
			if len(rowsOf(t, r)) != 2 || len(aclsOf(t, tg)) != 0 {
				t.Fatalf("delete --all: %s", r)
			}
		})
	}
}

// TestACLPerItemError: one ACL of two refused is printed with its error,
// on stderr, and exit 1; the other is created.
func TestACLPerItemError(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			// Strait (as Kafka) refuses an empty resource name; kfake does
			// not, but refuses operations it does not know.
			args := []string{"acl", "create", "--allow-principal", "alice", "--operation", "read", "--topic", "orders", "--topic", ""}
			if tg.Name == "kfake" {
				args = []string{"acl", "create", "--allow-principal", "alice", "--operation", "read,create_tokens", "--topic", "orders"}
			}
			r := ctltest.Run(t, tg, "", args...)
			if r.Code != 1 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "INVALID_REQUEST") ||
				!strings.Contains(r.Stdout, "INVALID_REQUEST") {
				t.Fatalf("%s", r)
			}
			if got := aclsOf(t, tg); !same(got, []string{"ALLOW User:alice * TOPIC:orders LITERAL READ"}) {
				t.Fatalf("kadm reads %q", got)
			}
		})
	}
}

// TestACLErrors: usage errors exit 2 naming the problem; an unreachable
// cluster exits 1 with one line.
func TestACLErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"acl", "create", "--allow-principal", "a", "--operation", "reed", "--topic", "t"}, `--operation: unknown operation "reed"`},
		{[]string{"acl", "create", "--allow-principal", "a", "--operation", "read"}, "name a resource"},
		{[]string{"acl", "create", "--operation", "read", "--topic", "t"}, "name a principal"},
		{[]string{"acl", "create", "--allow-principal", "a", "--topic", "t"}, "name an operation"},
		{[]string{"acl", "create", "--allow-principal", "a", "--operation", "read", "--topic", "t", "--resource-pattern-type", "match"},
			`--resource-pattern-type: "match" is not literal or prefixed`},
		{[]string{"acl", "list", "--resource-pattern-type", "glob"}, `"glob" is not literal, prefixed, any or match`},
		{[]string{"acl", "delete"}, "no filter would delete every ACL"},
		{[]string{"acl", "list", "--bogus"}, "flag provided but not defined: -bogus"},
	} {
		r := ctltest.Run(t, ctltest.Target{Brokers: "127.0.0.1:1"}, "", c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("want exit 2 and %q\n%s", c.want, r)
		}
	}
	for _, args := range [][]string{{"acl", "--help"}, {"acl", "create", "--help"}} {
		r := ctltest.Run(t, ctltest.Target{}, "", args...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "strait acl create --allow-principal alice --operation read,describe --topic orders") {
			t.Errorf("%s", r)
		}
	}
	for _, args := range [][]string{{"acl", "list"}, {"acl", "delete", "--all"},
		{"acl", "create", "--allow-principal", "a", "--operation", "read", "--topic", "t"}} {
		r := ctltest.Run(t, ctltest.Target{Brokers: "127.0.0.1:1"}, "", append(args, "--timeout", "3s")...)
		if r.Code != 1 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "127.0.0.1:1") {
			t.Errorf("unreachable: %s", r)
		}
	}
}
