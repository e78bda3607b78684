package authz

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

const (
	topic   = kmsg.ACLResourceTypeTopic
	group   = kmsg.ACLResourceTypeGroup
	cluster = kmsg.ACLResourceTypeCluster
	literal = kmsg.ACLResourcePatternTypeLiteral
	prefix  = kmsg.ACLResourcePatternTypePrefixed
	allow   = kmsg.ACLPermissionTypeAllow
	deny    = kmsg.ACLPermissionTypeDeny

	read            = kmsg.ACLOperationRead
	write           = kmsg.ACLOperationWrite
	create          = kmsg.ACLOperationCreate
	del             = kmsg.ACLOperationDelete
	alter           = kmsg.ACLOperationAlter
	describe        = kmsg.ACLOperationDescribe
	describeConfigs = kmsg.ACLOperationDescribeConfigs
	alterConfigs    = kmsg.ACLOperationAlterConfigs
	all             = kmsg.ACLOperationAll
	clusterAction   = kmsg.ACLOperationClusterAction
)

func acl(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) raftmeta.ACLBinding {
	return raftmeta.ACLBinding{ResourceType: int8(rt), ResourceName: name, PatternType: int8(pt), Principal: principal, Host: host, Operation: int8(op), PermissionType: int8(perm)}
}

type check struct {
	principal, host string
	rt              kmsg.ACLResourceType
	name            string
	op              kmsg.ACLOperation
	want            bool
}

