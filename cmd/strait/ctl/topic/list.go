package topic

import (
	"context"
	"flag"
	"fmt"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

type listFlags struct{ regex, internal, detailed bool }

// regexFlag registers -r/--regex: the arguments are regular expressions.
// It is a switch, so `--regex 'orders.*'` and `--regex=true 'orders.*'`
// read the same.
func regexFlag(fs *flag.FlagSet, v *bool, what string) {
	fs.BoolVar(v, "regex", false, "the arguments are regular expressions (matching whole names); "+what)
	short(fs, "regex", "r")
}

func listCommand() *kit.Command {
	return &kit.Command{
		Name:    "list",
		Args:    "[TOPIC...] [-r/--regex] [-i/--internal] [-d/--detailed]",
		Summary: "list topics with their partition and replica counts",
		Examples: []string{
			"strait topic list",
			"strait topic list --regex 'orders.*' --detailed",
			"strait topic list --internal --json",
		},
		MinArgs: 0, MaxArgs: -1,
		Flags: func(fs *flag.FlagSet) any {
			f := &listFlags{}
			regexFlag(fs, &f.regex, "list the topics matching any")
			fs.BoolVar(&f.internal, "internal", false, "include internal topics (__consumer_offsets, ...)")
			short(fs, "internal", "i")
			fs.BoolVar(&f.detailed, "detailed", false, "also list each partition's leader, epoch, replicas and ISR")
			short(fs, "detailed", "d")
			return f
		},
		Run: runList,
	}
}

// listed is one topic in --json; Partitions only with --detailed.
type listed struct {
	topicSummary
	Partitions []partitionSummary `json:"partitions,omitempty"`
}

func runList(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*listFlags)
	sel, err := newSelection(args, f.regex, f.internal)
	if err != nil {
		return c.Usagef("%v", err)
	}
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	details, err := sel.topics(ctx, adm)
	if err != nil {
		return c.Fail(err)
	}
	var (
		all    = []listed{}
		failed []failure
		t      = table{headers: []string{"NAME", "PARTITIONS", "REPLICAS"}}
	)
	for _, d := range details.Sorted() {
		l := listed{topicSummary: summarize(c, d)}
		if f.detailed {
			l.Partitions = partitionSummaries(c, d)
		}
		all = append(all, l)
		if l.Error != "" {
			failed = append(failed, failure{d.Topic, l.Error})
			continue
		}
		if !f.detailed {
			t.add(l.Name, l.PartitionCount, l.ReplicationFactor)
		}
	}
	if f.detailed && !c.Globals.JSON {
		printDetailed(c, all)
		t.rows = nil
	}
	return finish(c, all, &t, failed)
}

// printDetailed is list --detailed as rpk prints it: a line per topic,
// then its partitions indented.
func printDetailed(c *kit.Ctx, all []listed) {
	first := true
	for _, l := range all {
		if l.Error != "" {
			continue
		}
		if !first {
			fmt.Fprintln(c.Stdout)
		}
		first = false
		internal := ""
		if l.Internal {
			internal = " (internal)"
		}
		fmt.Fprintf(c.Stdout, "%s%s, %d partitions, %d replicas\n", l.Name, internal, l.PartitionCount, l.ReplicationFactor)
		pt := table{indent: "  ", headers: []string{"PARTITION", "LEADER", "EPOCH", "REPLICAS", "ISR", "LOAD-ERROR"}, optional: []string{"LOAD-ERROR"}}
		for _, p := range l.Partitions {
			pt.add(p.Partition, p.Leader, p.LeaderEpoch, joinInt32s(p.Replicas), joinInt32s(p.ISR), p.Error)
		}
		pt.print(c.Stdout)
	}
}
