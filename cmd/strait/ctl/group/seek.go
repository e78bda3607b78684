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

type seekFlags struct {
	to             string
	toOffset       int64 // noOffset: no --to-offset
	topics         string
	allowNewTopics bool

	atMilli int64 // --to @MILLIS, @RFC3339 or a bare MILLIS, parsed by Check
}

const noOffset = -1

// Check takes exactly one of --to and --to-offset, and --to's value.
func (f *seekFlags) Check() error {
	switch {
	case f.to == "" && f.toOffset == noOffset:
		return errors.New("one of --to or --to-offset is required")
	case f.to != "" && f.toOffset != noOffset:
		return errors.New("--to and --to-offset cannot both be given")
	}
	switch {
	case f.to == "" || f.to == "start" || f.to == "end":
	case strings.HasPrefix(f.to, "@"):
		ms, _, err := kit.ParseAtTime(f.to)
		if err != nil {
			return fmt.Errorf("--to %w", err)
		}
		f.atMilli = ms
	default:
		ms, err := strconv.ParseInt(f.to, 10, 64)
		if err != nil || ms < 0 {
			return fmt.Errorf("--to %q is not start, end, a timestamp in milliseconds or @RFC3339", f.to)
		}
		f.atMilli = ms
	}
	return nil
}

func seekCommand() *kit.Command {
	return &kit.Command{
		Name:    "seek",
		Args:    "GROUP --to start|end|@MILLIS|@RFC3339 | --to-offset N [--topics T,...] [--allow-new-topics]",
		Summary: "move an inactive group's commits (to the start, end, a time or an offset)",
		Examples: []string{
			"strait group seek orders-app --to start",
			"strait group seek orders-app --to @2024-06-01T00:00:00Z --topics orders",
			"strait group seek orders-app --to-offset 100 --topics orders",
			"strait group seek new-app --to end --topics orders --allow-new-topics",
		},
		MinArgs: 1, MaxArgs: 1,
		Flags: func(fs *flag.FlagSet) any {
			f := &seekFlags{toOffset: noOffset}
			fs.StringVar(&f.to, "to", "", "where to: `start`, end, @MILLIS or @RFC3339 (the first record at or after that time, else the end; a bare MILLIS too)")
			fs.Func("to-offset", "seek to offset `N`, kept within each partition's start and end", func(v string) error {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 {
					return fmt.Errorf("%q is not an offset (a number from 0)", v)
				}
				f.toOffset = n
				return nil
			})
			fs.StringVar(&f.topics, "topics", "", "only these `TOPIC,...` (all their partitions); default: every topic the group has commits on")
			fs.BoolVar(&f.allowNewTopics, "allow-new-topics", false, "allow --topics the group has no commits on")
			return f
		},
		Run: runSeek,
	}
}

type seekedJSON struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	PriorOffset *int64 `json:"prior_offset"`
	NewOffset   int64  `json:"new_offset"`
	Error       string `json:"error"`
}

// errActive is the refusal of a group with members, as
// kafka-consumer-groups --reset-offsets refuses it ("Assignments can only
// be reset if the group is inactive"); NON_EMPTY_GROUP is Kafka's error
// for changing a group that still has members.
func errActive(group, state string) error {
	return fmt.Errorf("%s: offsets can only be reset while group %q is inactive (Empty), but its state is %s; stop its consumers first",
		kerr.NonEmptyGroup.Message, group, state)
}

