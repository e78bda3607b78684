package topic

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// partitionList is a repeatable flag of comma-separated partition numbers.
type partitionList []int32

func (l *partitionList) String() string { return joinInt32s(*l) }

func (l *partitionList) Set(v string) error {
	ps, err := kit.ParsePartitions(v)
	*l = append(*l, ps...)
	return err
}

type trimFlags struct {
	offset     string
	partitions partitionList
	// Read from offset by Check:
	at       int64 // the new log start offset; -1: the high watermark
	atMillis int64 // with byTime, the first offset at or after this time
	byTime   bool
}

// Check reads --offset: a number, "end" (DeleteRecords' -1: up to the
// high watermark, everything), or @TIME, the first offset at or after a
// time (unix milliseconds, as Kafka's timestamps, or RFC 3339).
func (f *trimFlags) Check() error {
	switch {
	case f.offset == "":
		return fmt.Errorf("--offset is required (a number, end, or @TIME)")
	case f.offset == "end":
		f.at = -1
	case strings.HasPrefix(f.offset, "@"):
		ms, _, err := kit.ParseAtTime(f.offset)
		if err != nil {
			return fmt.Errorf("--offset %w", err)
		}
		f.atMillis, f.byTime = ms, true
	default:
		n, err := strconv.ParseInt(f.offset, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("--offset %q is not an offset (a number, end, or @TIME)", f.offset)
		}
		f.at = n
	}
	return nil
}

func trimPrefixCommand() *kit.Command {
	return &kit.Command{
		Name:    "trim-prefix",
		Args:    "TOPIC -o/--offset N|end|@TIME [-p/--partitions P[,P...]]",
		Summary: "delete the records before an offset (DeleteRecords): the log start moves up",
		Examples: []string{
			"strait topic trim-prefix orders --offset 1200 -p 0",
			"strait topic trim-prefix orders --offset end              # every partition: all records so far",
			"strait topic trim-prefix orders --offset @2024-05-01T00:00:00Z",
		},
		MinArgs: 1, MaxArgs: 1,
		Flags: func(fs *flag.FlagSet) any {
			f := &trimFlags{}
			fs.StringVar(&f.offset, "offset", "", "the new log start: an offset `N`, end (the high watermark), or @TIME (unix ms or RFC 3339)")
			short(fs, "offset", "o")
			fs.Var(&f.partitions, "partitions", "only these partitions, `P[,P...]` (repeatable; default all)")
			short(fs, "partitions", "p")
			return f
		},
		Run: runTrimPrefix,
	}
}

// trimmed is one partition's outcome in --json.
type trimmed struct {
	Topic          string `json:"topic"`
	Partition      int32  `json:"partition"`
	NewStartOffset int64  `json:"new_start_offset"` // -1 when it failed
	Error          string `json:"error"`
}

func runTrimPrefix(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*trimFlags)
	topic := args[0]
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return c.Fail(err)
	}
	d := details[topic]
	if d.Err != nil {
		return finish(c, []trimmed{}, &table{}, []failure{{topic, reason(c, d.Err, "")}})
	}
	parts := slices.Clone([]int32(f.partitions))
	if len(parts) == 0 {
		parts = d.Partitions.Numbers()
	}
	slices.Sort(parts)
	parts = slices.Compact(parts)

	results := map[int32]*trimmed{}
	var offsets kadm.Offsets
	var listed kadm.ListedOffsets
	if f.byTime {
		if listed, err = adm.ListOffsetsAfterMilli(ctx, f.atMillis, topic); err != nil && len(listed) == 0 {
			return c.Fail(err)
		}
	}
	for _, p := range parts {
		r := &trimmed{Topic: topic, Partition: p, NewStartOffset: -1}
		results[p] = r
		at := f.at
		if _, ok := d.Partitions[p]; !ok {
			r.Error = reason(c, kerr.UnknownTopicOrPartition, fmt.Sprintf("topic %s has no partition %d", topic, p))
			continue
		}
		if f.byTime {
			lo, ok := listed.Lookup(topic, p)
			switch {
			case !ok:
				r.Error = reason(c, noAnswer(fmt.Sprintf("partition %d", p)), "")
				continue
			case lo.Err != nil:
				r.Error = reason(c, lo.Err, "")
				continue
			}
			at = lo.Offset
		}
		offsets.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	if len(offsets) > 0 {
		resps, err := adm.DeleteRecords(ctx, offsets)
		if err != nil && len(resps) == 0 {
			return c.Fail(err)
		}
		offsets.Each(func(o kadm.Offset) {
			r := results[o.Partition]
			dr, ok := resps.Lookup(topic, o.Partition)
			switch {
			case !ok:
				r.Error = reason(c, noAnswer(fmt.Sprintf("partition %d", o.Partition)), "")
			case dr.Err != nil:
				r.Error = reason(c, dr.Err, "")
			default:
				r.NewStartOffset = dr.LowWatermark
			}
		})
	}
	var (
		all    []trimmed
		failed []failure
		t      = table{headers: []string{"TOPIC", "PARTITION", "NEW-START-OFFSET"}}
	)
	for _, p := range parts {
		r := results[p]
		all = append(all, *r)
		if r.Error != "" {
			failed = append(failed, failure{fmt.Sprintf("%s partition %d", topic, p), r.Error})
			continue
		}
		t.add(topic, p, r.NewStartOffset)
	}
	return finish(c, all, &t, failed)
}
