package bench

import (
	"fmt"
	"io"
	"strings"
)

// scaleVerdict is one of issue 29's scale targets judged on one step.
type scaleVerdict struct {
	Name   string
	Figure string
	Target string
	Met    bool
}

// targetStep is the step the targets are judged on: the one of
// ScaleTargetPartitions partitions, else the largest.
func (s *ScaleSummary) targetStep() *ScaleStep {
	var best *ScaleStep
	for i := range s.Steps {
		st := &s.Steps[i]
		if st.Partitions == ScaleTargetPartitions {
			return st
		}
		if best == nil || st.Partitions > best.Partitions {
			best = st
		}
	}
	return best
}

// verdicts judges Strait's figures at the target step: start-up (exec to
// serving) under ScaleStartupTarget; the largest RSS read (idle, with the
// connections, after the restart) under ScaleRSSTarget; Metadata p99 of
// all topics and of one under ScaleMetadataP99Target; produce to every
// partition at least ScaleProduceTarget of 8 partitions.
func (s *ScaleSummary) verdicts() []scaleVerdict {
	st := s.targetStep()
	if st == nil || st.Strait == nil {
		return nil
	}
	f := st.Strait
	rss := max(f.IdleRSS, f.ConnRSS, f.RestartRSS)
	var out []scaleVerdict
	out = append(out,
		scaleVerdict{"start-up", fmtDur(f.StartupTook), "< " + fmtDur(ScaleStartupTarget), f.StartupTook > 0 && f.StartupTook < ScaleStartupTarget},
		scaleVerdict{fmt.Sprintf("RSS (largest of idle, %d connections, restarted)", s.Connections), fmt.Sprintf("%.0f MiB", float64(rss)/mib),
			"< 1 GiB", rss > 0 && rss < ScaleRSSTarget},
	)
	for _, m := range []struct {
		name string
		l    *Latency
	}{{"Metadata p99, all topics", f.MetadataAll}, {"Metadata p99, one topic", f.MetadataOne}} {
		v := scaleVerdict{Name: m.name, Figure: "-", Target: "< " + fmtDur(ScaleMetadataP99Target)}
		if m.l != nil {
			v.Figure, v.Met = fmtDur(m.l.P99), m.l.P99 < ScaleMetadataP99Target
		}
		out = append(out, v)
	}
	out = append(out, scaleVerdict{"produce to all partitions / 8 partitions", fmt.Sprintf("%.2f", f.Ratio),
		fmt.Sprintf(">= %.1f", ScaleProduceTarget), f.Ratio >= ScaleProduceTarget})
	return out
}

// writeScaleSummary prints the scale figures, a line per step and broker,
// then the targets.
func writeScaleSummary(w io.Writer, s *ScaleSummary) {
	if s == nil {
		return
	}
	for _, st := range s.Steps {
		for _, b := range []struct {
			label string
			f     *ScaleFigures
		}{{"strait", st.Strait}, {"kfake", st.Peer}} {
			if b.f != nil {
				fmt.Fprintf(w, "%s p=%d (%d topics): %s\n", b.label, st.Partitions, st.Topics, b.f.line(s.Connections))
			}
		}
	}
	st := s.targetStep()
	if st == nil {
		return
	}
	for _, v := range s.verdicts() {
		fmt.Fprintf(w, "at %d partitions %s: %s (target %s: %s)\n", st.Partitions, v.Name, v.Figure, v.Target, verdict(v.Met))
	}
}

// line is one broker's figures at one step, in words.
func (f *ScaleFigures) line(conns int) string {
	parts := []string{"create " + durCell(f.CreateTook)}
	if f.StartupTook > 0 {
		parts = append(parts, fmt.Sprintf("start-up %s (logged %s, shutdown %s)", fmtDur(f.StartupTook), f.StartupLogged, fmtDur(f.ShutdownTook)))
	}
	parts = append(parts, fmt.Sprintf("idle rss %s MiB, %d fds", mibCell(f.IdleRSS), f.IdleFDs),
		fmt.Sprintf("with %d connections rss %s MiB, %d fds", conns, mibCell(f.ConnRSS), f.ConnFDs))
	if f.RestartRSS > 0 {
		parts = append(parts, fmt.Sprintf("restarted rss %s MiB, %d fds, offsets kept %v", mibCell(f.RestartRSS), f.RestartFDs, f.RestartOffsetsOK))
	}
	parts = append(parts, "Metadata p99 all "+latCell(f.MetadataAll)+", one "+latCell(f.MetadataOne))
	if f.Produce != nil {
		parts = append(parts, fmt.Sprintf("produce to all %.1f MiB/s, to 8 partitions %s MiB/s (%.2f)", f.Produce.MiBPerSec, p8Cell(f), f.Ratio))
	}
	if f.Error != "" {
		parts = append(parts, "error: "+f.Error)
	}
	return strings.Join(parts, "; ")
}

func mibCell(b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(b)/mib)
}

func latCell(l *Latency) string {
	if l == nil || l.Count == 0 {
		return "-"
	}
	return fmtDur(l.P99)
}

