package group

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// groupStates are the states a group can be in: classic groups'
// (ClassicGroupState) and KIP-848 consumer groups' (ConsumerGroupState).
var groupStates = []string{"PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty", "Assigning", "Reconciling"}

type listFlags struct{ states string }

// Check refuses a state no group can be in, which would silently match
// nothing.
func (f *listFlags) Check() error {
	for _, s := range splitList(f.states) {
		if !slices.ContainsFunc(groupStates, func(k string) bool { return strings.EqualFold(k, s) }) {
			return fmt.Errorf("--states: unknown state %q (one of %s)", s, strings.Join(groupStates, ", "))
		}
	}
	return nil
}

func listCommand() *kit.Command {
	return &kit.Command{
		Name:    "list",
		Args:    "[--states STATE,...]",
		Summary: "list the cluster's groups with their coordinator, type and state",
		Examples: []string{
			"strait group list",
			"strait group list --states Empty,Dead --json",
		},
		MinArgs: 0, MaxArgs: 0,
		Flags: func(fs *flag.FlagSet) any {
			f := &listFlags{}
			fs.StringVar(&f.states, "states", "", "only groups in these `STATE,...` (Stable, Empty, PreparingRebalance, ...; any case)")
			return f
		},
		Run: runList,
	}
}

type listedJSON struct {
	Group        string `json:"group"`
	Coordinator  int32  `json:"coordinator"`
	Type         string `json:"type"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
}

func runList(ctx context.Context, c *kit.Ctx, _ []string, flags any) int {
	f := flags.(*listFlags)
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	// The states are filtered here, not with ListGroups' StatesFilter:
	// brokers before v4 ignore it and some compare it case-sensitively.
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return c.Fail(err)
	}
	want := splitList(f.states)
	out := []listedJSON{}
	for _, g := range listed.Sorted() {
		if len(want) > 0 && !slices.ContainsFunc(want, func(s string) bool { return strings.EqualFold(s, g.State) }) {
			continue
		}
		out = append(out, listedJSON{Group: g.Group, Coordinator: g.Coordinator, Type: g.GroupType, State: g.State, ProtocolType: g.ProtocolType})
	}
	if c.Globals.JSON {
		return c.JSON(out)
	}
	tw := kit.NewTable(c.Stdout)
	fmt.Fprintln(tw, "BROKER\tGROUP\tTYPE\tSTATE")
	for _, g := range out {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", g.Coordinator, g.Group, dash(g.Type), dash(g.State))
	}
	tw.Flush()
	return kit.ExitOK
}

// splitList is a comma-separated flag's values, blanks dropped.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
