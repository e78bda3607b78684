package raftmeta

import (
	"cmp"
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateACLs: v0-3 (AclApis.handleCreateAcls +
// AclControlManager.createAcls).
//
// Behavior:
//   - Each creation is validated alone: UNKNOWN or ANY resource type or
//     operation, a pattern other than LITERAL/PREFIXED, a permission other
//     than ALLOW/DENY, an empty name, or a CLUSTER name other than
//     kafka-cluster is INVALID_REQUEST.
//   - An ACL equal to a stored one (or to an earlier one of the request)
//     succeeds without a new record. The ACLs are stored; enforcing them
//     comes with the security issue (Kafka without an authorizer answers
//     SECURITY_DISABLED instead).
//
// Version notes:
//   - v1: ResourcePatternType (KIP-290; v0 means LITERAL)
//   - v2: flexible
func (c *aclControl) CreateACLs(ctx context.Context, req *kmsg.CreateACLsRequest) *kmsg.CreateACLsResponse {
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	errs := make([]*apiError, len(req.Creations))
	creations := slices.Clone(req.Creations)
	for i := range creations {
		cr := &creations[i]
		if req.Version < 1 {
			cr.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
		}
		if msg := validateNewACL(cr); msg != "" {
			errs[i] = errorf(kerr.InvalidRequest, "%s", msg)
		}
	}
	built := false
	err := c.write(ctx, func(img *Image) []Record {
		built = true
		var records []Record
		pending := slices.Clone(img.ACLs)
		for i := range creations {
			if errs[i] != nil {
				continue
			}
			cr := &creations[i]
			a := ACLBinding{
				ResourceType:   int8(cr.ResourceType),
				ResourceName:   cr.ResourceName,
				PatternType:    int8(cr.ResourcePatternType),
				Principal:      cr.Principal,
				Host:           cr.Host,
				Operation:      int8(cr.Operation),
				PermissionType: int8(cr.PermissionType),
			}
			if slices.ContainsFunc(pending, func(b ACLBinding) bool { return sameACL(&a, &b) }) {
				continue
			}
			id, err := c.newUuid(func(u Uuid) bool {
				return slices.ContainsFunc(pending, func(b ACLBinding) bool { return b.ID == u })
			})
			if err != nil {
				errs[i] = errorf(kerr.UnknownServerError, "%s", err.Error())
				continue
			}
			a.ID = id
			pending = append(pending, a)
			records = append(records, &AccessControlEntryRecord{ACL: a})
		}
		return records
	})
	werr := writeError(err)
	for i := range req.Creations {
		r := kmsg.NewCreateACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = itemResult(errs[i], werr, built)
		resp.Results = append(resp.Results, r)
	}
	return resp
}

// DescribeACLs: v0-3, answered from this node's image (Kafka's brokers
// answer from their authorizer's copy of the same records), so it works
// on any node.
//
// Behavior:
//   - A filter with an UNKNOWN element is INVALID_REQUEST.
//   - Matching ACLs are grouped by resource pattern, sorted by type, name
//     and pattern type, each group in creation order.
//
// Version notes:
//   - v1: ResourcePatternType filter (v0 means LITERAL)
//   - v2: flexible
func (c *aclControl) DescribeACLs(ctx context.Context, req *kmsg.DescribeACLsRequest) *kmsg.DescribeACLsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	f := aclFilter{
		resourceType: normResourceType(req.ResourceType),
		name:         req.ResourceName,
		patternType:  normPatternType(req.ResourcePatternType),
		principal:    req.Principal,
		host:         req.Host,
		operation:    normOperation(req.Operation),
		permission:   normPermission(req.PermissionType),
	}
	if req.Version < 1 {
		f.patternType = kmsg.ACLResourcePatternTypeLiteral
	}
	if bad, _ := f.unknown(); bad {
		resp.ErrorCode = kerr.InvalidRequest.Code
		resp.ErrorMessage = strp("DescribeAclsRequest contains UNKNOWN elements")
		return resp
	}
	type pattern struct {
		rt   int8
		name string
		pt   int8
	}
	groups := map[pattern][]ACLBinding{}
	for _, a := range c.log.Image().ACLs {
		if f.matches(&a) {
			p := pattern{a.ResourceType, a.ResourceName, a.PatternType}
			groups[p] = append(groups[p], a)
		}
	}
	keys := make([]pattern, 0, len(groups))
	for p := range groups {
		keys = append(keys, p)
	}
	slices.SortFunc(keys, func(a, b pattern) int {
		return cmp.Or(cmp.Compare(a.rt, b.rt), cmp.Compare(a.name, b.name), cmp.Compare(a.pt, b.pt))
	})
	for _, p := range keys {
		r := kmsg.NewDescribeACLsResponseResource()
		r.ResourceType = kmsg.ACLResourceType(p.rt)
		r.ResourceName = p.name
		r.ResourcePatternType = kmsg.ACLResourcePatternType(p.pt)
		for _, a := range groups[p] {
			e := kmsg.NewDescribeACLsResponseResourceACL()
			e.Principal = a.Principal
			e.Host = a.Host
			e.Operation = kmsg.ACLOperation(a.Operation)
			e.PermissionType = kmsg.ACLPermissionType(a.PermissionType)
			r.ACLs = append(r.ACLs, e)
		}
		resp.Resources = append(resp.Resources, r)
	}
	return resp
}

// DeleteACLs: v0-3 (AclControlManager.deleteAcls).
//
// Behavior:
//   - Each filter is validated alone (UNKNOWN elements: INVALID_REQUEST)
//     and lists the ACLs it matched; an ACL several filters match is
//     removed once and listed under each.
//   - The removals of the whole request are one atomic batch.
//
// Version notes:
//   - v1: ResourcePatternType filter (v0 means LITERAL)
//   - v2: flexible
func (c *aclControl) DeleteACLs(ctx context.Context, req *kmsg.DeleteACLsRequest) *kmsg.DeleteACLsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	errs := make([]*apiError, len(req.Filters))
	filters := make([]aclFilter, len(req.Filters))
	for i, rf := range req.Filters {
		filters[i] = aclFilter{
			resourceType: normResourceType(rf.ResourceType),
			name:         rf.ResourceName,
			patternType:  normPatternType(rf.ResourcePatternType),
			principal:    rf.Principal,
			host:         rf.Host,
			operation:    normOperation(rf.Operation),
			permission:   normPermission(rf.PermissionType),
		}
		if req.Version < 1 {
			filters[i].patternType = kmsg.ACLResourcePatternTypeLiteral
		}
		if bad, msg := filters[i].unknown(); bad {
			errs[i] = errorf(kerr.InvalidRequest, "%s", msg)
		}
	}
	matched := make([][]ACLBinding, len(req.Filters))
	built := false
	err := c.write(ctx, func(img *Image) []Record {
		built = true
		removed := map[Uuid]bool{}
		var records []Record
		for i := range filters {
			if errs[i] != nil {
				continue
			}
			for _, a := range img.ACLs {
				if !filters[i].matches(&a) {
					continue
				}
				matched[i] = append(matched[i], a)
				if !removed[a.ID] {
					removed[a.ID] = true
					records = append(records, &RemoveAccessControlEntryRecord{ID: a.ID})
				}
			}
		}
		return records
	})
	werr := writeError(err)
	for i := range req.Filters {
		r := kmsg.NewDeleteACLsResponseResult()
		if r.ErrorCode, r.ErrorMessage = itemResult(errs[i], werr, built); r.ErrorCode != 0 {
			resp.Results = append(resp.Results, r)
			continue
		}
		for _, a := range matched[i] {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType = kmsg.ACLResourceType(a.ResourceType)
			m.ResourceName = a.ResourceName
			m.ResourcePatternType = kmsg.ACLResourcePatternType(a.PatternType)
			m.Principal = a.Principal
			m.Host = a.Host
			m.Operation = kmsg.ACLOperation(a.Operation)
			m.PermissionType = kmsg.ACLPermissionType(a.PermissionType)
			r.MatchingACLs = append(r.MatchingACLs, m)
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}
