package authz

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// naiveAllowed is StandardAuthorizer.authorize written out as a scan of
// every ACL, the reference the index must agree with.
func naiveAllowed(acls []raftmeta.ACLBinding, super map[string]bool, allowIfNone bool, principal, host string, rt kmsg.ACLResourceType, name string, op kmsg.ACLOperation) bool {
	if super[principal] {
		return true
	}
	has, allowed := false, false
	for _, a := range acls {
		if kmsg.ACLResourceType(a.ResourceType) != rt {
			continue
		}
		switch kmsg.ACLResourcePatternType(a.PatternType) {
		case kmsg.ACLResourcePatternTypeLiteral:
			if a.ResourceName != name && a.ResourceName != WildcardResource {
				continue
			}
		case kmsg.ACLResourcePatternTypePrefixed:
			if !strings.HasPrefix(name, a.ResourceName) {
				continue
			}
		}
		has = true
		if a.Principal != principal && a.Principal != WildcardPrincipal || a.Host != WildcardHost && a.Host != host {
			continue
		}
		aop, allow := kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.PermissionType) == kmsg.ACLPermissionTypeAllow
		matches := aop == kmsg.ACLOperationAll || aop == op
		if allow && !matches {
			switch op {
			case kmsg.ACLOperationDescribe:
				matches = aop == kmsg.ACLOperationRead || aop == kmsg.ACLOperationWrite || aop == kmsg.ACLOperationDelete || aop == kmsg.ACLOperationAlter
			case kmsg.ACLOperationDescribeConfigs:
				matches = aop == kmsg.ACLOperationAlterConfigs
			}
		}
		if !matches {
			continue
		}
		if !allow {
			return false
		}
		allowed = true
	}
	return allowed || !has && allowIfNone
}

// TestIndexAgreesWithScan: on random ACL sets and questions, the indexed
// decision is the reference scan's.
func TestIndexAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	names := []string{"", "a", "ab", "abc", "abd", "b", "ba", "*", "a*"}
	ops := []kmsg.ACLOperation{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	principals := []string{"User:alice", "User:bob", "User:*"}
	for round := range 300 {
		var acls []raftmeta.ACLBinding
		for range rng.IntN(12) {
			name := pick(names[1:]...)
			acls = append(acls, raftmeta.ACLBinding{
				ResourceType:   int8(2 + rng.IntN(2)),
				ResourceName:   name,
				PatternType:    int8(3 + rng.IntN(2)),
				Principal:      pick(principals...),
				Host:           pick("*", "10.0.0.1", "10.0.0.2"),
				Operation:      int8(ops[rng.IntN(len(ops))]),
				PermissionType: int8(2 + rng.IntN(2)),
			})
		}
		s := Settings{AllowEveryoneIfNoACL: rng.IntN(2) == 0}
		if rng.IntN(4) == 0 {
			s.SuperUsers = []string{"User:bob"}
		}
		a := New(s)
		idx := a.Index(acls)
		super := map[string]bool{}
		for _, p := range s.SuperUsers {
			super[p] = true
		}
		for range 50 {
			principal, host := pick("User:alice", "User:bob", "User:carol"), pick("10.0.0.1", "10.0.0.2")
			rt, name, op := kmsg.ACLResourceType(2+rng.IntN(2)), pick(names...), ops[rng.IntN(len(ops))]
			got := a.For(idx, principal, host).Allowed(rt, name, op)
			if want := naiveAllowed(acls, super, s.AllowEveryoneIfNoACL, principal, host, rt, name, op); got != want {
				t.Fatalf("round %d: %s@%s %s %s %q: index %t, scan %t\nACLs %+v", round, principal, host, op, rt, name, got, want, acls)
			}
		}
	}
}
