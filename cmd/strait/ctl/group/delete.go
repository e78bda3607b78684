package group

import (
	"context"
	"fmt"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

func deleteCommand() *kit.Command {
	return &kit.Command{
		Name:    "delete",
		Args:    "GROUP...",
		Summary: "delete groups and their commits (only groups with no members)",
		Examples: []string{
			"strait group delete old-app",
			"strait group delete a b c --json",
		},
		MinArgs: 1, MaxArgs: -1,
		Run: runDelete,
	}
}

type deletedJSON struct {
	Group string `json:"group"`
	Error string `json:"error"`
}

// runDelete deletes with DeleteGroups: the coordinator refuses a group
// with members (NON_EMPTY_GROUP) and one it does not know
// (GROUP_ID_NOT_FOUND), each reported per group.
func runDelete(ctx context.Context, c *kit.Ctx, groups []string, _ any) int {
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	groups = unique(groups)
	resp, err := adm.DeleteGroups(ctx, groups...)
	if err != nil && len(resp) == 0 {
		return c.Fail(err)
	}
	out := []deletedJSON{}
	errs := map[string]error{}
	for _, g := range groups {
		r, ok := resp[g]
		gerr := r.Err
		if !ok { // its coordinator did not answer
			gerr = err
			if gerr == nil {
				gerr = fmt.Errorf("no answer for the group")
			}
		}
		errs[g] = gerr
		out = append(out, deletedJSON{Group: g, Error: errName(gerr)})
	}
	code := kit.ExitOK
	if c.Globals.JSON {
		code = c.JSON(out)
	} else {
		tw := kit.NewTable(c.Stdout)
		fmt.Fprintln(tw, "GROUP\tSTATUS")
		for _, r := range out {
			status := "OK"
			if r.Error != "" {
				status = r.Error
			}
			fmt.Fprintf(tw, "%s\t%s\n", r.Group, status)
		}
		tw.Flush()
	}
	for _, g := range groups {
		if errs[g] != nil {
			itemFailure(c, g, errs[g])
			code = kit.ExitFailed
		}
	}
	return code
}
