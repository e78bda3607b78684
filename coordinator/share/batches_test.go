package share

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func sb(first, last int64, state int8, count int16) StateBatch {
	return StateBatch{FirstOffset: first, LastOffset: last, DeliveryState: state, DeliveryCount: count}
}

func TestCombineBatches(t *testing.T) {
	for _, c := range []struct {
		name         string
		soFar, newer []StateBatch
		start        int64
		want         []StateBatch
	}{
		{"nothing", nil, nil, -1, nil},
		{"below the start offset", []StateBatch{sb(100, 110, 0, 1)}, []StateBatch{sb(111, 115, 2, 1)}, 112,
			[]StateBatch{sb(112, 115, 2, 1)}},
		{"start offset inside a batch", []StateBatch{sb(100, 110, 0, 1)}, nil, 105, []StateBatch{sb(105, 110, 0, 1)}},
		{"same state, contained", []StateBatch{sb(100, 110, 0, 1)}, []StateBatch{sb(105, 108, 0, 1)}, -1,
			[]StateBatch{sb(100, 110, 0, 1)}},
		{"same state, contiguous joins", []StateBatch{sb(100, 110, 0, 1)}, []StateBatch{sb(111, 115, 0, 1)}, -1,
			[]StateBatch{sb(100, 115, 0, 1)}},
		{"higher state wins the overlap", []StateBatch{sb(100, 110, 0, 1)}, []StateBatch{sb(105, 108, 2, 1)}, -1,
			[]StateBatch{sb(100, 104, 0, 1), sb(105, 108, 2, 1), sb(109, 110, 0, 1)}},
		{"lower state loses the overlap", []StateBatch{sb(100, 110, 2, 1)}, []StateBatch{sb(105, 115, 0, 1)}, -1,
			[]StateBatch{sb(100, 110, 2, 1), sb(111, 115, 0, 1)}},
		{"higher count beats higher state", []StateBatch{sb(100, 110, 4, 1)}, []StateBatch{sb(100, 110, 0, 2)}, -1,
			[]StateBatch{sb(100, 110, 0, 2)}},
		{"Kafka: different priority in the new batches", []StateBatch{sb(100, 110, 0, 1)},
			[]StateBatch{sb(101, 105, 1, 2), sb(101, 115, 2, 2), sb(101, 120, 3, 2)}, -1,
			[]StateBatch{sb(100, 100, 0, 1), sb(101, 120, 3, 2)}},
		{"Kafka: multiple higher state updates", []StateBatch{sb(111, 120, 0, 1)},
			[]StateBatch{sb(111, 113, 0, 2), sb(114, 114, 2, 1), sb(115, 119, 0, 2)}, -1,
			[]StateBatch{sb(111, 113, 0, 2), sb(114, 114, 2, 1), sb(115, 119, 0, 2), sb(120, 120, 0, 1)}},
		{"a gap stays a gap", []StateBatch{sb(100, 101, 0, 1)}, []StateBatch{sb(105, 106, 0, 1)}, -1,
			[]StateBatch{sb(100, 101, 0, 1), sb(105, 106, 0, 1)}},
		{"an empty batch is dropped", nil, []StateBatch{sb(10, 9, 0, 1), sb(11, 11, 0, 1)}, -1, []StateBatch{sb(11, 11, 0, 1)}},
	} {
		got := combineBatches(c.soFar, c.newer, c.start)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
}

// combineBatches agrees, offset by offset, with the rule it implements,
// on random batches; and its output is sorted, disjoint and joined.
func TestCombineBatchesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	random := func() []StateBatch {
		var out []StateBatch
		for range rng.IntN(6) {
			first := rng.Int64N(40)
			out = append(out, sb(first, first+rng.Int64N(8), int8(rng.IntN(3)*2), int16(rng.IntN(3))))
		}
		return out
	}
	for range 5000 {
		soFar, newer := random(), random()
		start := int64(-1)
		if rng.IntN(2) == 0 {
			start = rng.Int64N(40)
		}
		got := combineBatches(soFar, newer, start)
		// The oracle: every offset's best batch.
		for o := int64(0); o < 60; o++ {
			var best *StateBatch
			if start == -1 || o >= start {
				for _, b := range slices.Concat(soFar, newer) {
					if b.FirstOffset <= o && o <= b.LastOffset && (best == nil || comparePriority(b, *best) > 0) {
						best = &b
					}
				}
			}
			var have *StateBatch
			for _, b := range got {
				if b.FirstOffset <= o && o <= b.LastOffset {
					have = &b
				}
			}
			switch {
			case best == nil && have != nil, best != nil && have == nil,
				best != nil && (best.DeliveryState != have.DeliveryState || best.DeliveryCount != have.DeliveryCount):
				t.Fatalf("offset %d: got %v, want %v\nsoFar %v new %v start %d\nresult %v", o, have, best, soFar, newer, start, got)
			}
		}
		for i := 1; i < len(got); i++ {
			p, b := got[i-1], got[i]
			if b.FirstOffset <= p.LastOffset || b.FirstOffset == p.LastOffset+1 && comparePriority(p, b) == 0 {
				t.Fatalf("batches %v and %v overlap or are not joined: %v", p, b, got)
			}
		}
	}
}
