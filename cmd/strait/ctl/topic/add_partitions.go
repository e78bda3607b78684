package topic

import (
	"context"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

type addPartitionsFlags struct {
	num           int
	force, dryRun bool
}

func (f *addPartitionsFlags) Check() error {
	if f.num <= 0 || f.num > math.MaxInt32 {
		return fmt.Errorf("--num must be a positive number of partitions to add, got %d", f.num)
	}
	return nil
}

// keyedInternalTopics are the internal topics whose partition count keys
// their records (a group's or transaction's coordinator is hash(id) mod
// the count): adding partitions moves every coordinator and strands its
// state, so, as rpk, only --force does it.
var keyedInternalTopics = []string{"__consumer_offsets", "__transaction_state", "__share_group_state", "_schemas"}

func addPartitionsCommand() *kit.Command {
	return &kit.Command{
		Name:    "add-partitions",
		Args:    "TOPIC... -n/--num N [--dry-run] [-f/--force]",
		Summary: "add N partitions to each topic (CreatePartitions)",
		Examples: []string{
			"strait topic add-partitions orders --num 3",
			"strait topic add-partitions orders payments -n 2 --dry-run",
		},
		MinArgs: 1, MaxArgs: -1,
		Flags: func(fs *flag.FlagSet) any {
			f := &addPartitionsFlags{}
			fs.IntVar(&f.num, "num", 0, "partitions to add to each topic, `N`")
			short(fs, "num", "n")
			fs.BoolVar(&f.force, "force", false, "also change internal topics keyed by partition ("+strings.Join(keyedInternalTopics, ", ")+")")
			short(fs, "force", "f")
			fs.BoolVar(&f.dryRun, "dry-run", false, "validate the change only (validate_only)")
			return f
		},
		Run: runAddPartitions,
	}
}

func runAddPartitions(ctx context.Context, c *kit.Ctx, topics []string, flags any) int {
	f := flags.(*addPartitionsFlags)
	if !f.force {
		for _, t := range topics {
			if slices.Contains(keyedInternalTopics, t) {
				return c.Usagef("adding partitions to %s moves every coordinator and strands its state; add --force if you mean it", t)
			}
		}
	}
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	add, ok := adm.CreatePartitions, "OK"
	if f.dryRun {
		add, ok = adm.ValidateCreatePartitions, "VALID"
	}
	resps, err := add(ctx, f.num, uniqueSorted(topics)...)
	if err != nil {
		return c.Fail(err)
	}
	out := newStatuses()
	for _, name := range uniqueSorted(topics) {
		r, found := resps[name]
		if !found {
			r.Err = noAnswer("topic " + name)
		}
		out.add(c, name, r.Err, r.ErrMessage, ok)
	}
	return out.finish(c)
}
