package acl

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// createFlags check that create has what an ACL needs.
type createFlags struct{ aclFlags }

func (f *createFlags) Check() error { _, err := f.creations(); return err }

// filterFlags are list's and delete's.
type filterFlags struct {
	aclFlags
	delete bool
}

func (f *filterFlags) Check() error {
	if _, err := f.filters(); err != nil {
		return err
	}
	if f.delete && !f.All && f.empty() {
		return errors.New("no filter would delete every ACL: name a principal, host, resource or operation, or give --all")
	}
	return nil
}

func createCommand() *kit.Command {
	return &kit.Command{
		Name:    "create",
		Args:    "--allow-principal|--deny-principal P... --operation OP... --topic|--group|--transactional-id NAME...|--cluster",
		Summary: "create ACLs: every principal x host x resource x operation given",
		Examples: []string{
			"strait acl create --allow-principal alice --operation read,describe --topic orders",
			"strait acl create --allow-principal User:app --operation all --topic app- --resource-pattern-type prefixed",
			"strait acl create --deny-principal bob --deny-host 10.0.0.7 --operation write --topic orders",
			"strait acl create --allow-principal alice --operation read --group billing --cluster",
		},
		Flags: func(fs *flag.FlagSet) any {
			f := &createFlags{}
			registerFlags(fs, &f.aclFlags, "literal", false)
			return f
		},
		Run: runCreate,
	}
}

func listCommand() *kit.Command {
	return &kit.Command{
		Name:    "list",
		Args:    "[filter flags]",
		Summary: "list the ACLs matching the filters (all ACLs without any)",
		Examples: []string{
			"strait acl list",
			"strait acl list --principal alice --json",
			"strait acl list --topic orders --resource-pattern-type match",
		},
		Flags: func(fs *flag.FlagSet) any {
			f := &filterFlags{}
			registerFlags(fs, &f.aclFlags, "any", true)
			return f
		},
		Run: runList,
	}
}

func deleteCommand() *kit.Command {
	return &kit.Command{
		Name:    "delete",
		Args:    "filter flags... | --all",
		Summary: "delete the ACLs matching the filters and print what matched",
		Examples: []string{
			"strait acl delete --allow-principal alice --topic orders",
			"strait acl delete --principal bob --dry-run",
			"strait acl delete --all",
		},
		Flags: func(fs *flag.FlagSet) any {
			f := &filterFlags{delete: true}
			registerFlags(fs, &f.aclFlags, "any", true)
			fs.BoolVar(&f.All, "all", false, "delete every ACL when no filter is given")
			fs.BoolVar(&f.DryRun, "dry-run", false, "print what would be deleted, delete nothing")
			return f
		},
		Run: runDelete,
	}
}

func runCreate(ctx context.Context, c *kit.Ctx, _ []string, flags any) int {
	acls, _ := flags.(*createFlags).creations()
	cl, err := c.Client()
	if err != nil {
		return c.Fail(err)
	}
	req := kmsg.NewPtrCreateACLsRequest()
	for _, a := range acls {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = a.ResourceType, *a.ResourceName, a.Pattern
		cr.Principal, cr.Host, cr.Operation, cr.PermissionType = *a.Principal, *a.Host, a.Operation, a.Permission
		req.Creations = append(req.Creations, cr)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err == nil && len(resp.Results) != len(acls) {
		err = fmt.Errorf("the cluster answered %d results for %d ACLs", len(resp.Results), len(acls))
	}
	if err != nil {
		return c.Fail(err)
	}
	rows := make([]row, len(acls))
	for i, a := range acls {
		r := resp.Results[i]
		rows[i] = newRow(a, kit.WithMessage(kerr.ErrorForCode(r.ErrorCode), deref(r.ErrorMessage)))
	}
	return printRows(c, rows, true)
}

func runList(ctx context.Context, c *kit.Ctx, _ []string, flags any) int {
	rows, code := describe(ctx, c, flags.(*filterFlags))
	if code != kit.ExitOK {
		return code
	}
	return printRows(c, rows, false)
}

// describe sends one DescribeAcls per filter (the request takes one) and
// returns the ACLs found, each once.
func describe(ctx context.Context, c *kit.Ctx, f *filterFlags) ([]row, int) {
	filters, _ := f.filters()
	cl, err := c.Client()
	if err != nil {
		return nil, c.Fail(err)
	}
	rows := []row{}
	seen := map[row]bool{}
	for _, a := range filters {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType, req.ResourceName, req.ResourcePatternType = a.ResourceType, a.ResourceName, a.Pattern
		req.Principal, req.Host, req.Operation, req.PermissionType = a.Principal, a.Host, a.Operation, a.Permission
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kit.WithMessage(kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
		}
		if err != nil {
			return nil, c.Fail(err)
		}
		for _, res := range resp.Resources {
			for _, d := range res.ACLs {
				r := newRow(acl{Principal: &d.Principal, Host: &d.Host, ResourceType: res.ResourceType,
					ResourceName: &res.ResourceName, Pattern: res.ResourcePatternType, Operation: d.Operation,
					Permission: d.PermissionType}, nil)
				if !seen[r] {
					seen[r] = true
					rows = append(rows, r)
				}
			}
		}
	}
	return rows, kit.ExitOK
}

func runDelete(ctx context.Context, c *kit.Ctx, _ []string, flags any) int {
	f := flags.(*filterFlags)
	if f.DryRun {
		rows, code := describe(ctx, c, f)
		if code != kit.ExitOK {
			return code
		}
		return printRows(c, rows, false)
	}
	filters, _ := f.filters()
	cl, err := c.Client()
	if err != nil {
		return c.Fail(err)
	}
	req := kmsg.NewPtrDeleteACLsRequest()
	for _, a := range filters {
		df := kmsg.NewDeleteACLsRequestFilter()
		df.ResourceType, df.ResourceName, df.ResourcePatternType = a.ResourceType, a.ResourceName, a.Pattern
		df.Principal, df.Host, df.Operation, df.PermissionType = a.Principal, a.Host, a.Operation, a.Permission
		req.Filters = append(req.Filters, df)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err == nil && len(resp.Results) != len(filters) {
		err = fmt.Errorf("the cluster answered %d results for %d filters", len(resp.Results), len(filters))
	}
	if err != nil {
		return c.Fail(err)
	}
	rows := []row{}
	code := kit.ExitOK
	for _, res := range resp.Results {
		if ferr := kit.WithMessage(kerr.ErrorForCode(res.ErrorCode), deref(res.ErrorMessage)); ferr != nil {
			code = c.Fail(ferr)
			continue
		}
		for _, m := range res.MatchingACLs {
			rows = append(rows, newRow(acl{Principal: &m.Principal, Host: &m.Host, ResourceType: m.ResourceType,
				ResourceName: &m.ResourceName, Pattern: m.ResourcePatternType, Operation: m.Operation,
				Permission: m.PermissionType}, kit.WithMessage(kerr.ErrorForCode(m.ErrorCode), deref(m.ErrorMessage))))
		}
	}
	if rc := printRows(c, rows, true); rc != kit.ExitOK {
		return rc
	}
	return code
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