// The cases follow Kafka's StandardAuthorizerTest and
// StandardAuthorizerDataTest (testSimpleAuthorizations,
// testDenyPrecedenceWithOperationAll, testTopicAclWithOperationAll,
// testPrefixAcls, testAllowEveryoneIfNoAclFound, testSuperUsers,
// testFindResultImplication).
func TestAuthorize(t *testing.T) {
	const alice, bob, admin, host, other = "User:alice", "User:bob", "User:admin", "192.0.2.1", "192.0.2.2"
	cases := []struct {
		name     string
		settings Settings
		acls     []raftmeta.ACLBinding
		checks   []check
	}{{
		name: "no ACLs denies by default",
		checks: []check{
			{alice, host, topic, "t", read, false},
			{alice, host, cluster, ClusterName, describe, false},
		},
	}, {
		name:     "allow.everyone.if.no.acl.found allows a resource no ACL names",
		settings: Settings{AllowEveryoneIfNoACL: true},
		acls:     []raftmeta.ACLBinding{acl(topic, "guarded", literal, bob, "*", read, allow)},
		checks: []check{
			{alice, host, topic, "open", read, true},
			{alice, host, group, "g", read, true},
			// An ACL for someone else on the resource: no longer "no ACL found".
			{alice, host, topic, "guarded", read, false},
			{bob, host, topic, "guarded", read, true},
			// ...whatever its operation: bob's READ ACL names the
			// resource, so WRITE is denied too.
			{bob, host, topic, "guarded", write, false},
		},
	}, {
		name:     "allow.everyone.if.no.acl.found: a prefixed ACL names the resource too",
		settings: Settings{AllowEveryoneIfNoACL: true},
		acls:     []raftmeta.ACLBinding{acl(topic, "pay", prefix, bob, "*", read, allow)},
		checks: []check{
			{alice, host, topic, "payments", read, false},
			{alice, host, topic, "orders", read, true},
		},
	}, {
		name:     "super users are allowed everything",
		settings: Settings{SuperUsers: []string{admin, "User:CN=broker,O=Strait"}},
		acls:     []raftmeta.ACLBinding{acl(topic, "*", literal, "User:*", "*", all, deny)},
		checks: []check{
			{admin, host, topic, "t", write, true},
			{"User:CN=broker,O=Strait", host, cluster, ClusterName, clusterAction, true},
			{alice, host, topic, "t", write, false},
		},
	}, {
		name: "literal ACL: exact name only",
		acls: []raftmeta.ACLBinding{acl(topic, "foo", literal, alice, "*", read, allow)},
		checks: []check{
			{alice, host, topic, "foo", read, true},
			{alice, host, topic, "foobar", read, false},
			{alice, host, topic, "fo", read, false},
			{bob, host, topic, "foo", read, false},
			{alice, host, group, "foo", read, false},
		},
	}, {
		name: "prefixed ACL: names starting with the prefix",
		acls: []raftmeta.ACLBinding{
			acl(topic, "foo", prefix, alice, "*", read, allow),
			acl(topic, "foob", prefix, alice, "*", write, allow),
			acl(topic, "x", prefix, alice, "*", alter, allow),
		},
		checks: []check{
			{alice, host, topic, "foo", read, true},
			{alice, host, topic, "foobar", read, true},
			{alice, host, topic, "fo", read, false},
			{alice, host, topic, "barfoo", read, false},
			{alice, host, topic, "foobar", write, true},
			{alice, host, topic, "foo", write, false},
			{alice, host, topic, "xyz", alter, true},
			{alice, host, topic, "", read, false},
		},
	}, {
		name: "wildcard resource and principal",
		acls: []raftmeta.ACLBinding{
			acl(topic, "*", literal, "User:*", "*", describe, allow),
			acl(group, "*", literal, alice, "*", read, allow),
		},
		checks: []check{
			{alice, host, topic, "anything", describe, true},
			{bob, host, topic, "anything", describe, true},
			{bob, host, topic, "anything", read, false},
			{alice, host, group, "g1", read, true},
			{bob, host, group, "g1", read, false},
			// "*" is a wildcard only as a LITERAL name.
			{alice, host, group, "*", read, true},
		},
	}, {
		name: "a prefixed * is the name *, not a wildcard",
		acls: []raftmeta.ACLBinding{acl(topic, "*", prefix, alice, "*", read, allow)},
		checks: []check{
			{alice, host, topic, "foo", read, false},
			{alice, host, topic, "*foo", read, true},
		},
	}, {
		name: "host must match exactly or be *",
		acls: []raftmeta.ACLBinding{acl(topic, "t", literal, alice, host, read, allow)},
		checks: []check{
			{alice, host, topic, "t", read, true},
			{alice, other, topic, "t", read, false},
		},
	}, {
		name: "DENY beats ALLOW, whatever the patterns",
		acls: []raftmeta.ACLBinding{
			acl(topic, "*", literal, alice, "*", all, allow),
			acl(topic, "secret", prefix, alice, "*", read, deny),
			acl(topic, "payroll", literal, "User:*", other, write, deny),
			acl(group, "g", literal, alice, "*", all, allow),
			acl(group, "g", literal, alice, "*", all, deny),
		},
		checks: []check{
			{alice, host, topic, "public", read, true},
			{alice, host, topic, "secrets", read, false},
			{alice, host, topic, "secrets", write, true},
			{alice, host, topic, "payroll", write, true},
			{alice, other, topic, "payroll", write, false},
			{alice, host, group, "g", read, false},
			{alice, host, group, "g", describe, false},
		},
	}, {
		name: "ALLOW READ, WRITE, DELETE, ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS",
		acls: []raftmeta.ACLBinding{
			acl(topic, "r", literal, alice, "*", read, allow),
			acl(topic, "w", literal, alice, "*", write, allow),
			acl(topic, "d", literal, alice, "*", del, allow),
			acl(topic, "a", literal, alice, "*", alter, allow),
			acl(topic, "c", literal, alice, "*", create, allow),
			acl(topic, "ac", literal, alice, "*", alterConfigs, allow),
			acl(topic, "dc", literal, alice, "*", describeConfigs, allow),
		},
		checks: []check{
			{alice, host, topic, "r", describe, true},
			{alice, host, topic, "w", describe, true},
			{alice, host, topic, "d", describe, true},
			{alice, host, topic, "a", describe, true},
			{alice, host, topic, "c", describe, false},
			{alice, host, topic, "ac", describeConfigs, true},
			{alice, host, topic, "ac", describe, false},
			{alice, host, topic, "dc", alterConfigs, false},
			{alice, host, topic, "w", read, false},
			{alice, host, topic, "r", write, false},
		},
	}, {
		name: "a DENY implies nothing: DENY READ leaves DESCRIBE allowed",
		acls: []raftmeta.ACLBinding{
			acl(topic, "t", literal, alice, "*", all, allow),
			acl(topic, "t", literal, alice, "*", read, deny),
			acl(topic, "u", literal, alice, "*", describe, allow),
			acl(topic, "u", literal, alice, "*", alterConfigs, deny),
			acl(topic, "u", literal, alice, "*", describeConfigs, allow),
		},
		checks: []check{
			{alice, host, topic, "t", read, false},
			{alice, host, topic, "t", describe, true},
			{alice, host, topic, "t", write, true},
			{alice, host, topic, "u", describeConfigs, true},
		},
	}, {
		name: "ALL allows every operation",
		acls: []raftmeta.ACLBinding{acl(cluster, ClusterName, literal, alice, "*", all, allow)},
		checks: []check{
			{alice, host, cluster, ClusterName, clusterAction, true},
			{alice, host, cluster, ClusterName, alterConfigs, true},
			{bob, host, cluster, ClusterName, describe, false},
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := New(tc.settings)
			idx := a.Index(tc.acls)
			for _, c := range tc.checks {
				if got := a.For(idx, c.principal, c.host).Allowed(c.rt, c.name, c.op); got != c.want {
					t.Errorf("%s from %s: %s %s %q: allowed %t, want %t", c.principal, c.host, c.op, c.rt, c.name, got, c.want)
				}
			}
		})
	}
}

