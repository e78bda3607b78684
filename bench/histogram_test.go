package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// naiveQuantile is the nearest-rank quantile of sorted values: the
// ceil(q*n)-th smallest.
func naiveQuantile(sorted []int64, q float64) int64 {
	rank := int(math.Ceil(q * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func TestHistogramBucketsTile(t *testing.T) {
	// Every bucket starts right after the previous one ends and maps back
	// to itself, so no value falls between buckets or into two.
	for i := 0; i < histBuckets; i++ {
		lo, hi := histLowest(i), histHighest(i)
		if got := histIndex(lo); got != i {
			t.Fatalf("histIndex(lowest(%d)=%d) = %d", i, lo, got)
		}
		if got := histIndex(hi); got != i {
			t.Fatalf("histIndex(highest(%d)=%d) = %d", i, hi, got)
		}
		if i > 0 && lo != histHighest(i-1)+1 {
			t.Fatalf("bucket %d starts at %d, previous ends at %d", i, lo, histHighest(i-1))
		}
		// Relative width stays within 2^-histSubBits.
		if lo >= 2*histSubCount && float64(hi-lo+1)/float64(lo) > 1.0/histSubCount {
			t.Fatalf("bucket %d [%d,%d] wider than 1/%d of its start", i, lo, hi, histSubCount)
		}
	}
	if got := histHighest(histBuckets - 1); got != math.MaxUint64 {
		t.Fatalf("last bucket ends at %d, want MaxUint64", got)
	}
}

func TestHistogramQuantilesMatchSortedSlice(t *testing.T) {
	qs := []float64{0, 0.001, 0.1, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1}
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(20000)
		h := NewHistogram()
		vals := make([]int64, n)
		for i := range vals {
			// Log-normal-ish latencies from 1 ns to ~100 s, as produce
			// latencies spread over decades.
			v := int64(math.Exp(rng.Float64() * 25))
			vals[i] = v
			h.Record(v)
		}
		slices.Sort(vals)
		if h.Count() != uint64(n) || h.Min() != vals[0] || h.Max() != vals[n-1] {
			t.Fatalf("seed %d: count/min/max %d/%d/%d, want %d/%d/%d", seed, h.Count(), h.Min(), h.Max(), n, vals[0], vals[n-1])
		}
		for _, q := range qs {
			naive := naiveQuantile(vals, q)
			// The histogram reports the top of the naive value's bucket,
			// clamped to the exact extremes.
			want := min(max(HighestEquivalent(naive), vals[0]), vals[n-1])
			if got := h.Quantile(q); got != want {
				t.Errorf("seed %d n %d q %v: got %d, want %d (naive %d)", seed, n, q, got, want, naive)
			}
		}
	}
}

func TestHistogramSmallValuesExact(t *testing.T) {
	h := NewHistogram()
	var vals []int64
	for v := int64(0); v < 2*histSubCount; v++ {
		for range v%3 + 1 {
			h.Record(v)
			vals = append(vals, v)
		}
	}
	for _, q := range []float64{0.01, 0.3, 0.5, 0.77, 0.99, 1} {
		if got, want := h.Quantile(q), naiveQuantile(vals, q); got != want {
			t.Errorf("q %v: got %d, want exactly %d", q, got, want)
		}
	}
	var sum int64
	for _, v := range vals {
		sum += v
	}
	if got, want := h.Mean(), float64(sum)/float64(len(vals)); got != want {
		t.Errorf("mean %v, want %v", got, want)
	}
}

func TestHistogramEmptyAndNegative(t *testing.T) {
	h := NewHistogram()
	if h.Quantile(0.5) != 0 || h.Min() != 0 || h.Max() != 0 || h.Mean() != 0 {
		t.Fatal("empty histogram not all zero")
	}
	h.Record(-5)
	if h.Count() != 1 || h.Quantile(1) != 0 || h.Min() != 0 {
		t.Fatalf("negative value: count %d q1 %d min %d, want 1 0 0", h.Count(), h.Quantile(1), h.Min())
	}
}

func TestHistogramConcurrentRecordAndMerge(t *testing.T) {
	const writers, per = 4, 5000
	hs := make([]*Histogram, writers)
	shared := NewHistogram()
	var wg sync.WaitGroup
	for w := range writers {
		hs[w] = NewHistogram()
		wg.Go(func() {
			for i := range per {
				v := int64(w*per + i)
				hs[w].Record(v)
				shared.Record(v)
			}
		})
	}
	wg.Wait()
	merged := NewHistogram()
	for _, h := range hs {
		merged.Merge(h)
	}
	if shared.Count() != writers*per || merged.Count() != writers*per {
		t.Fatalf("counts %d and %d, want %d", shared.Count(), merged.Count(), writers*per)
	}
	for _, q := range []float64{0, 0.5, 0.99, 0.999, 1} {
		// Values 0..19999: the naive quantile is rank-1.
		rank := int64(math.Ceil(q * writers * per))
		want := min(max(HighestEquivalent(max(rank-1, 0)), 0), writers*per-1)
		if got := shared.Quantile(q); got != want {
			t.Errorf("shared q %v: %d, want %d", q, got, want)
		}
		if got := merged.Quantile(q); got != want {
			t.Errorf("merged q %v: %d, want %d", q, got, want)
		}
	}
	if merged.Min() != 0 || merged.Max() != writers*per-1 {
		t.Errorf("merged min/max %d/%d", merged.Min(), merged.Max())
	}
}
