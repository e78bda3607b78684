package acl

import (
	"fmt"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// row is one ACL in the output (rpk's columns); its --json field names
// are snake_case.
type row struct {
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  string `json:"resource_pattern_type"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
	Error        string `json:"error,omitempty"`
	err          error
}

func newRow(a acl, err error) row {
	r := row{Principal: deref(a.Principal), Host: deref(a.Host), ResourceType: a.ResourceType.String(),
		ResourceName: deref(a.ResourceName), PatternType: a.Pattern.String(), Operation: a.Operation.String(),
		Permission: a.Permission.String()}
	if err != nil {
		r.Error, r.err = kit.ErrName(err), err
	}
	return r
}

// printRows prints the ACLs as a table or --json; with withErrors an
// ERROR column, each failed ACL also on stderr, and exit 1 if any failed.
func printRows(c *kit.Ctx, rows []row, withErrors bool) int {
	code := kit.ExitOK
	for _, r := range rows {
		if r.err != nil {
			code = c.ItemFailed(fmt.Sprintf("%s %s %s:%s %s", r.Permission, r.Principal, r.ResourceType,
				r.ResourceName, r.Operation), r.err)
		}
	}
	if c.Globals.JSON {
		return c.JSONThen(rows, code)
	}
	w := kit.NewTable(c.Stdout)
	head := "PRINCIPAL\tHOST\tRESOURCE-TYPE\tRESOURCE-NAME\tRESOURCE-PATTERN-TYPE\tOPERATION\tPERMISSION"
	if withErrors {
		head += "\tERROR"
	}
	fmt.Fprintln(w, head)
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", r.Principal, r.Host, r.ResourceType, r.ResourceName,
			r.PatternType, r.Operation, r.Permission)
		if withErrors {
			line += "\t" + r.Error
		}
		fmt.Fprintln(w, line)
	}
	w.Flush()
	return code
}
