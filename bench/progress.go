package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progressEvery bounds the progress line to 4 rewrites a second.
const progressEvery = 250 * time.Millisecond

// monitor runs beside a workload: every tick it samples the broker's memory
// (VmRSS has no per-window peak, so sampling is the only way to see it) and,
// when w is set, rewrites one progress line on w with '\r'.
type monitor struct {
	stop chan struct{}
	done chan struct{}
}

// sampler is what the monitor samples each tick: a *costMeter (nil-safe) or
// the costMeters of a cluster.
type sampler interface{ sample() }

func startMonitor(w io.Writer, cost sampler, line func(elapsed time.Duration) string) *monitor {
	m := &monitor{stop: make(chan struct{}), done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(m.done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		width := 0
		for {
			select {
			case <-m.stop:
				if w != nil && width > 0 {
					// Blank the line so what follows starts clean.
					fmt.Fprintf(w, "\r%s\r", strings.Repeat(" ", width))
				}
				return
			case <-t.C:
			}
			cost.sample()
			if w == nil {
				continue
			}
			s := line(time.Since(start))
			pad := ""
			if len(s) < width {
				pad = strings.Repeat(" ", width-len(s))
			}
			width = len(s)
			fmt.Fprintf(w, "\r%s%s", s, pad)
		}
	}()
	return m
}

// end stops the monitor and waits until it wrote its last byte.
func (m *monitor) end() {
	close(m.stop)
	<-m.done
}

func rateLine(label, what string, elapsed time.Duration, records, bytes int64) string {
	s := elapsed.Seconds()
	var mibs, recs float64
	if s > 0 {
		mibs = float64(bytes) / mib / s
		recs = float64(records) / s
	}
	return fmt.Sprintf("%s %s %5.1fs %11d records %9.1f MiB/s %11.0f rec/s", label, what, s, records, mibs, recs)
}
