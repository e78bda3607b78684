package syncer

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func entry(rt kmsg.ACLResourceType, name, principal string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) aclEntry {
	return aclEntry{ResourceType: rt, ResourceName: name, PatternType: kmsg.ACLResourcePatternTypeLiteral,
		Principal: principal, Host: "*", Operation: op, Permission: perm}
}

func TestACLRules(t *testing.T) {
	const topic, group = kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup
	const read, write = kmsg.ACLOperationRead, kmsg.ACLOperationWrite
	const allow, deny = kmsg.ACLPermissionTypeAllow, kmsg.ACLPermissionTypeDeny
	aliceOrders := entry(topic, "orders-eu", "User:alice", read, allow)
	for _, tc := range []struct {
		rules string
		e     aclEntry
		want  bool
	}{
		{"*", aliceOrders, true},
		{"TOPIC", aliceOrders, true},
		{"GROUP", aliceOrders, false},
		{"topic;orders.*", aliceOrders, true}, // enum names in any case
		{"TOPIC;orders", aliceOrders, false},  // whole names
		{"TOPIC;orders.*;WRITE", aliceOrders, false},
		{"TOPIC;orders.*;READ;DENY", aliceOrders, false},
		{"TOPIC;orders.*;READ;ALLOW;User:alice", aliceOrders, true},
		{"TOPIC;orders.*;*;*;User:(bob|carol)", aliceOrders, false},
		{"*;*;*;*;User:a.*", aliceOrders, true},
		{"TOPIC; ;READ", aliceOrders, true}, // an empty field is a wildcard
		// Several rules: any one selects.
		{"GROUP;g.*, TOPIC;orders.*;*;*;User:alice", aliceOrders, true},
		{"GROUP;g.*,TOPIC;x", entry(group, "g1", "User:x", read, deny), true},
		{"GROUP;g.*,TOPIC;x", entry(group, "h1", "User:x", write, allow), false},
		{"", aliceOrders, false}, // no rules select nothing
	} {
		rules, err := parseACLRules(tc.rules)
		if err != nil {
			t.Fatalf("%q: %v", tc.rules, err)
		}
		if got := aclSelected(rules, tc.e); got != tc.want {
			t.Errorf("rules %q select %v: %v, want %v", tc.rules, tc.e, got, tc.want)
		}
	}
	for _, bad := range []string{"TABLE", "TOPIC;(", "TOPIC;x;EAT", "TOPIC;x;READ;MAYBE", "TOPIC;x;READ;ALLOW;(", "*;*;*;*;*;*"} {
		if _, err := parseACLRules(bad); err == nil {
			t.Errorf("rule %q parsed", bad)
		}
	}
}

func TestPlanACLs(t *testing.T) {
	const topic, read, allow = kmsg.ACLResourceTypeTopic, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	rules, _ := parseACLRules("TOPIC;orders.*")
	a := entry(topic, "orders1", "User:a", read, allow)
	b := entry(topic, "orders2", "User:b", read, allow)
	other := entry(topic, "other", "User:a", read, allow)
	operator := entry(topic, "orders3", "User:op", read, allow)
	stale := entry(topic, "orders4", "User:old", read, allow)
	s := &Syncer{}
	str := func(es []aclEntry) string { return fmt.Sprint(len(es), es) }

	// First round (a new syncer): a, already on the destination, is
	// adopted; the destination's others, selected by the rules or not,
	// are not its own: stale may be an operator's.
	create, del := s.planACLs(rules, []aclEntry{a, b, other}, []aclEntry{a, stale, operator})
	if str(create) != str([]aclEntry{b}) || len(del) != 0 {
		t.Fatalf("first round: create %v delete %v", create, del)
	}
	s.owned[b] = true // created
	// Source ACLs deleted: deleted on the destination; the operator's
	// stay.
	create, del = s.planACLs(rules, []aclEntry{other}, []aclEntry{a, b, stale, operator})
	if len(create) != 0 || str(del) != str([]aclEntry{a, b}) {
		t.Fatalf("second round: create %v delete %v", create, del)
	}
	// Deleted by someone else before the syncer got to it: forgotten,
	// not deleted again.
	create, del = s.planACLs(rules, []aclEntry{other}, []aclEntry{stale, operator})
	if len(create) != 0 || len(del) != 0 || len(s.owned) != 0 {
		t.Fatalf("third round: create %v delete %v owned %v", create, del, s.owned)
	}
	// A source ACL outside the rules is never wanted, a rule change
	// makes owned ACLs unwanted.
	s.owned[a] = true
	narrow, _ := parseACLRules("TOPIC;none")
	create, del = s.planACLs(narrow, []aclEntry{a}, []aclEntry{a})
	if len(create) != 0 || str(del) != str([]aclEntry{a}) {
		t.Fatalf("narrowed rules: create %v delete %v", create, del)
	}
}
