package bench

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// lagSample is one sample of the steady state: the records the destination
// lacks, and the age of the oldest of them since the source acknowledged it
// and since its timestamp (see steady); 0 when none is missing.
type lagSample struct {
	records   int64
	age       time.Duration
	sinceSent time.Duration
	// unresolved counts partitions whose missing record the producer did
	// not send: the ages cannot be known.
	unresolved int
}

// sample computes the lag at now from the two listings.
func (s *steadyProducer) sample(now time.Time, src, dst map[int32]int64) lagSample {
	var ls lagSample
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.parts {
		have, end := dst[p], src[p]
		if have >= end {
			continue
		}
		ls.records += end - have
		i := have - s.base[p]
		if i < 0 || i >= int64(len(s.sent[p])) {
			ls.unresolved++
			continue
		}
		ls.sinceSent = max(ls.sinceSent, now.Sub(time.Unix(0, s.sent[p][i])))
		if at := s.ackAt[p][i]; at != 0 {
			ls.age = max(ls.age, now.Sub(time.Unix(0, at)))
		}
	}
	return ls
}

// LagPoint is one lag sample of the steady state: At is from the start of
// the phase; Age is since acknowledged, SinceTimestamp since the record's
// timestamp.
type LagPoint struct {
	At             time.Duration `json:"at_ns"`
	Records        int64         `json:"records"`
	Age            time.Duration `json:"age_ns"`
	SinceTimestamp time.Duration `json:"since_timestamp_ns"`
}

// lagSamples collects the steady phase's samples.
type lagSamples struct {
	mu         sync.Mutex
	points     []LagPoint
	unresolved int
	errors     int
	firstErr   error
}

func (l *lagSamples) add(at time.Duration, s lagSample) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.points = append(l.points, LagPoint{At: at, Records: s.records, Age: s.age, SinceTimestamp: s.sinceSent})
	l.unresolved += s.unresolved
}

func (l *lagSamples) failed(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors++
	if l.firstErr == nil {
		l.firstErr = err
	}
}

// last is the latest sample, for the progress line.
func (l *lagSamples) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.points) == 0 {
		return "lag -"
	}
	p := l.points[len(l.points)-1]
	return fmt.Sprintf("lag %d records %s (%s since timestamp)", p.Records, fmtDur(p.Age), fmtDur(p.SinceTimestamp))
}

func (l *lagSamples) column(f func(LagPoint) time.Duration) []time.Duration {
	out := make([]time.Duration, len(l.points))
	for i, p := range l.points {
		out[i] = f(p)
	}
	return out
}

// latency is the ages since acknowledged as a Latency (Count is the number
// of samples).
func (l *lagSamples) latency() *Latency {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.points) == 0 {
		return nil
	}
	ages := l.column(func(p LagPoint) time.Duration { return p.Age })
	var sum time.Duration
	for _, a := range ages {
		sum += a
	}
	return &Latency{
		Count: uint64(len(ages)),
		P50:   quantile(ages, 0.50),
		P99:   quantile(ages, 0.99),
		P999:  quantile(ages, 0.999),
		Max:   slices.Max(ages),
		Mean:  sum / time.Duration(len(ages)),
	}
}

// fill puts the percentiles and the series into s.
func (l *lagSamples) fill(s *MirrorSummary) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s.Samples = len(l.points)
	s.LagSampleErrors = l.errors
	if len(l.points) == 0 {
		return
	}
	recs := make([]int64, len(l.points))
	for i, p := range l.points {
		recs[i] = p.Records
	}
	s.LagRecordsP50, s.LagRecordsP99, s.LagRecordsMax = quantile(recs, 0.50), quantile(recs, 0.99), slices.Max(recs)
	ages := l.column(func(p LagPoint) time.Duration { return p.Age })
	s.LagP50, s.LagP99, s.LagMax = quantile(ages, 0.50), quantile(ages, 0.99), slices.Max(ages)
	stamps := l.column(func(p LagPoint) time.Duration { return p.SinceTimestamp })
	s.StampLagP50, s.StampLagP99, s.StampLagMax = quantile(stamps, 0.50), quantile(stamps, 0.99), slices.Max(stamps)
	s.LagSeries = slices.Clone(l.points)
}

// quantile is the nearest-rank q-quantile of vs (not empty), which it
// leaves unsorted.
func quantile[T int64 | time.Duration](vs []T, q float64) T {
	s := slices.Clone(vs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}
