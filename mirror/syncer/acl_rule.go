package syncer

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclEntry is one ACL binding as DescribeAcls returns it and CreateAcls
// and DeleteAcls take it (Kafka's AclBinding: a resource pattern and an
// access control entry).
type aclEntry struct {
	ResourceType kmsg.ACLResourceType
	ResourceName string
	PatternType  kmsg.ACLResourcePatternType
	Principal    string
	Host         string
	Operation    kmsg.ACLOperation
	Permission   kmsg.ACLPermissionType
}

func (e aclEntry) String() string {
	return fmt.Sprintf("%s:%s:%s %s@%s %s %s", e.ResourceType, e.PatternType, e.ResourceName, e.Principal, e.Host, e.Permission, e.Operation)
}

// aclRule is one mirror.acl.include rule,
// resourceType;resourceName;operation;permissionType;principal (digest
// §5.1): "*" or a missing trailing field matches anything; the name and
// the principal are regular expressions matching whole values, the others
// Kafka's enum names (raftmeta's checkACLRule validated the syntax).
type aclRule struct {
	resourceType kmsg.ACLResourceType // 0: any
	name         *regexp.Regexp       // nil: any
	operation    kmsg.ACLOperation    // 0: any
	permission   kmsg.ACLPermissionType
	principal    *regexp.Regexp
}

// parseACLRules parses mirror.acl.include (a LIST of rules).
func parseACLRules(list string) ([]aclRule, error) {
	var out []aclRule
	for _, v := range splitList(list) {
		r, err := parseACLRule(v)
		if err != nil {
			return nil, fmt.Errorf("rule %q: %w", v, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseACLRule(v string) (aclRule, error) {
	f := strings.Split(v, ";")
	if len(f) > 5 {
		return aclRule{}, fmt.Errorf("more than 5 fields (resourceType;resourceName;operation;permissionType;principal)")
	}
	field := func(i int) string {
		if i >= len(f) {
			return "*"
		}
		if s := strings.TrimSpace(f[i]); s != "" {
			return s
		}
		return "*"
	}
	var r aclRule
	var err error
	if s := field(0); s != "*" {
		if r.resourceType, err = kmsg.ParseACLResourceType(s); err != nil {
			return r, err
		}
	}
	if s := field(2); s != "*" {
		if r.operation, err = kmsg.ParseACLOperation(s); err != nil {
			return r, err
		}
	}
	if s := field(3); s != "*" {
		if r.permission, err = kmsg.ParseACLPermissionType(s); err != nil {
			return r, err
		}
	}
	if s := field(1); s != "*" {
		if r.name, err = regexp.Compile("^(?:" + s + ")$"); err != nil {
			return r, fmt.Errorf("resource name: %w", err)
		}
	}
	if s := field(4); s != "*" {
		if r.principal, err = regexp.Compile("^(?:" + s + ")$"); err != nil {
			return r, fmt.Errorf("principal: %w", err)
		}
	}
	return r, nil
}

// matches reports whether the rule selects e. ANY in a rule field is a
// wildcard too, as it is in Kafka's AclBindingFilter.
func (r aclRule) matches(e aclEntry) bool {
	switch {
	case r.resourceType > kmsg.ACLResourceTypeAny && r.resourceType != e.ResourceType:
		return false
	case r.operation > kmsg.ACLOperationAny && r.operation != e.Operation:
		return false
	case r.permission > kmsg.ACLPermissionTypeAny && r.permission != e.Permission:
		return false
	case r.name != nil && !r.name.MatchString(e.ResourceName):
		return false
	case r.principal != nil && !r.principal.MatchString(e.Principal):
		return false
	}
	return true
}

// aclSelected reports whether any rule selects e.
func aclSelected(rules []aclRule, e aclEntry) bool {
	for _, r := range rules {
		if r.matches(e) {
			return true
		}
	}
	return false
}
