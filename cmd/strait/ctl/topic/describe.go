package topic

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

type describeFlags struct {
	regex                                  bool
	summary, configs, partitions, printAll bool
}

func describeCommand() *kit.Command {
	return &kit.Command{
		Name:    "describe",
		Args:    "TOPIC... [-r/--regex] [-s] [-c] [-p] [-a]",
		Summary: "describe topics: summary, configs with their source, partitions with offsets",
		Examples: []string{
			"strait topic describe orders            # summary and configs",
			"strait topic describe orders -p         # partitions: leader, epoch, replicas, ISR, log start, high watermark",
			"strait topic describe -r 'orders.*' -a --json",
		},
		MinArgs: 1, MaxArgs: -1,
		Flags: func(fs *flag.FlagSet) any {
			f := &describeFlags{}
			regexFlag(fs, &f.regex, "describe the topics matching any")
			for _, s := range []struct {
				long, short string
				v           *bool
				usage       string
			}{
				{"print-summary", "s", &f.summary, "print the summary section"},
				{"print-configs", "c", &f.configs, "print the configs section"},
				{"print-partitions", "p", &f.partitions, "print the partitions section"},
				{"print-all", "a", &f.printAll, "print all sections (--json always has all)"},
			} {
				fs.BoolVar(s.v, s.long, false, s.usage)
				short(fs, s.long, s.short)
			}
			return f
		},
		Run: runDescribe,
	}
}

// described is one topic in --json: every section.
type described struct {
	topicSummary
	Configs    []configEntry      `json:"configs"`
	Partitions []partitionOffsets `json:"partitions"`
}

// configEntry is one config as DescribeConfigs reports it.
type configEntry struct {
	Name      string  `json:"name"`
	Value     *string `json:"value"` // null when unset or sensitive
	Source    string  `json:"source"`
	Sensitive bool    `json:"sensitive"`
}

// partitionOffsets is a partition's metadata and its offsets (-1 when the
// listing failed; the partition's error then says why).
type partitionOffsets struct {
	partitionSummary
	LogStartOffset   int64 `json:"log_start_offset"`
	LastStableOffset int64 `json:"last_stable_offset"`
	HighWatermark    int64 `json:"high_watermark"`
}

func runDescribe(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*describeFlags)
	// As rpk: the summary and configs unless sections are asked for.
	if f.printAll {
		f.summary, f.configs, f.partitions = true, true, true
	}
	if !f.summary && !f.configs && !f.partitions {
		f.summary, f.configs = true, true
	}
	sel, err := newSelection(args, f.regex, false)
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
		all    = []described{}
		failed []failure
		ok     []string
	)
	for _, d := range details.Sorted() {
		s := summarize(c, d)
		all = append(all, described{topicSummary: s, Configs: []configEntry{}, Partitions: []partitionOffsets{}})
		if s.Error != "" {
			failed = append(failed, failure{d.Topic, s.Error})
			continue
		}
		ok = append(ok, d.Topic)
	}
	if len(ok) > 0 && (f.configs || c.Globals.JSON) {
		if err := addConfigs(ctx, c, adm, all, &failed); err != nil {
			return c.Fail(err)
		}
	}
	if len(ok) > 0 && (f.partitions || c.Globals.JSON) {
		if err := addPartitions(ctx, c, adm, details, all, ok); err != nil {
			return c.Fail(err)
		}
	}
	if !c.Globals.JSON {
		printDescribed(c, f, all)
	}
	return finish(c, all, &table{}, failed)
}

// addConfigs fills each loaded topic's configs (DescribeConfigs), sorted
// by name; a topic whose configs fail is a failure.
func addConfigs(ctx context.Context, c *kit.Ctx, adm *kadm.Client, all []described, failed *[]failure) error {
	var names []string
	for _, d := range all {
		if d.Error == "" {
			names = append(names, d.Name)
		}
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return err
	}
	for i := range all {
		d := &all[i]
		if d.Error != "" {
			continue
		}
		rc, err := rcs.On(d.Name, nil)
		if err == nil {
			err = rc.Err
		}
		if err != nil {
			d.Error = reason(c, err, rc.ErrMessage)
			*failed = append(*failed, failure{d.Name, d.Error})
			continue
		}
		for _, cfg := range rc.Configs {
			e := configEntry{Name: cfg.Key, Value: cfg.Value, Source: cfg.Source.String(), Sensitive: cfg.Sensitive}
			if cfg.Sensitive {
				e.Value = nil
			}
			d.Configs = append(d.Configs, e)
		}
		slices.SortFunc(d.Configs, func(a, b configEntry) int { return strings.Compare(a.Name, b.Name) })
	}
	return nil
}

