package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/strait-io/strait/mirror/admin"
)

type topicsFlags struct {
	topics listFlag
	// truncateExisting: start's --truncate-existing.
	truncateExisting bool
}

func (f *topicsFlags) check() error {
	if len(f.topics) == 0 {
		return fmt.Errorf("missing --topic")
	}
	return nil
}

// topicsCall is one of admin.Client's per-topic methods.
type topicsCall func(c *admin.Client, ctx context.Context, mirror string, topics ...string) (admin.TopicResults, error)

// startCall is topicsCall for start: StartMirrorTopicsWith with its flags.
func startCall(f *topicsFlags) topicsCall {
	return func(c *admin.Client, ctx context.Context, mirror string, topics ...string) (admin.TopicResults, error) {
		return c.StartMirrorTopicsWith(ctx, mirror, admin.StartOptions{TruncateExisting: f.truncateExisting}, topics...)
	}
}

// topicsCommand is start, stop, pause or resume: the same flags, a table
// of per-topic results, and exit 1 if any topic failed or was not
// answered (a stop that silently did not happen would leave an operator
// failing over to a read-only topic). A nil call is start, with its
// --truncate-existing.
func topicsCommand(name string, call topicsCall) command {
	return command{
		args: "NAME --topic T [--topic T2]...",
		npos: 1,
		flags: func(fs *flag.FlagSet) any {
			f := &topicsFlags{}
			fs.Var(&f.topics, "topic", "a `TOPIC` to "+name+" (repeatable)")
			if call == nil { // start
				fs.BoolVar(&f.truncateExisting, "truncate-existing", false,
					"delete the records an existing destination topic holds that the source cluster does not share (without it such a topic is refused)")
			}
			return f
		},
		run: func(ctx context.Context, e *env, mirror string, flags any) int {
			f := flags.(*topicsFlags)
			topics := []string(f.topics)
			call := call
			if call == nil {
				call = startCall(f)
			}
			rs, err := call(e.client, ctx, mirror, topics...)
			if err != nil {
				return e.fail(err)
			}
			return e.reportTopicResults(rs, topics)
		},
	}
}

// reportTopicResults prints per-topic results and returns exit 1 if any
// topic failed or was not answered.
func (e *env) reportTopicResults(rs admin.TopicResults, topics []string) int {
	missing := rs.Missing(topics)
	printTopicResults(e.stdout, rs, missing)
	code := exitOK
	for _, r := range rs.Failed() {
		fmt.Fprintf(e.stderr, "strait mirror %s: topic %s: %s: %s\n", e.cmd, r.Topic, admin.ErrorName(r.Err), r.Detail())
		code = exitFailed
	}
	if len(missing) > 0 {
		fmt.Fprintf(e.stderr, "strait mirror %s: the broker returned no result for %s\n", e.cmd, joinQuoted(missing))
		code = exitFailed
	}
	return code
}
