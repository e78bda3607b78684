package group

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// topicPartitions is the repeatable --topic T[:P,P...] flag: a topic
// alone means all its partitions.
type topicPartitions []topicParts

type topicParts struct {
	Topic      string
	Partitions []int32 // nil: all
}

func (tp *topicPartitions) String() string { return "" }

func (tp *topicPartitions) Set(v string) error {
	topic, parts, hasParts := strings.Cut(v, ":")
	if topic == "" {
		return fmt.Errorf("%q names no topic (TOPIC or TOPIC:P,P...)", v)
	}
	t := topicParts{Topic: topic}
	if hasParts {
		ps, err := kit.ParsePartitions(parts)
		if err != nil {
			return fmt.Errorf("%q: %w", v, err)
		}
		t.Partitions = ps
	}
	*tp = append(*tp, t)
	return nil
}

type offsetDeleteFlags struct{ topics topicPartitions }

func (f *offsetDeleteFlags) Check() error {
	if len(f.topics) == 0 {
		return errors.New("--topic is required")
	}
	return nil
}

func offsetDeleteCommand() *kit.Command {
	return &kit.Command{
		Name:    "offset-delete",
		Args:    "GROUP --topic TOPIC[:P,P...]...",
		Summary: "delete a group's commits on topics or partitions it no longer consumes",
		Examples: []string{
			"strait group offset-delete orders-app --topic old-orders",
			"strait group offset-delete orders-app --topic orders:0,1 --topic audit",
		},
		MinArgs: 1, MaxArgs: 1,
		Flags: func(fs *flag.FlagSet) any {
			f := &offsetDeleteFlags{}
			fs.Var(&f.topics, "topic", "`TOPIC[:P,P...]` whose commits to delete, all its partitions if none named (repeatable)")
			return f
		},
		Run: runOffsetDelete,
	}
}

type offsetDeletedJSON struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Error     string `json:"error"`
}

// runOffsetDelete deletes commits with OffsetDelete (KIP-496): the
// coordinator refuses partitions of topics the group's members are
// subscribed to (GROUP_SUBSCRIBED_TO_TOPIC), each reported per partition.
func runOffsetDelete(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*offsetDeleteFlags)
	group := args[0]
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	set := make(kadm.TopicsSet)
	var whole []string
	for _, t := range f.topics {
		if t.Partitions == nil {
			whole = append(whole, t.Topic)
		}
		set.Add(t.Topic, t.Partitions...)
	}
	var out []offsetDeletedJSON
	var failed []itemErr
	if len(whole) > 0 {
		tds, err := adm.ListTopics(ctx, whole...)
		if err != nil {
			return c.Fail(err)
		}
		for _, t := range whole {
			td, ok := tds[t]
			if terr := td.Err; !ok || terr != nil {
				if terr == nil {
					terr = kerr.UnknownTopicOrPartition
				}
				delete(set, t)
				out = append(out, offsetDeletedJSON{Topic: t, Partition: -1, Error: errName(terr)})
				failed = append(failed, itemErr{"topic " + t, terr})
				continue
			}
			set.Add(t, td.Partitions.Numbers()...)
		}
	}
	if len(set) > 0 {
		resp, err := adm.DeleteOffsets(ctx, group, set)
		if err != nil {
			return c.Fail(err)
		}
		for _, tp := range set.Sorted() {
			for _, p := range tp.Partitions {
				perr, ok := resp.Lookup(tp.Topic, p)
				if !ok {
					perr = fmt.Errorf("no answer for the partition")
				}
				out = append(out, offsetDeletedJSON{Topic: tp.Topic, Partition: p, Error: errName(perr)})
				if perr != nil {
					failed = append(failed, itemErr{fmt.Sprintf("%s/%d", tp.Topic, p), perr})
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b offsetDeletedJSON) int {
		return strings.Compare(a.Topic, b.Topic)
	})
	code := kit.ExitOK
	if c.Globals.JSON {
		code = c.JSON(out)
	} else {
		tw := kit.NewTable(c.Stdout)
		fmt.Fprintln(tw, "TOPIC\tPARTITION\tSTATUS")
		for _, r := range out {
			part, status := strconv.Itoa(int(r.Partition)), "OK"
			if r.Partition < 0 {
				part = "-"
			}
			if r.Error != "" {
				status = r.Error
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Topic, part, status)
		}
		tw.Flush()
	}
	for _, f := range failed {
		itemFailure(c, f.item, f.err)
		code = kit.ExitFailed
	}
	return code
}
