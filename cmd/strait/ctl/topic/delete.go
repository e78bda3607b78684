package topic

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

type deleteFlags struct{ regex bool }

func deleteCommand() *kit.Command {
	return &kit.Command{
		Name:    "delete",
		Args:    "TOPIC... [-r/--regex]",
		Summary: "delete topics",
		Examples: []string{
			"strait topic delete orders payments",
			"strait topic delete -r 'test-.*'    # every topic whose whole name matches",
		},
		MinArgs: 1, MaxArgs: -1,
		Flags: func(fs *flag.FlagSet) any {
			f := &deleteFlags{}
			regexFlag(fs, &f.regex, "delete the topics matching any (never internal ones)")
			return f
		},
		Run: runDelete,
	}
}

func runDelete(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*deleteFlags)
	sel, err := newSelection(args, f.regex, false)
	if err != nil {
		return c.Usagef("%v", err)
	}
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	topics := sel.names
	if f.regex {
		details, err := sel.topics(ctx, adm)
		if err != nil {
			return c.Fail(err)
		}
		if len(details) == 0 {
			return c.Fail(fmt.Errorf("no topic matches %s", strings.Join(args, " or ")))
		}
		topics = details.Names()
	}
	resps, err := adm.DeleteTopics(ctx, topics...)
	if err != nil {
		return c.Fail(err)
	}
	out := newStatuses()
	for _, name := range uniqueSorted(topics) {
		r, ok := resps[name]
		if !ok {
			r.Err = noAnswer("topic " + name)
		}
		out.add(c, name, r.Err, r.ErrMessage, "OK")
	}
	return out.finish(c)
}
