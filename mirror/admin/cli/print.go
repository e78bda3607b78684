package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/strait-io/strait/mirror/admin"
)

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
}

// orDash shows −1 ("not yet available") and "" as "-".
func orDash[T int32 | int64](v T) string {
	if v < 0 {
		return "-"
	}
	return strconv.FormatInt(int64(v), 10)
}

// orUnknown shows a lag of −1 as "unknown": a lag is never "not
// applicable", only not known (mirror/lag), and must not read as 0.
func orUnknown(v int64) string {
	if v < 0 {
		return "unknown"
	}
	return strconv.FormatInt(v, 10)
}

// measured shows when the lag's source side was last measured, "-" if
// never.
func measured(at *time.Time) string {
	if at == nil {
		return "-"
	}
	return at.UTC().Format(time.RFC3339)
}

// retries shows a retry count; −1 (the last failure is not retryable)
// as "no-retry".
func retries(n int32) string {
	if n < 0 {
		return "no-retry"
	}
	return strconv.Itoa(int(n))
}

func strOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (e *env) printJSON(v any) int {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(e.stderr, "strait mirror %s: %v\n", e.cmd, err)
		return exitFailed
	}
	return exitOK
}

func printList(w io.Writer, ms []admin.ListedMirror) {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tSOURCE-BOOTSTRAP\tSOURCE-CLUSTER-ID\tTOPICS")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", m.Name, m.SourceBootstrap, strOrDash(m.SourceClusterID), m.TopicCount)
	}
	tw.Flush()
}

func printDescription(w io.Writer, d admin.MirrorDescription) {
	parts := 0
	for _, t := range d.Topics {
		parts += len(t.Partitions)
	}
	fmt.Fprintf(w, "Mirror %s: %d topics, %d partitions\n", d.Name, len(d.Topics), parts)
	if d.ScramSyncError != "" {
		fmt.Fprintf(w, "SCRAM user sync: %s\n", d.ScramSyncError)
	}
	bounded := printFailoverBound(w, d)
	tw := newTable(w)
	head := "TOPIC\tPARTITION\tSTATE\tSOURCE-HW\tDEST-HW\tDEST-LEO\tLAG\tC-LAG\tLAG-MS\tMEASURED\tLME\tRETRIES\tSKIPPED\tERROR"
	if bounded {
		head += "\tOVER-BOUND"
	}
	fmt.Fprintln(tw, head)
	for _, t := range d.Topics {
		for _, p := range t.Partitions {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s", t.Name, p.Partition, strOrDash(p.State),
				orDash(p.SourceHighWatermark), orDash(p.DestinationHighWatermark), orDash(p.DestinationLogEndOffset),
				orUnknown(p.Lag), orUnknown(p.CommittedLag), orUnknown(p.LagMs), measured(p.LagMeasuredAt),
				orDash(p.LastMirrorEpoch), retries(p.RetryCount), p.OffsetsSkipped, strOrDash(p.LastError))
			if bounded {
				fmt.Fprintf(tw, "\t%s", yesNo(p.OverFailoverBound))
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
	printSkippedGroupOffsets(w, d.SkippedGroupOffsets)
}

// printSkippedGroupOffsets lists what the last group offset sync round
// left alone (issue 27), after the partitions table; nothing when none.
func printSkippedGroupOffsets(w io.Writer, skipped []admin.SkippedGroupOffset) {
	if len(skipped) == 0 {
		return
	}
	fmt.Fprintf(w, "Group offsets not synced in the last round: %d\n", len(skipped))
	tw := newTable(w)
	fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tREASON\tDEST-COMMITTED\tSOURCE")
	for _, o := range skipped {
		part := "*"
		if o.Partition >= 0 {
			part = fmt.Sprint(o.Partition)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.Group, strOrDash(o.Topic), part, o.Reason, orDash(o.Committed), orDash(o.Source))
	}
	tw.Flush()
}

func printTopicResults(w io.Writer, rs admin.TopicResults, missing []string) {
	tw := newTable(w)
	fmt.Fprintln(tw, "TOPIC\tRESULT")
	for _, r := range rs {
		result := "OK"
		if r.Err != nil {
			result = admin.ErrorName(r.Err) + ": " + r.Detail()
		}
		if len(r.Dropped) > 0 {
			result += "; deleted " + describeDropped(r.Dropped)
		}
		fmt.Fprintf(tw, "%s\t%s\n", r.Topic, result)
	}
	for _, t := range missing {
		fmt.Fprintf(tw, "%s\tNO RESULT\n", t)
	}
	tw.Flush()
}

// describeDropped is "20 records (partition 0: 12, partition 1: 8)".
func describeDropped(ds []admin.DroppedRecords) string {
	var total int64
	parts := make([]string, 0, len(ds))
	for _, d := range ds {
		total += d.Records
		parts = append(parts, fmt.Sprintf("partition %d: %d", d.Partition, d.Records))
	}
	return fmt.Sprintf("%d records the source does not share (%s)", total, strings.Join(parts, ", "))
}
