package acl

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// acl is one ACL or one filter: nil pointers match anything.
type acl struct {
	Principal    *string
	Host         *string
	ResourceType kmsg.ACLResourceType
	ResourceName *string
	Pattern      kmsg.ACLResourcePatternType
	Operation    kmsg.ACLOperation
	Permission   kmsg.ACLPermissionType
}

// principal is "User:alice" for "alice", as rpk's PrefixUserExcept.
func principal(p string) string {
	if strings.Contains(p, ":") {
		return p
	}
	return "User:" + p
}

type resource struct {
	typ  kmsg.ACLResourceType
	name *string
}

func (f *aclFlags) resources() []resource {
	var rs []resource
	add := func(typ kmsg.ACLResourceType, names []string) {
		for _, n := range names {
			rs = append(rs, resource{typ, &n})
		}
	}
	add(kmsg.ACLResourceTypeTopic, f.Topics)
	add(kmsg.ACLResourceTypeGroup, f.Groups)
	add(kmsg.ACLResourceTypeTransactionalId, f.TransactionalIDs)
	if f.Cluster {
		add(kmsg.ACLResourceTypeCluster, []string{"kafka-cluster"})
	}
	return rs
}

func (f *aclFlags) operations(forCreate bool) ([]kmsg.ACLOperation, error) {
	var ops []kmsg.ACLOperation
	for _, s := range f.Operations {
		op, err := kmsg.ParseACLOperation(s)
		if err != nil || op == kmsg.ACLOperationUnknown || (forCreate && op == kmsg.ACLOperationAny) {
			return nil, fmt.Errorf("--operation: unknown operation %q", s)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func (f *aclFlags) pattern(forCreate bool) (kmsg.ACLResourcePatternType, error) {
	p, err := kmsg.ParseACLResourcePatternType(f.PatternType)
	ok := err == nil && (p == kmsg.ACLResourcePatternTypeLiteral || p == kmsg.ACLResourcePatternTypePrefixed ||
		(!forCreate && (p == kmsg.ACLResourcePatternTypeAny || p == kmsg.ACLResourcePatternTypeMatch)))
	if !ok {
		want := "literal or prefixed"
		if !forCreate {
			want = "literal, prefixed, any or match"
		}
		return 0, fmt.Errorf("--resource-pattern-type: %q is not %s", f.PatternType, want)
	}
	return p, nil
}

// grantee is a principal with its permission and hosts.
type grantee struct {
	principal  *string
	permission kmsg.ACLPermissionType
	hosts      []string
}

func (f *aclFlags) grantees(filter bool) []grantee {
	var gs []grantee
	add := func(ps []string, perm kmsg.ACLPermissionType, hosts []string) {
		for _, p := range ps {
			p = principal(p)
			gs = append(gs, grantee{&p, perm, hosts})
		}
	}
	allowHosts := append(append([]string{}, f.AllowHosts...), f.Hosts...)
	denyHosts := append(append([]string{}, f.DenyHosts...), f.Hosts...)
	add(f.AllowPrincipals, kmsg.ACLPermissionTypeAllow, allowHosts)
	add(f.DenyPrincipals, kmsg.ACLPermissionTypeDeny, denyHosts)
	if filter {
		add(f.Principals, kmsg.ACLPermissionTypeAny, append(allowHosts, f.DenyHosts...))
		if len(gs) == 0 {
			// No principal: any principal, with the permission the hosts
			// given imply.
			switch {
			case len(f.AllowHosts) > 0 && len(f.DenyHosts) == 0:
				gs = append(gs, grantee{nil, kmsg.ACLPermissionTypeAllow, allowHosts})
			case len(f.DenyHosts) > 0 && len(f.AllowHosts) == 0:
				gs = append(gs, grantee{nil, kmsg.ACLPermissionTypeDeny, denyHosts})
			default:
				gs = append(gs, grantee{nil, kmsg.ACLPermissionTypeAny, append(allowHosts, f.DenyHosts...)})
			}
		}
	}
	return gs
}

// creations are the ACLs create makes: every principal x host x resource
// x operation. An error is a usage error.
func (f *aclFlags) creations() ([]acl, error) {
	pattern, err := f.pattern(true)
	if err != nil {
		return nil, err
	}
	ops, err := f.operations(true)
	if err != nil {
		return nil, err
	}
	gs, rs := f.grantees(false), f.resources()
	switch {
	case len(gs) == 0:
		return nil, fmt.Errorf("name a principal: --allow-principal or --deny-principal")
	case len(rs) == 0:
		return nil, fmt.Errorf("name a resource: --topic, --group, --transactional-id or --cluster")
	case len(ops) == 0:
		return nil, fmt.Errorf("name an operation: --operation")
	}
	var out []acl
	for _, g := range gs {
		hosts := g.hosts
		if len(hosts) == 0 {
			hosts = []string{"*"}
		}
		for _, h := range hosts {
			for _, r := range rs {
				for _, op := range ops {
					out = append(out, acl{Principal: g.principal, Host: &h, ResourceType: r.typ,
						ResourceName: r.name, Pattern: pattern, Operation: op, Permission: g.permission})
				}
			}
		}
	}
	return out, nil
}

// filters are the filters list and delete send: every principal x host x
// resource x operation given, anything where nothing is given.
func (f *aclFlags) filters() ([]acl, error) {
	pattern, err := f.pattern(false)
	if err != nil {
		return nil, err
	}
	ops, err := f.operations(false)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		ops = []kmsg.ACLOperation{kmsg.ACLOperationAny}
	}
	rs := f.resources()
	if len(rs) == 0 {
		rs = []resource{{typ: kmsg.ACLResourceTypeAny}}
	}
	var out []acl
	for _, g := range f.grantees(true) {
		hosts := []*string{nil}
		if len(g.hosts) > 0 {
			hosts = nil
			for _, h := range g.hosts {
				hosts = append(hosts, &h)
			}
		}
		for _, h := range hosts {
			for _, r := range rs {
				for _, op := range ops {
					out = append(out, acl{Principal: g.principal, Host: h, ResourceType: r.typ,
						ResourceName: r.name, Pattern: pattern, Operation: op, Permission: g.permission})
				}
			}
		}
	}
	return out, nil
}

// empty is true when no filter flag is given (delete refuses it without
// --all).
func (f *aclFlags) empty() bool {
	return len(f.AllowPrincipals)+len(f.DenyPrincipals)+len(f.Principals)+len(f.AllowHosts)+len(f.DenyHosts)+
		len(f.Hosts)+len(f.Operations)+len(f.Topics)+len(f.Groups)+len(f.TransactionalIDs) == 0 && !f.Cluster
}
