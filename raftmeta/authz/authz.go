// Package authz is the ACL decision engine: Kafka's StandardAuthorizer
// semantics (StandardAuthorizerData) over the ACL bindings of a metadata
// image. It is pure: no IO, no clock; the wire layer asks it, per request,
// whether a principal connected from a host may perform an operation on a
// resource.
package authz

import (
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// ClassName is the only authorizer.class.name Strait implements: Kafka's
// KRaft authorizer, whose ACLs live in the metadata log.
const ClassName = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

// Wildcards of Kafka's ResourcePattern.WILDCARD_RESOURCE,
// KafkaPrincipal.WILDCARD and AclEntry.WILDCARD_HOST.
const (
	WildcardResource  = "*"
	WildcardPrincipal = "User:*"
	WildcardHost      = "*"
)

// ClusterName is the only name of the CLUSTER resource.
const ClusterName = "kafka-cluster"

// Settings are the authorizer's configs.
type Settings struct {
	// SuperUsers is super.users: principals allowed everything.
	SuperUsers []string
	// AllowEveryoneIfNoACL is allow.everyone.if.no.acl.found: a resource
	// no ACL matches at all (of any principal) is allowed.
	AllowEveryoneIfNoACL bool
}

// Authorizer decides with Settings over the newest ACLs it was given. It
// is safe for concurrent use; the index of an ACL set is built once and
// reused while the image's ACL slice is unchanged (the metadata FSM copies
// it on write, so an unchanged slice is the same array).
type Authorizer struct {
	super       map[string]bool
	allowIfNone bool
	cached      atomic.Pointer[Index]
}

// New returns an authorizer with s.
func New(s Settings) *Authorizer {
	a := &Authorizer{super: map[string]bool{}, allowIfNone: s.AllowEveryoneIfNoACL}
	for _, p := range s.SuperUsers {
		a.super[p] = true
	}
	return a
}

// IsSuperUser reports whether principal is in super.users.
func (a *Authorizer) IsSuperUser(principal string) bool { return a.super[principal] }

// Index returns the index of acls, building it when acls is not the slice
// the cached index was built from.
func (a *Authorizer) Index(acls []raftmeta.ACLBinding) *Index {
	if idx := a.cached.Load(); idx != nil && idx.same(acls) {
		return idx
	}
	idx := NewIndex(acls)
	a.cached.Store(idx)
	return idx
}

// Request is one client's view: the checks of one request.
type Request struct {
	a         *Authorizer
	idx       *Index
	principal string
	host      string
	super     bool
}

// For returns the checker of a request from principal at host against idx.
func (a *Authorizer) For(idx *Index, principal, host string) Request {
	return Request{a: a, idx: idx, principal: principal, host: host, super: a.super[principal]}
}

// Allowed is StandardAuthorizer.authorize for one LITERAL resource.
func (r Request) Allowed(rt kmsg.ACLResourceType, name string, op kmsg.ACLOperation) bool {
	if r.super {
		return true
	}
	return r.idx.authorize(r.principal, r.host, rt, name, op, r.a.allowIfNone)
}

// AllowedAny is Authorizer.authorizeByResourceType: whether some resource
// of type rt is allowed op (InitProducerId's idempotent check: WRITE on
// any topic).
func (r Request) AllowedAny(rt kmsg.ACLResourceType, op kmsg.ACLOperation) bool {
	if r.super {
		return true
	}
	return r.idx.authorizeByType(r.principal, r.host, rt, op)
}

// Principal is the request's principal.
func (r Request) Principal() string { return r.principal }

// entry is one ACL as the index keeps it.
type entry struct {
	principal string
	host      string
	op        kmsg.ACLOperation
	allow     bool
}

// typeIndex holds the ACLs of one resource type.
type typeIndex struct {
	literal  map[string][]entry // by name; "*" is the wildcard
	prefixed map[string][]entry // by prefix
	// prefixLens are the distinct lengths of the prefixes, ascending: a
	// lookup tries name[:n] for each, so it costs one map probe per
	// length rather than a scan of every prefixed ACL.
	prefixLens []int
	// all are the type's ACLs with their patterns (authorizeByType).
	all []typed
}

type typed struct {
	entry
	name     string
	prefixed bool
}

// Index is the ACLs of one image, indexed by resource type and pattern.
type Index struct {
	from  unsafe.Pointer // &acls[0] of the slice indexed
	n     int
	types map[kmsg.ACLResourceType]*typeIndex
}

func (idx *Index) same(acls []raftmeta.ACLBinding) bool {
	return idx.n == len(acls) && idx.from == unsafe.Pointer(unsafe.SliceData(acls))
}

// NewIndex indexes acls.
func NewIndex(acls []raftmeta.ACLBinding) *Index {
	idx := &Index{from: unsafe.Pointer(unsafe.SliceData(acls)), n: len(acls), types: map[kmsg.ACLResourceType]*typeIndex{}}
	for i := range acls {
		b := &acls[i]
		rt := kmsg.ACLResourceType(b.ResourceType)
		t := idx.types[rt]
		if t == nil {
			t = &typeIndex{literal: map[string][]entry{}, prefixed: map[string][]entry{}}
			idx.types[rt] = t
		}
		e := entry{principal: b.Principal, host: b.Host, op: kmsg.ACLOperation(b.Operation), allow: kmsg.ACLPermissionType(b.PermissionType) == kmsg.ACLPermissionTypeAllow}
		switch kmsg.ACLResourcePatternType(b.PatternType) {
		case kmsg.ACLResourcePatternTypeLiteral:
			t.literal[b.ResourceName] = append(t.literal[b.ResourceName], e)
			t.all = append(t.all, typed{entry: e, name: b.ResourceName})
		case kmsg.ACLResourcePatternTypePrefixed:
			if _, ok := t.prefixed[b.ResourceName]; !ok {
				t.prefixLens = insertSorted(t.prefixLens, len(b.ResourceName))
			}
			t.prefixed[b.ResourceName] = append(t.prefixed[b.ResourceName], e)
			t.all = append(t.all, typed{entry: e, name: b.ResourceName, prefixed: true})
		}
	}
	return idx
}

func insertSorted(s []int, v int) []int {
	for i, x := range s {
		if x == v {
			return s
		}
		if x > v {
			s = append(s, 0)
			copy(s[i+1:], s[i:])
			s[i] = v
			return s
		}
	}
	return append(s, v)
}

// verdict accumulates StandardAuthorizerData's MatchingRuleBuilder.
type verdict struct {
	hasResourceACLs, allowed, denied bool
}

func (v *verdict) check(es []entry, principal, host string, op kmsg.ACLOperation) {
	for i := range es {
		v.hasResourceACLs = true
		switch matchEntry(&es[i], principal, host, op) {
		case resultAllow:
			v.allowed = true
		case resultDeny:
			v.denied = true
			return
		}
	}
}

func (idx *Index) authorize(principal, host string, rt kmsg.ACLResourceType, name string, op kmsg.ACLOperation, allowIfNone bool) bool {
	t := idx.types[rt]
	if t == nil {
		return allowIfNone
	}
	var v verdict
	v.check(t.literal[name], principal, host, op)
	if !v.denied && name != WildcardResource {
		v.check(t.literal[WildcardResource], principal, host, op)
	}
	for _, n := range t.prefixLens {
		if v.denied || n > len(name) {
			break
		}
		v.check(t.prefixed[name[:n]], principal, host, op)
	}
	switch {
	case v.denied:
		return false
	case v.allowed:
		return true
	default:
		// "No ACL found" means no ACL on the resource at all, of any
		// principal: one ACL for someone else denies (findAclRule).
		return !v.hasResourceACLs && allowIfNone
	}
}

type result int8

const (
	resultNone result = iota
	resultAllow
	resultDeny
)

// matchEntry is StandardAuthorizerData.findResult: the principal (or
// User:*) and host (or *) must match; an ALLOW ACL for READ, WRITE, DELETE
// or ALTER implies DESCRIBE and one for ALTER_CONFIGS implies
// DESCRIBE_CONFIGS; a DENY ACL matches only its own operation (a DENY on
// READ does not deny DESCRIBE); ALL matches every operation.
func matchEntry(e *entry, principal, host string, op kmsg.ACLOperation) result {
	if e.principal != principal && e.principal != WildcardPrincipal {
		return resultNone
	}
	if e.host != WildcardHost && e.host != host {
		return resultNone
	}
	if e.op != kmsg.ACLOperationAll && e.op != op {
		if !e.allow {
			return resultNone
		}
		switch op {
		case kmsg.ACLOperationDescribe:
			switch e.op {
			case kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationDelete, kmsg.ACLOperationAlter:
			default:
				return resultNone
			}
		case kmsg.ACLOperationDescribeConfigs:
			if e.op != kmsg.ACLOperationAlterConfigs {
				return resultNone
			}
		default:
			return resultNone
		}
	}
	if e.allow {
		return resultAllow
	}
	return resultDeny
}

// authorizeByType is StandardAuthorizerData.authorizeByResourceType
// (KIP-679): among the ACLs of the principal (or User:*) and host for op
// (or ALL, no implication), a DENY on the literal wildcard denies
// outright, an ALLOW on it allows, and otherwise an ALLOW on a literal or
// prefixed name allows unless a DENY on the same literal or on a prefix of
// the name dominates it. allow.everyone.if.no.acl.found plays no part, as
// in Kafka.
func (idx *Index) authorizeByType(principal, host string, rt kmsg.ACLResourceType, op kmsg.ACLOperation) bool {
	t := idx.types[rt]
	if t == nil {
		return false
	}
	matches := func(e *entry) bool {
		return (e.principal == principal || e.principal == WildcardPrincipal) &&
			(e.host == WildcardHost || e.host == host) &&
			(e.op == op || e.op == kmsg.ACLOperationAll)
	}
	var denyLiteral, denyPrefix []string
	for i := range t.all {
		d := &t.all[i]
		if d.allow || !matches(&d.entry) {
			continue
		}
		if !d.prefixed && d.name == WildcardResource {
			return false
		}
		if d.prefixed {
			denyPrefix = append(denyPrefix, d.name)
		} else {
			denyLiteral = append(denyLiteral, d.name)
		}
	}
	for i := range t.all {
		al := &t.all[i]
		if !al.allow || !matches(&al.entry) {
			continue
		}
		if !al.prefixed && al.name == WildcardResource {
			return true
		}
		denied := false
		for _, p := range denyPrefix {
			if strings.HasPrefix(al.name, p) {
				denied = true
				break
			}
		}
		if !denied && !al.prefixed {
			for _, l := range denyLiteral {
				if l == al.name {
					denied = true
					break
				}
			}
		}
		if !denied {
			return true
		}
	}
	return false
}