// addPartitions fills each loaded topic's partitions with their log start
// offset, last stable offset and high watermark (ListOffsets earliest,
// latest read_committed, latest).
func addPartitions(ctx context.Context, c *kit.Ctx, adm *kadm.Client, details kadm.TopicDetails, all []described, names []string) error {
	var offs [3]kadm.ListedOffsets
	for i, list := range []func(context.Context, ...string) (kadm.ListedOffsets, error){
		adm.ListStartOffsets, adm.ListCommittedOffsets, adm.ListEndOffsets,
	} {
		o, err := list(ctx, names...)
		if err != nil && len(o) == 0 {
			return err
		}
		offs[i] = o
	}
	for i := range all {
		d := &all[i]
		if d.Error != "" {
			continue
		}
		for _, p := range partitionSummaries(c, details[d.Name]) {
			po := partitionOffsets{partitionSummary: p}
			for j, dst := range []*int64{&po.LogStartOffset, &po.LastStableOffset, &po.HighWatermark} {
				*dst = -1
				lo, ok := offs[j].Lookup(d.Name, p.Partition)
				switch {
				case !ok:
				case lo.Err != nil && po.Error == "":
					po.Error = reason(c, lo.Err, "")
				case lo.Err == nil:
					*dst = lo.Offset
				}
			}
			d.Partitions = append(d.Partitions, po)
		}
	}
	return nil
}

// printDescribed prints the asked-for sections of each loaded topic as
// rpk does: titled when there is more than one section (or topic).
func printDescribed(c *kit.Ctx, f *describeFlags, all []described) {
	var loaded []described
	for _, d := range all {
		if d.Error == "" {
			loaded = append(loaded, d)
		}
	}
	sections := 0
	for _, on := range []bool{f.summary, f.configs, f.partitions} {
		if on {
			sections++
		}
	}
	titled := sections > 1 || len(loaded) > 1
	first := true
	section := func(d described, name string, t *table) {
		if !first {
			fmt.Fprintln(c.Stdout)
		}
		first = false
		if titled {
			title := name
			if len(loaded) > 1 {
				title += " (" + d.Name + ")"
			}
			fmt.Fprintf(c.Stdout, "%s\n%s\n", title, strings.Repeat("=", len(title)))
		}
		if len(t.rows) == 0 {
			fmt.Fprintln(c.Stdout, "(none)")
		}
		t.print(c.Stdout)
	}
	for _, d := range loaded {
		if f.summary {
			section(d, "SUMMARY", summaryTable(d))
		}
		if f.configs {
			t := &table{headers: []string{"KEY", "VALUE", "SOURCE"}}
			for _, e := range d.Configs {
				v := ""
				switch {
				case e.Sensitive:
					v = "(sensitive)"
				case e.Value != nil:
					v = *e.Value
				}
				t.add(e.Name, v, e.Source)
			}
			section(d, "CONFIGS", t)
		}
		if f.partitions {
			section(d, "PARTITIONS", partitionsTable(d.Partitions))
		}
	}
}

// summaryTable is the summary as key/value rows (no header line).
func summaryTable(d described) *table {
	t := &table{}
	t.add("NAME", d.Name)
	t.add("ID", d.ID)
	if d.Internal {
		t.add("INTERNAL", "true")
	}
	t.add("PARTITIONS", d.PartitionCount)
	t.add("REPLICAS", d.ReplicationFactor)
	t.headers, t.rows = t.rows[0], t.rows[1:]
	return t
}

// partitionsTable has rpk's columns plus the ISR; LAST-STABLE-OFFSET only
// when a transaction keeps it below the high watermark.
func partitionsTable(ps []partitionOffsets) *table {
	t := &table{
		headers:  []string{"PARTITION", "LEADER", "EPOCH", "REPLICAS", "ISR", "OFFLINE-REPLICAS", "LOAD-ERROR", "LOG-START-OFFSET", "LAST-STABLE-OFFSET", "HIGH-WATERMARK"},
		optional: []string{"OFFLINE-REPLICAS", "LOAD-ERROR", "LAST-STABLE-OFFSET"},
	}
	for _, p := range ps {
		lso := ""
		if p.LastStableOffset != p.HighWatermark {
			lso = offset(p.LastStableOffset)
		}
		t.add(p.Partition, p.Leader, p.LeaderEpoch, joinInt32s(p.Replicas), joinInt32s(p.ISR), joinInt32s(p.OfflineReplicas),
			p.Error, offset(p.LogStartOffset), lso, offset(p.HighWatermark))
	}
	return t
}

// offset is an offset for a table cell, "" (printed "-") when unknown.
func offset(o int64) string {
	if o < 0 {
		return ""
	}
	return fmt.Sprint(o)
}
