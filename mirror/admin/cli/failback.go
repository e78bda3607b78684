package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/mirror/admin"
)

// start's failback preview: --dry-run reports, per partition, what the
// start would truncate (the failback's walk: the source's last mirrored
// epoch, then the fetcher's epoch check) with the records' offsets and
// timestamps, and changes nothing; --export-truncated DIR also writes
// those records, the batches byte for byte as stored, one file per
// partition (DIR/TOPIC-PARTITION/<first offset, 20 digits>.log: Kafka's
// segment layout, which kafka-dump-log.sh reads, and admin.ReadSegment).
// Without --dry-run, --export-truncated exports first and starts only if
// every export succeeded, so nothing an operator may need is truncated
// without its copy on disk. Records produced to the topic between the
// export and the start would be truncated without a copy: stop writing to
// it first.

type previewFlags struct {
	inner     any
	dryRun    bool
	exportDir string
	json      bool
}

func (f *previewFlags) listTopics() []string {
	if t := f.topicsFlags(); t != nil {
		return t.listTopics()
	}
	return nil
}

// topicsFlags is start's own flags, under --wait's and the filters'.
func (f *previewFlags) topicsFlags() *topicsFlags {
	inner := f.inner
	for {
		switch v := inner.(type) {
		case *waitFlags:
			inner = v.inner
		case *filterFlags:
			inner = v.inner
		case *topicsFlags:
			return v
		default:
			return nil
		}
	}
}

func (f *previewFlags) check() error {
	if f.json && !f.dryRun {
		return fmt.Errorf("--json goes with --dry-run")
	}
	if f.dryRun || f.exportDir != "" {
		if w, ok := f.inner.(*waitFlags); ok {
			if w.wait && f.dryRun {
				return fmt.Errorf("--dry-run starts nothing to --wait for")
			}
			if ff, ok := w.inner.(*filterFlags); ok && len(ff.include)+len(ff.exclude) > 0 {
				return fmt.Errorf("--dry-run and --export-truncated take --topic, not --include/--exclude")
			}
		}
		if len(f.listTopics()) == 0 {
			return fmt.Errorf("missing --topic")
		}
	}
	return checkFlags(f.inner)
}

func (f *previewFlags) truncateExisting() bool {
	t := f.topicsFlags()
	return t != nil && t.truncateExisting
}

// withFailbackPreview adds --dry-run, --export-truncated and --json to start.
func withFailbackPreview(c command) command {
	flags, run := c.flags, c.run
	c.args += " [--dry-run [--json]] [--export-truncated DIR]"
	c.flags = func(fs *flag.FlagSet) any {
		f := &previewFlags{inner: flags(fs)}
		fs.BoolVar(&f.dryRun, "dry-run", false, "change nothing: report per partition where the start's failback walk diverges and the records it would truncate (offsets, timestamps)")
		fs.StringVar(&f.exportDir, "export-truncated", "", "write the records the start truncates to `DIR`/TOPIC-PARTITION/<first offset>.log (Kafka record batches byte for byte, a .log segment) before starting; with --dry-run, only write them")
		fs.BoolVar(&f.json, "json", false, "with --dry-run: print JSON instead of a table")
		return f
	}
	c.run = func(ctx context.Context, e *env, mirror string, flags any) int {
		f := flags.(*previewFlags)
		if !f.dryRun && f.exportDir == "" {
			return run(ctx, e, mirror, f.inner)
		}
		report, code := e.previewFailback(ctx, mirror, f.listTopics(), f.truncateExisting(), f.exportDir)
		if report.Topics == nil {
			return code // the request failed: said on stderr
		}
		if f.json {
			if c := e.printJSON(report); c != exitOK {
				return c
			}
		} else {
			printPreview(e.stdout, report, f.dryRun)
		}
		if f.dryRun || code != exitOK {
			if code != exitOK && !f.dryRun {
				fmt.Fprintf(e.stderr, "strait mirror %s: not started: the records it would truncate could not all be read and exported\n", e.cmd)
			}
			return code
		}
		return run(ctx, e, mirror, f.inner)
	}
	return c
}