func fdCell(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func produceCells(f *ScaleFigures) (mibps, ratio string) {
	if f.Produce == nil {
		return "-", "-"
	}
	return fmt.Sprintf("%.1f / %s", f.Produce.MiBPerSec, p8Cell(f)), ratioCell(f.Ratio)
}

func p8Cell(f *ScaleFigures) string {
	if f.P8 == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", f.P8.MiBPerSec)
}

// writeScaleMarkdown is the Scale section of RESULTS.md: a row per step,
// Strait's figures then kfake's, and the targets judged at 10,000
// partitions.
func (res *Results) writeScaleMarkdown(w io.Writer) {
	s := res.Scale
	if s == nil {
		return
	}
	fmt.Fprintf(w, "\n## Scale\n\n")
	fmt.Fprintf(w, "One fresh node per step, %d partitions a topic (RF=1). Create: CreateTopics until every partition is led.\n", s.TopicPartitions)
	fmt.Fprintf(w, "Each partition then gets %d records; idle RSS and open fds are read from /proc %v later. Metadata p99 is %d requests\n",
		s.PrefillRecords, s.Settle, s.MetadataRequests)
	fmt.Fprintf(w, "one at a time from a kgo client (all topics, then one topic), timed to the decoded response. Then %d connections\n", s.Connections)
	fmt.Fprintf(w, "each send ApiVersions and Metadata and stay open (RSS and fds with them). Produce to all partitions: %v of\n", s.ProduceDuration)
	fmt.Fprintf(w, "%s records in %s batches, acks=%s, every partition a full batch in turn, beside the same broker's run to a topic\n",
		formatSize(int64(s.RecordSize)), formatSize(int64(s.BatchBytes)), s.Acks)
	fmt.Fprintf(w, "of 8 partitions just before it (MiB/s all / p8, and their ratio)")
	fmt.Fprintf(w, ".\nStart-up: SIGTERM, then exec until Metadata shows a topic led (logged: the `strait broker ready` startup=);\n")
	fmt.Fprintf(w, "kfake keeps nothing on disk, so it has no restart: n/a.\n\n")
	fmt.Fprintf(w, "| partitions | topics | create | start-up (logged) | idle rss MiB | rss %d conns MiB | restarted rss MiB | fds idle / conns | Metadata p99 all / one | produce MiB/s all / p8 | all/p8 | kfake create | kfake idle rss MiB | kfake rss %d conns MiB | kfake fds | kfake Metadata p99 all / one | kfake produce MiB/s all / p8 | kfake all/p8 |\n", s.Connections, s.Connections)
	fmt.Fprintf(w, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, st := range s.Steps {
		cells := []string{fmt.Sprint(st.Partitions), fmt.Sprint(st.Topics)}
		cells = append(cells, straitScaleCells(st.Strait)...)
		cells = append(cells, peerScaleCells(st.Peer)...)
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	st := s.targetStep()
	vs := s.verdicts()
	if st != nil && len(vs) > 0 {
		note := ""
		if st.Partitions != ScaleTargetPartitions {
			note = fmt.Sprintf(" (the targets are set at %d partitions; this run's largest step)", ScaleTargetPartitions)
		}
		fmt.Fprintf(w, "\nTargets at %d partitions%s:\n\n", st.Partitions, note)
		for _, v := range vs {
			fmt.Fprintf(w, "- %s: %s (target %s): %s\n", v.Name, v.Figure, v.Target, verdict(v.Met))
		}
	}
	for _, st := range s.Steps {
		for _, b := range []struct {
			label string
			f     *ScaleFigures
		}{{"strait", st.Strait}, {"kfake", st.Peer}} {
			if b.f != nil && b.f.Error != "" {
				fmt.Fprintf(w, "- %s at %d partitions: error: %s\n", b.label, st.Partitions, strings.ReplaceAll(b.f.Error, "\n", " "))
			}
		}
	}
}

func straitScaleCells(f *ScaleFigures) []string {
	if f == nil {
		return []string{"-", "-", "-", "-", "-", "-", "-", "-", "-"}
	}
	start := "-"
	if f.StartupTook > 0 {
		start = fmtDur(f.StartupTook)
		if f.StartupLogged != "" {
			start += " (" + f.StartupLogged + ")"
		}
	}
	mibps, ratio := produceCells(f)
	return []string{durCell(f.CreateTook), start, mibCell(f.IdleRSS), mibCell(f.ConnRSS), mibCell(f.RestartRSS),
		fdCell(f.IdleFDs) + " / " + fdCell(f.ConnFDs), latCell(f.MetadataAll) + " / " + latCell(f.MetadataOne), mibps, ratio}
}

func peerScaleCells(f *ScaleFigures) []string {
	if f == nil {
		return []string{"-", "-", "-", "-", "-", "-", "-"}
	}
	mibps, ratio := produceCells(f)
	return []string{durCell(f.CreateTook), mibCell(f.IdleRSS), mibCell(f.ConnRSS), fdCell(f.IdleFDs) + " / " + fdCell(f.ConnFDs),
		latCell(f.MetadataAll) + " / " + latCell(f.MetadataOne), mibps, ratio}
}
