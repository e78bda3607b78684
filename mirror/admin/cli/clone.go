package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/strait-io/strait/mirror/admin"
)

type cloneFlags struct {
	topic, as string
	json      bool
}

func (f *cloneFlags) check() error {
	switch {
	case f.topic == "":
		return fmt.Errorf("missing --topic")
	case f.as == "":
		return fmt.Errorf("missing --as")
	case f.as == f.topic:
		return fmt.Errorf("--as must name a new topic, not %q itself", f.topic)
	}
	return nil
}

// cloneCommand is `strait mirror clone`: a DR drill's writable copy of a
// mirror topic at its current point, while the mirror goes on (issue 27).
var cloneCommand = command{
	args: "NAME --topic T --as CLONE [--json]",
	npos: 1,
	flags: func(fs *flag.FlagSet) any {
		f := &cloneFlags{}
		fs.StringVar(&f.topic, "topic", "", "the mirror `TOPIC` to clone")
		fs.StringVar(&f.as, "as", "", "the new `TOPIC`, e.g. T-drill: writable, starting with T's records up to its destination high watermark now")
		fs.BoolVar(&f.json, "json", false, "print JSON instead of a table")
		return f
	},
	run: func(ctx context.Context, e *env, mirror string, flags any) int {
		f := flags.(*cloneFlags)
		res, err := e.client.CloneTopic(ctx, mirror, f.topic, f.as)
		if err != nil {
			return e.fail(err)
		}
		if f.json {
			return e.printJSON(res)
		}
		printClone(e.stdout, res)
		return exitOK
	},
}

func printClone(w io.Writer, r admin.CloneResult) {
	fmt.Fprintf(w, "Cloned %s of mirror %s as %s (topic id %s); the mirror goes on.\n", r.Topic, r.Mirror, r.Clone, r.TopicID)
	tw := newTable(w)
	fmt.Fprintln(tw, "PARTITION\tCLONED-UP-TO")
	for _, p := range r.Points {
		fmt.Fprintf(tw, "%d\t%d\n", p.Partition, p.Offset)
	}
	tw.Flush()
}
