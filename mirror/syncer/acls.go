package syncer

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// syncACLs is the ACL step (metric AclSyncError, digest §6): the source
// ACLs mirror.acl.include selects are created on the destination, and the
// destination ACLs this syncer owns that the source no longer has (or the
// rules no longer select) are deleted: a one-way reconcile of the matching
// set. It returns the number of failed operations.
func (s *Syncer) syncACLs(ctx context.Context, v *mirrorView) int {
	srcACLs, err := describeACLs(ctx, s.cfg.Source)
	if err != nil {
		s.logger.Warn("could not describe the source's ACLs", "err", err)
		return 1
	}
	dstACLs, err := describeACLs(ctx, s.cfg.Destination)
	if err != nil {
		s.logger.Warn("could not describe the destination's ACLs", "err", err)
		return 1
	}
	s.aclMu.Lock()
	defer s.aclMu.Unlock()
	create, del := s.planACLs(v.set.acls, srcACLs, dstACLs)
	failed := 0
	if len(create) > 0 {
		n, err := createACLs(ctx, s.cfg.Destination, create)
		for _, e := range create[:n] {
			s.owned[e] = true
		}
		s.c.aclsAdd.Add(int64(n))
		if err != nil {
			s.logger.Warn("could not create the source's ACLs on the destination", "err", err)
			failed++
		} else {
			s.logger.Info("created the source's ACLs on the destination", "acls", n)
		}
	}
	if len(del) > 0 {
		deleted, err := deleteACLs(ctx, s.cfg.Destination, del)
		for _, e := range deleted {
			delete(s.owned, e)
		}
		s.c.aclsDel.Add(int64(len(deleted)))
		if err != nil {
			s.logger.Warn("could not delete ACLs gone from the source", "err", err)
			failed++
		} else {
			s.logger.Info("deleted ACLs gone from the source", "acls", len(deleted))
		}
	}
	return failed
}

// planACLs returns the ACLs to create (selected on the source, absent on
// the destination) and to delete (owned, present on the destination, no
// longer wanted), sorted. The caller holds aclMu.
//
// Ownership: the syncer deletes only ACLs it owns, never one an operator
// made on the destination. It owns what it created and, re-derived every
// round (a restart or a new coordinator of the mirror starts with no
// memory), every destination ACL the rules select on the source: what it
// would have created. An ACL the source deleted while no syncer ran stays
// on the destination (the safe side: it cannot be told from an
// operator's).
func (s *Syncer) planACLs(rules []aclRule, srcACLs, dstACLs []aclEntry) (create, del []aclEntry) {
	want := map[aclEntry]bool{}
	for _, e := range srcACLs {
		if aclSelected(rules, e) {
			want[e] = true
		}
	}
	have := map[aclEntry]bool{}
	for _, e := range dstACLs {
		have[e] = true
	}
	if s.owned == nil {
		s.owned = map[aclEntry]bool{}
	}
	for e := range s.owned {
		if !have[e] {
			delete(s.owned, e) // deleted by someone else
		}
	}
	for e := range want {
		if have[e] {
			s.owned[e] = true
		} else {
			create = append(create, e)
		}
	}
	for e := range s.owned {
		if !want[e] {
			del = append(del, e)
		}
	}
	sortACLs(create)
	sortACLs(del)
	return create, del
}

func sortACLs(es []aclEntry) {
	slices.SortFunc(es, func(a, b aclEntry) int {
		switch {
		case a.String() < b.String():
			return -1
		case a.String() > b.String():
			return 1
		}
		return 0
	})
}

// describeACLs returns every ACL of a cluster (a filter of ANY).
func describeACLs(ctx context.Context, cl *kgo.Client) ([]aclEntry, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = kmsg.ACLResourceTypeAny
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := codeErr(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return nil, err
	}
	var out []aclEntry
	for _, r := range resp.Resources {
		for _, a := range r.ACLs {
			out = append(out, aclEntry{
				ResourceType: r.ResourceType, ResourceName: r.ResourceName, PatternType: r.ResourcePatternType,
				Principal: a.Principal, Host: a.Host, Operation: a.Operation, Permission: a.PermissionType,
			})
		}
	}
	return out, nil
}

// createACLs creates es and returns how many of the first were created
// before the first failure (CreateAcls answers per creation, in order).
func createACLs(ctx context.Context, cl *kgo.Client, es []aclEntry) (int, error) {
	req := kmsg.NewPtrCreateACLsRequest()
	for _, e := range es {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = e.ResourceType, e.ResourceName, e.PatternType
		c.Principal, c.Host, c.Operation, c.PermissionType = e.Principal, e.Host, e.Operation, e.Permission
		req.Creations = append(req.Creations, c)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, err
	}
	for i, r := range resp.Results {
		if err := codeErr(r.ErrorCode, r.ErrorMessage); err != nil {
			return i, fmt.Errorf("ACL %v: %w", es[i], err)
		}
	}
	if len(resp.Results) != len(es) {
		return len(resp.Results), fmt.Errorf("CreateAcls answered %d of %d creations", len(resp.Results), len(es))
	}
	return len(es), nil
}

// deleteACLs deletes es, each with an exact filter, and returns those
// deleted (or already gone).
func deleteACLs(ctx context.Context, cl *kgo.Client, es []aclEntry) ([]aclEntry, error) {
	req := kmsg.NewPtrDeleteACLsRequest()
	for _, e := range es {
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourceName, f.ResourcePatternType = e.ResourceType, kmsg.StringPtr(e.ResourceName), e.PatternType
		f.Principal, f.Host = kmsg.StringPtr(e.Principal), kmsg.StringPtr(e.Host)
		f.Operation, f.PermissionType = e.Operation, e.Permission
		req.Filters = append(req.Filters, f)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	var done []aclEntry
	var firstErr error
	for i, r := range resp.Results {
		if i >= len(es) {
			break
		}
		if err := codeErr(r.ErrorCode, r.ErrorMessage); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("ACL %v: %w", es[i], err)
			}
			continue
		}
		done = append(done, es[i])
	}
	return done, firstErr
}

// codeErr is a Kafka error code with its message, nil for 0.
func codeErr(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	if msg != nil && *msg != "" {
		return fmt.Errorf("%w: %s", err, *msg)
	}
	return err
}