// PreviewPartition is one partition of a dry run (--json).
type PreviewPartition struct {
	Topic string `json:"topic"`
	admin.Truncation
	// Truncated are the offsets from the divergence point to the log end.
	TruncatedOffsets int64 `json:"truncated_offsets"`
	Batches          int   `json:"batches"`
	Records          int64 `json:"records"`
	// FirstOffset..LastOffset and the timestamps (ms) of the truncated
	// batches, −1 when none.
	FirstOffset    int64 `json:"first_offset"`
	LastOffset     int64 `json:"last_offset"`
	FirstTimestamp int64 `json:"first_timestamp"`
	LastTimestamp  int64 `json:"last_timestamp"`
	Bytes          int   `json:"bytes"`
	// HighWatermark is the partition's high watermark when it was read
	// (−1 unknown). AboveHighWatermark are the truncated offsets above
	// it: written on the leader but not yet on every in-sync replica.
	// The failback truncates them too (the divergence point is found from
	// the log end, as Kafka's truncation is), but no client can read
	// them: the records, offsets and timestamps above cover the rest, and
	// --export-truncated refuses (Warning says so).
	HighWatermark      int64  `json:"high_watermark"`
	AboveHighWatermark int64  `json:"above_high_watermark_offsets"`
	ExportFile         string `json:"export_file,omitempty"`
	Warning            string `json:"warning,omitempty"`
	Error              string `json:"error,omitempty"`
}

// PreviewReport is a dry run's answer (--json).
type PreviewReport struct {
	Mirror     string             `json:"mirror"`
	DryRun     bool               `json:"dry_run"`
	Topics     []PreviewTopic     `json:"topics"`
	Partitions []PreviewPartition `json:"partitions"`
}

// PreviewTopic is one topic's answer to the dry run: an error, or the
// number of its partitions the start would align (0: the start creates
// it, or it is mirrored already; nothing to truncate).
type PreviewTopic struct {
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
	Error      string `json:"error,omitempty"`
}

// previewFailback asks for the dry run, reads every partition's records
// to truncate and exports them to dir ("" for none). The code is
// exitFailed when a topic failed or a partition could not be read or
// written.
func (e *env) previewFailback(ctx context.Context, mirror string, topics []string, truncateExisting bool, dir string) (PreviewReport, int) {
	report := PreviewReport{Mirror: mirror, DryRun: true}
	rs, err := e.client.StartMirrorTopicsWith(ctx, mirror, admin.StartOptions{DryRun: true, TruncateExisting: truncateExisting}, topics...)
	if err != nil {
		return report, e.fail(err)
	}
	for _, r := range rs {
		t := PreviewTopic{Topic: r.Topic, Partitions: len(r.Truncation)}
		if r.Err != nil {
			t.Error = admin.ErrorName(r.Err) + ": " + r.Detail()
		}
		report.Topics = append(report.Topics, t)
	}
	code := exitOK
	for _, r := range rs.Failed() {
		fmt.Fprintf(e.stderr, "strait mirror %s: topic %s: %s: %s\n", e.cmd, r.Topic, admin.ErrorName(r.Err), r.Detail())
		code = exitFailed
	}
	hws := e.highWatermarks(ctx, rs)
	for _, r := range rs {
		for _, tr := range r.Truncation {
			p := PreviewPartition{Topic: r.Topic, Truncation: tr, TruncatedOffsets: tr.Offsets(), FirstOffset: -1, LastOffset: -1,
				FirstTimestamp: -1, LastTimestamp: -1, HighWatermark: -1}
			if tr.Offsets() > 0 {
				readTo := tr.LogEndOffset
				if hw, ok := hws.Lookup(r.Topic, tr.Partition); ok && hw.Err == nil {
					p.HighWatermark = hw.Offset
					readTo = min(readTo, max(hw.Offset, tr.DivergenceOffset))
					p.AboveHighWatermark = tr.LogEndOffset - readTo
				}
				recs, err := e.client.ReadBatches(ctx, r.Topic, tr.Partition, tr.DivergenceOffset, readTo)
				p.Batches, p.Records, p.Bytes = recs.Batches, recs.Records, recs.Bytes
				p.FirstOffset, p.LastOffset, p.FirstTimestamp, p.LastTimestamp = recs.FirstOffset, recs.LastOffset, recs.FirstTimestamp, recs.LastTimestamp
				if p.AboveHighWatermark > 0 {
					p.Warning = aboveHighWatermark(p, readTo)
					if err == nil && dir != "" {
						err = fmt.Errorf("--export-truncated cannot copy the %d offsets above the high watermark; nothing exported. "+
							"Run again once the high watermark reaches the log end (the followers catch up, or leave the ISR)", p.AboveHighWatermark)
					}
				}
				if err == nil && dir != "" && recs.Batches > 0 {
					p.ExportFile, err = admin.WriteSegment(dir, r.Topic, tr.Partition, recs)
				}
				if err != nil {
					p.Error = err.Error()
					fmt.Fprintf(e.stderr, "strait mirror %s: topic %s partition %d: %v\n", e.cmd, r.Topic, tr.Partition, err)
					code = exitFailed
				}
			}
			report.Partitions = append(report.Partitions, p)
		}
	}
	return report, code
}

