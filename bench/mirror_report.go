package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// MirrorReport is the report of `strait bench mirror`: the Report every
// command prints, plus the mirror's verdict under "mirror".
type MirrorReport struct {
	Report
	Mirror *MirrorSummary `json:"mirror,omitempty"`
}

// WriteJSON prints the report as one indented JSON document.
func (r *MirrorReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText prints the results table, then the mirror's figures against
// issue 5's targets.
func (r *MirrorReport) WriteText(w io.Writer) {
	r.Report.WriteText(w)
	writeMirrorSummary(w, r.Mirror)
}

func writeMirrorSummary(w io.Writer, s *MirrorSummary) {
	if s == nil {
		return
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	fmt.Fprintf(w, "destination produce %.1f MiB/s; source catch-up fetch %.1f MiB/s\n",
		s.DestProduceMiBPerSec, s.SourceFetchMiBPerSec)
	if !s.Advertised {
		fmt.Fprintf(w, "mirror %s of %s: not run, the destination does not advertise the mirror RPCs (ApiVersions lacks key 94)\n", s.MirrorName, s.Topic)
		return
	}
	fmt.Fprintf(w, "mirror %s of %s (%d partitions): catch-up %.1f MiB/s, first record mirrored after %s\n",
		s.MirrorName, s.Topic, s.Partitions, s.MirrorMiBPerSec, fmtDur(s.MirrorStartup))
	if s.SourceCPUSecPerGiB > 0 || s.DestCPUSecPerGiB > 0 {
		fmt.Fprintf(w, "broker CPU per GiB mirrored: source %.2f s, destination %.2f s\n", s.SourceCPUSecPerGiB, s.DestCPUSecPerGiB)
	}
	fmt.Fprintf(w, "ratio mirror / min(source fetch, destination produce) %.2f (target >= %.2f: %s)\n",
		s.Ratio, s.RatioTarget, verdict(s.RatioMet))
	if s.SteadyRate == 0 {
		return
	}
	fmt.Fprintf(w, "steady state at %.0f%% of the slower rate (%.0f rec/s, %.1f MiB/s mirrored): %d samples",
		100*s.SteadyFraction, s.SteadyRate, s.SteadyMiBPerSec, s.Samples)
	if s.LagSampleErrors > 0 {
		fmt.Fprintf(w, " (%d failed)", s.LagSampleErrors)
	}
	fmt.Fprintf(w, "\n  lag since acknowledged by the source p50 %s, p99 %s, max %s (target p99 < %s: %s); records behind p50 %d, p99 %d, max %d\n",
		fmtDur(s.LagP50), fmtDur(s.LagP99), fmtDur(s.LagMax), fmtDur(s.LagTarget), verdict(s.LagMet),
		s.LagRecordsP50, s.LagRecordsP99, s.LagRecordsMax)
	fmt.Fprintf(w, "  lag since the record's timestamp p50 %s, p99 %s, max %s; steady producer p99 %s, sent in %s\n",
		fmtDur(s.StampLagP50), fmtDur(s.StampLagP99), fmtDur(s.StampLagMax), fmtDur(s.SteadyProduceP99), fmtDur(s.SteadyProduceElapsed))
	writeLagSeries(w, s.LagSeries)
}

// lagWindow is the width of one column of the lag over time.
const lagWindow = 5 * time.Second

// writeLagSeries prints the lag over time: the largest sample of each
// lagWindow of the steady state.
func writeLagSeries(w io.Writer, series []LagPoint) {
	if len(series) == 0 {
		return
	}
	var cols []string
	for i := 0; i < len(series); {
		win := series[i].At / lagWindow
		var age time.Duration
		var recs int64
		for ; i < len(series) && series[i].At/lagWindow == win; i++ {
			age, recs = max(age, series[i].Age), max(recs, series[i].Records)
		}
		cols = append(cols, fmt.Sprintf("%v-%v %s/%d", win*lagWindow, (win+1)*lagWindow, fmtDur(age), recs))
	}
	fmt.Fprintf(w, "  lag over time, max per %v (age/records): %s\n", lagWindow, strings.Join(cols, ", "))
}