// AuthorizeByResourceType (KIP-679, Kafka's AuthorizerTest
// testAuthorizeByResourceType*): some topic of the type allowed.
func TestAllowedAny(t *testing.T) {
	const alice, host = "User:alice", "192.0.2.1"
	cases := []struct {
		name string
		acls []raftmeta.ACLBinding
		want bool
	}{
		{"no ACLs", nil, false},
		{"a literal allow", []raftmeta.ACLBinding{acl(topic, "t", literal, alice, "*", write, allow)}, true},
		{"a prefixed allow", []raftmeta.ACLBinding{acl(topic, "t", prefix, alice, "*", write, allow)}, true},
		{"ALL allows", []raftmeta.ACLBinding{acl(topic, "t", literal, "User:*", "*", all, allow)}, true},
		{"another operation", []raftmeta.ACLBinding{acl(topic, "t", literal, alice, "*", read, allow)}, false},
		{"denied by the same literal", []raftmeta.ACLBinding{
			acl(topic, "t", literal, alice, "*", write, allow),
			acl(topic, "t", literal, alice, "*", write, deny),
		}, false},
		{"denied by a covering prefix", []raftmeta.ACLBinding{
			acl(topic, "tx", prefix, alice, "*", write, allow),
			acl(topic, "t", prefix, alice, "*", write, deny),
		}, false},
		{"a deny elsewhere leaves it allowed", []raftmeta.ACLBinding{
			acl(topic, "t", literal, alice, "*", write, allow),
			acl(topic, "u", literal, alice, "*", write, deny),
		}, true},
		{"a wildcard allow is not dominated by a prefix deny", []raftmeta.ACLBinding{
			acl(topic, "*", literal, alice, "*", write, allow),
			acl(topic, "*", prefix, alice, "*", write, deny),
		}, true},
		{"the wildcard deny denies all", []raftmeta.ACLBinding{
			acl(topic, "t", literal, alice, "*", write, allow),
			acl(topic, "*", literal, "User:*", "*", write, deny),
		}, false},
	}
	for _, tc := range cases {
		a := New(Settings{})
		if got := a.For(a.Index(tc.acls), alice, host).AllowedAny(topic, write); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.name, got, tc.want)
		}
	}
}

// The index of an image's ACLs is built once and reused while the slice
// is the same; a changed slice (the FSM copies it on write) rebuilds it.
func TestIndexCachedPerACLSlice(t *testing.T) {
	a := New(Settings{})
	acls := []raftmeta.ACLBinding{acl(topic, "t", literal, "User:alice", "*", read, allow)}
	first := a.Index(acls)
	if a.Index(acls) != first {
		t.Fatal("the same slice was indexed again")
	}
	changed := append(acls[:1:1], acl(topic, "u", literal, "User:alice", "*", read, allow))
	second := a.Index(changed)
	if second == first {
		t.Fatal("a changed slice reused the old index")
	}
	if !a.For(second, "User:alice", "h").Allowed(topic, "u", read) {
		t.Fatal("the new ACL is not in the rebuilt index")
	}
}

// A Produce or Fetch checks a topic per request: the check must not
// allocate or scan every ACL.
func TestAllowedDoesNotAllocate(t *testing.T) {
	var acls []raftmeta.ACLBinding
	for i := range 1000 {
		acls = append(acls, acl(topic, "team"+string(rune('a'+i%26))+"-"+string(rune('a'+i/26%26)), prefix, "User:alice", "*", read, allow))
	}
	acls = append(acls, acl(topic, "orders", literal, "User:alice", "*", write, allow))
	a := New(Settings{})
	r := a.For(a.Index(acls), "User:alice", "192.0.2.1")
	var ok bool
	if n := testing.AllocsPerRun(100, func() { ok = r.Allowed(topic, "orders", write) && r.Allowed(topic, "teamq-b-1", read) }); n != 0 {
		t.Fatalf("Allowed allocates %v times per call", n)
	}
	if !ok {
		t.Fatal("not allowed")
	}
}

func BenchmarkAllowed(b *testing.B) {
	var acls []raftmeta.ACLBinding
	for i := range 10000 {
		acls = append(acls, acl(topic, "t"+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676%26)), literal, "User:alice", "*", read, allow))
	}
	acls = append(acls, acl(topic, "orders", prefix, "User:alice", "*", write, allow))
	a := New(Settings{})
	r := a.For(a.Index(acls), "User:alice", "192.0.2.1")
	b.ReportAllocs()
	for b.Loop() {
		r.Allowed(topic, "orders-eu", write)
	}
}