// highWatermarks lists the high watermarks of the topics a dry run
// truncates (none known if the listing fails: every offset is then read
// as before, and one above the high watermark fails the read).
func (e *env) highWatermarks(ctx context.Context, rs admin.TopicResults) kadm.ListedOffsets {
	var topics []string
	for _, r := range rs {
		if len(r.Truncation) > 0 {
			topics = append(topics, r.Topic)
		}
	}
	if len(topics) == 0 {
		return nil
	}
	hws, err := kadm.NewClient(e.client.Kgo()).ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil
	}
	return hws
}

// aboveHighWatermark says what a dry run cannot show of p: the offsets
// from readTo (its high watermark) to the log end.
func aboveHighWatermark(p PreviewPartition, readTo int64) string {
	return fmt.Sprintf("%d of the offsets to truncate, [%d, %d), are above the high watermark %d (written on the leader, not yet on "+
		"every in-sync replica): the failback truncates them too, as Kafka's truncation to the divergence point does, but they cannot "+
		"be read, so the records and timestamps shown cover [%d, %d) only", p.AboveHighWatermark, readTo, p.LogEndOffset, p.HighWatermark,
		p.DivergenceOffset, readTo)
}

func printPreview(w io.Writer, r PreviewReport, dryRun bool) {
	if dryRun {
		fmt.Fprintf(w, "Dry run of mirror %s: nothing was changed.\n", r.Mirror)
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tLME\tDIVERGENCE\tLOG-END\tTRUNCATED-OFFSETS\tRECORDS\tBATCHES\tFIRST-OFFSET\tLAST-OFFSET\tFIRST-TIMESTAMP\tLAST-TIMESTAMP\tEXPORT")
	for _, p := range r.Partitions {
		note := strOrDash(p.ExportFile)
		if p.Error != "" {
			note = "ERROR: " + p.Error
		} else if p.RefusedWithoutTruncateExisting {
			note += " (no LME: refused without --truncate-existing)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", p.Topic, p.Partition, orDash(p.LastMirroredEpoch),
			p.DivergenceOffset, p.LogEndOffset, p.TruncatedOffsets, p.Records, p.Batches, orDash(p.FirstOffset), orDash(p.LastOffset),
			timestamp(p.FirstTimestamp), timestamp(p.LastTimestamp), note)
	}
	tw.Flush()
	for _, p := range r.Partitions {
		if p.Warning != "" {
			fmt.Fprintf(w, "%s-%d: %s\n", p.Topic, p.Partition, p.Warning)
		}
	}
	for _, t := range r.Topics {
		if t.Error == "" && t.Partitions == 0 {
			fmt.Fprintf(w, "%s: nothing to truncate (the start creates it, or it is mirrored already)\n", t.Topic)
		}
	}
}

// timestamp renders ms since the epoch as RFC 3339 UTC, "-" when unknown.
func timestamp(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
