package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/mirror/lag"
)

// The RPO guard of stop (issue 27): --max-lag-ms, --max-lag-records and
// --force are stop's flags (stop.go). The broker measures each partition's
// lag at the barrier and refuses a topic with a partition over the bound
// or of unknown lag (POLICY_VIOLATION, naming each partition with its lag);
// the mirror config mirror.failover.max.lag.ms is the default --max-lag-ms.
// Here: how describe and stop print the bound.

// printLagOverBound lists a refused topic's partitions, one a line.
func printLagOverBound(w io.Writer, r admin.TopicResult) {
	for _, o := range r.LagOverBound {
		part := fmt.Sprint(o.Partition)
		if o.Partition < 0 {
			part = "all"
		}
		fmt.Fprintf(w, "  %s partition %s: lag %s; bound %s\n", r.Topic, part, lag.Describe(o.Lag, o.LagMs),
			lag.Bound{Records: o.MaxLagRecords, Ms: o.MaxLagMs})
	}
}

// printFailoverBound prints the mirror's failover bound line and reports
// whether it has one (describe then adds OVER-BOUND).
func printFailoverBound(w io.Writer, d admin.MirrorDescription) bool {
	if d.FailoverMaxLagMs == nil {
		return false
	}
	var over []string
	for _, t := range d.Topics {
		for _, p := range t.Partitions {
			if p.OverFailoverBound {
				over = append(over, fmt.Sprintf("%s-%d", t.Name, p.Partition))
			}
		}
	}
	fmt.Fprintf(w, "Failover bound (mirror.failover.max.lag.ms): %d ms; partitions over it (a stop would be refused): %d", *d.FailoverMaxLagMs, len(over))
	if len(over) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(over, ", "))
	}
	fmt.Fprintln(w)
	return true
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