// runSeek commits new offsets for an inactive group, as Kafka's
// --reset-offsets does with AlterConsumerGroupOffsets (an OffsetCommit
// with no member and generation -1).
func runSeek(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*seekFlags)
	group := args[0]
	cl, err := c.Client()
	if err != nil {
		return c.Fail(err)
	}
	adm := kadm.NewClient(cl)
	d := describeGroups(ctx, cl, []string{group})[group]
	exists := true
	switch {
	case errors.Is(d.Err, kerr.GroupIDNotFound):
		exists = false
	case d.Err != nil:
		return c.Fail(d.Err)
	case !d.inactive():
		return c.Fail(errActive(group, d.State))
	}
	current := kadm.OffsetResponses{}
	if exists {
		if current, err = adm.FetchOffsets(ctx, group); err != nil {
			return c.Fail(err)
		}
		if err := current.Error(); err != nil {
			return c.Fail(err)
		}
	}
	topics := splitList(f.topics)
	if len(topics) == 0 {
		topics = current.Offsets().TopicsSet().Topics()
	}
	committed := current.Offsets().TopicsSet()
	for _, t := range topics {
		if _, ok := committed[t]; !ok && !f.allowNewTopics {
			return c.Fail(fmt.Errorf("group %q has no commits on topic %q: add --allow-new-topics to seek it", group, t))
		}
	}
	if len(topics) == 0 {
		return c.Fail(fmt.Errorf("group %q has no commits to seek: name --topics with --allow-new-topics", group))
	}
	target, err := seekTargets(ctx, adm, f, topics)
	if err != nil {
		return c.Fail(err)
	}
	resp, err := adm.CommitOffsets(ctx, group, target)
	if err != nil {
		return c.Fail(err)
	}
	out := []seekedJSON{}
	var failed []itemErr
	for _, r := range resp.Sorted() {
		s := seekedJSON{Topic: r.Topic, Partition: r.Partition, NewOffset: r.At}
		if o, ok := current.Lookup(r.Topic, r.Partition); ok && o.At >= 0 {
			s.PriorOffset = known(o.At)
		}
		if r.Err != nil {
			perr := r.Err
			// A member joined between the state check and the commit: the
			// coordinator refuses a commit of no member to a group with
			// members with UNKNOWN_MEMBER_ID.
			if errors.Is(perr, kerr.UnknownMemberID) {
				perr = errActive(group, "no longer Empty")
			}
			s.Error = errName(perr)
			failed = append(failed, itemErr{fmt.Sprintf("%s/%d", r.Topic, r.Partition), perr})
		}
		out = append(out, s)
	}
	code := kit.ExitOK
	if c.Globals.JSON {
		code = c.JSON(out)
	} else {
		printSeeked(c, out)
	}
	for _, f := range failed {
		itemFailure(c, f.item, f.err)
		code = kit.ExitFailed
	}
	return code
}

func printSeeked(c *kit.Ctx, rows []seekedJSON) {
	withErr := slices.ContainsFunc(rows, func(r seekedJSON) bool { return r.Error != "" })
	tw := kit.NewTable(c.Stdout)
	header := "TOPIC\tPARTITION\tPRIOR-OFFSET\tNEW-OFFSET"
	if withErr {
		header += "\tERROR"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%d\t%s\t%d", r.Topic, r.Partition, num(r.PriorOffset), r.NewOffset)
		if withErr {
			line += "\t" + dash(r.Error)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

// seekTargets lists where each partition of topics goes. A topic that
// does not exist fails the seek, naming it.
func seekTargets(ctx context.Context, adm *kadm.Client, f *seekFlags, topics []string) (kadm.Offsets, error) {
	list := func(fn func(context.Context, ...string) (kadm.ListedOffsets, error)) (kadm.ListedOffsets, error) {
		l, err := fn(ctx, topics...)
		if err != nil {
			return nil, err
		}
		for _, t := range topics {
			if ps := l[t]; len(ps) == 0 || ps[-1].Err != nil {
				return nil, itemErr{"topic " + t, kerr.UnknownTopicOrPartition}
			}
		}
		if err := l.Error(); err != nil {
			return nil, err
		}
		return l, nil
	}
	switch {
	case f.to == "start":
		l, err := list(adm.ListStartOffsets)
		return l.Offsets(), err
	case f.to == "end":
		l, err := list(adm.ListEndOffsets)
		return l.Offsets(), err
	case f.to != "":
		l, err := list(func(ctx context.Context, ts ...string) (kadm.ListedOffsets, error) {
			return adm.ListOffsetsAfterMilli(ctx, f.atMilli, ts...)
		})
		return l.Offsets(), err
	}
	// --to-offset N within [start, end], as Kafka's --to-offset keeps it.
	starts, err := list(adm.ListStartOffsets)
	if err != nil {
		return nil, err
	}
	ends, err := list(adm.ListEndOffsets)
	if err != nil {
		return nil, err
	}
	out := make(kadm.Offsets)
	ends.Each(func(e kadm.ListedOffset) {
		at := min(f.toOffset, e.Offset)
		if s, ok := starts.Lookup(e.Topic, e.Partition); ok {
			at = max(at, s.Offset)
		}
		out.Add(kadm.Offset{Topic: e.Topic, Partition: e.Partition, At: at, LeaderEpoch: -1})
	})
	return out, nil
}
