package cli

import (
	"context"
	"flag"
	"fmt"
)

// filterFlags wraps start's flags with --include and --exclude.
type filterFlags struct {
	inner            any
	include, exclude listFlag
}

// check lets a start name patterns instead of topics.
func (f *filterFlags) check() error {
	if len(f.include)+len(f.exclude) > 0 {
		if l, ok := f.inner.(topicLister); !ok || len(l.listTopics()) == 0 {
			return nil
		}
	}
	return checkFlags(f.inner)
}

func (f *filterFlags) listTopics() []string {
	if l, ok := f.inner.(topicLister); ok {
		return l.listTopics()
	}
	return nil
}

// withFilters adds --include REGEX and --exclude REGEX to c (start): they
// are appended to the mirror's mirror.topics.include and
// mirror.topics.exclude (KIP-1279: StartMirrorTopics' patterns are
// appended to those lists), and the mirror's metadata sync starts every
// source topic matching an include pattern and no exclude pattern, now
// and when the source creates it later. --topic may be given as well.
func withFilters(c command) command {
	flags, run := c.flags, c.run
	// c.args stays: the synopsis names the common form; --help lists
	// the flags and Usage the pattern form.
	c.flags = func(fs *flag.FlagSet) any {
		f := &filterFlags{inner: flags(fs)}
		fs.Var(&f.include, "include", "a `REGEX` appended to mirror.topics.include: matching source topics start mirroring, now and when created (repeatable)")
		fs.Var(&f.exclude, "exclude", "a `REGEX` appended to mirror.topics.exclude: matching source topics are never started by pattern (repeatable)")
		return f
	}
	c.run = func(ctx context.Context, e *env, mirror string, flags any) int {
		f := flags.(*filterFlags)
		if len(f.include)+len(f.exclude) > 0 {
			if err := e.client.AddTopicFilters(ctx, mirror, f.include, f.exclude); err != nil {
				return e.fail(err)
			}
			if len(f.include) > 0 {
				fmt.Fprintf(e.stdout, "Mirror %s: added %s to mirror.topics.include.\n", mirror, joinQuoted(f.include))
			}
			if len(f.exclude) > 0 {
				fmt.Fprintf(e.stdout, "Mirror %s: added %s to mirror.topics.exclude.\n", mirror, joinQuoted(f.exclude))
			}
			fmt.Fprintln(e.stdout, "Matching source topics start at the mirror's next metadata sync (mirror.metadata.refresh.interval.ms).")
		}
		if len(f.listTopics()) == 0 {
			return exitOK
		}
		return run(ctx, e, mirror, f.inner)
	}
	return c
}
