package index

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/vfs"
)

// The property tests drive an index and a naive model (a slice searched
// linearly) with the same random operations and compare every answer. The
// seed is logged; STRAIT_SEED=<seed> replays a failure.

const propertyRounds = 10

func propertyRNG(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STRAIT_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("STRAIT_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with STRAIT_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed))
}

// offsetModel is OffsetIndex by linear scan.
type offsetModel struct {
	base       int64
	maxEntries int
	entries    []offsetPosition
}

func (m *offsetModel) append(off int64, pos int32) error {
	switch {
	case len(m.entries) >= m.maxEntries:
		return ErrIndexFull
	case len(m.entries) > 0 && off <= m.entries[len(m.entries)-1].Offset:
		return ErrInvalidOffset
	case off < m.base || off-m.base > math.MaxInt32:
		return ErrOffsetOverflow
	}
	m.entries = append(m.entries, offsetPosition{off, pos})
	return nil
}

func (m *offsetModel) lookup(target int64) offsetPosition {
	out := offsetPosition{Offset: m.base}
	for _, e := range m.entries {
		if e.Offset <= target {
			out = e
		}
	}
	return out
}

func (m *offsetModel) fetchUpperBound(pos, size int32) (int64, bool) {
	for _, e := range m.entries {
		if int64(e.Position) >= int64(pos)+int64(size) {
			return e.Offset, true
		}
	}
	return 0, false
}

func (m *offsetModel) truncateTo(off int64) {
	var kept []offsetPosition
	for _, e := range m.entries {
		if e.Offset < off {
			kept = append(kept, e)
		}
	}
	m.entries = kept
}

func sameErr(got, want error) bool {
	if want == nil {
		return got == nil
	}
	return errors.Is(got, want)
}

func TestOffsetIndexProperty(t *testing.T) {
	rng := propertyRNG(t)
	for round := range propertyRounds {
		t.Logf("round %d", round)
		offsetIndexRound(t, rng)
	}
}

func offsetIndexRound(t *testing.T, rng *rand.Rand) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/d"))
	const base = 1 << 40
	maxEntries := 1 + rng.IntN(300)
	open := func() *OffsetIndex {
		x, err := OpenOffsetIndex(mem, "/d/x.index", base, maxEntries*OffsetEntrySize)
		must(t, err)
		return x
	}
	x := open()
	m := &offsetModel{base: base, maxEntries: maxEntries}
	var nextPos int32
	for step := range 3000 {
		last := m.lookup(math.MaxInt64).Offset
		switch op := rng.IntN(100); {
		case op < 45:
			var off int64
			switch r := rng.IntN(20); {
			case r == 0:
				off = last - int64(rng.IntN(3)) // not increasing
			case r == 1:
				off = base + math.MaxInt32 + int64(rng.IntN(2)) // at and past the limit
			case r == 2:
				off = base - 1 - int64(rng.IntN(5)) // below base
			default:
				off = last + 1 + int64(rng.IntN(10))
			}
			nextPos += int32(rng.IntN(5000))
			want := m.append(off, nextPos)
			if got := x.Append(off, nextPos); !sameErr(got, want) {
				t.Fatalf("step %d: Append(%d, %d) = %v, want %v", step, off, nextPos, got, want)
			}
		case op < 75:
			target := last - 20 + int64(rng.IntN(40))
			if rng.IntN(10) == 0 {
				target = base - int64(rng.IntN(5))
			}
			off, pos := x.Lookup(target)
			if got, want := (offsetPosition{off, pos}), m.lookup(target); got != want {
				t.Fatalf("step %d: Lookup(%d) = %+v, want %+v", step, target, got, want)
			}
		case op < 82:
			pos := int32(rng.Int64N(int64(nextPos) + 1))
			size := int32(rng.IntN(20000))
			got, ok := x.FetchUpperBoundOffset(pos, size)
			want, wantOK := m.fetchUpperBound(pos, size)
			if ok != wantOK || got != want {
				t.Fatalf("step %d: FetchUpperBoundOffset(%d, %d) = %d %t, want %d %t", step, pos, size, got, ok, want, wantOK)
			}
		case op < 90:
			off := last - int64(rng.IntN(60)) + 5
			must(t, x.TruncateTo(off))
			m.truncateTo(off)
			if n := len(m.entries); n > 0 {
				nextPos = m.entries[n-1].Position
			} else {
				nextPos = 0
			}
		case op < 95:
			must(t, x.Close())
			x = open()
		default:
			if full, want := x.IsFull(), len(m.entries) >= maxEntries; full != want {
				t.Fatalf("step %d: IsFull = %t, want %t", step, full, want)
			}
		}
		if n := x.Entries(); n != len(m.entries) {
			t.Fatalf("step %d: Entries = %d, want %d", step, n, len(m.entries))
		}
	}
	must(t, x.SanityCheck())
	defer x.Close()
	must(t, x.Flush()) // appends reach the file on Flush
	size, err := mem.Stat("/d/x.index")
	must(t, err)
	if size.Size != int64(len(m.entries)*OffsetEntrySize) {
		t.Fatalf("file size %d, want %d", size.Size, len(m.entries)*OffsetEntrySize)
	}
}

// timeModel is TimeIndex by linear scan.
type timeModel struct {
	base       int64
	maxEntries int
	entries    []timestampOffset
}

func (m *timeModel) last() timestampOffset {
	if len(m.entries) == 0 {
		return timestampOffset{NoTimestamp, m.base}
	}
	return m.entries[len(m.entries)-1]
}

func (m *timeModel) maybeAppend(ts, off int64, skipFullCheck bool) error {
	n, last := len(m.entries), m.last()
	switch {
	case n >= m.maxEntries, !skipFullCheck && n >= m.maxEntries-1:
		return ErrIndexFull
	case n > 0 && off < last.Offset:
		return ErrInvalidOffset
	case n > 0 && ts < last.Timestamp:
		return ErrInvalidTimestamp
	case ts <= last.Timestamp:
		return nil
	case off < m.base || off-m.base > math.MaxInt32:
		return ErrOffsetOverflow
	}
	m.entries = append(m.entries, timestampOffset{ts, off})
	return nil
}

func (m *timeModel) lookup(target int64) timestampOffset {
	out := timestampOffset{NoTimestamp, m.base}
	for _, e := range m.entries {
		if e.Timestamp <= target {
			out = e
		}
	}
	return out
}

func (m *timeModel) truncateTo(off int64) {
	var kept []timestampOffset
	for _, e := range m.entries {
		if e.Offset < off {
			kept = append(kept, e)
		}
	}
	m.entries = kept
}

func TestTimeIndexProperty(t *testing.T) {
	rng := propertyRNG(t)
	for round := range propertyRounds {
		t.Logf("round %d", round)
		timeIndexRound(t, rng)
	}
}

func timeIndexRound(t *testing.T, rng *rand.Rand) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/d"))
	const base = 5000
	maxEntries := 1 + rng.IntN(300)
	open := func() *TimeIndex {
		x, err := OpenTimeIndex(mem, "/d/x.timeindex", base, maxEntries*TimeEntrySize)
		must(t, err)
		return x
	}
	x := open()
	m := &timeModel{base: base, maxEntries: maxEntries}
	for step := range 3000 {
		last := m.last()
		switch op := rng.IntN(100); {
		case op < 45:
			// Mostly advancing; sometimes equal (a no-op or same-offset
			// entry), backwards, or out of relative-offset range.
			ts := last.Timestamp + int64(rng.IntN(4)) - int64(rng.IntN(2))
			off := last.Offset + int64(rng.IntN(4)) - int64(rng.IntN(2))
			if rng.IntN(30) == 0 {
				off = base + math.MaxInt32 + int64(rng.IntN(2))
			}
			skip := rng.IntN(4) == 0
			want := m.maybeAppend(ts, off, skip)
			if got := x.MaybeAppend(ts, off, skip); !sameErr(got, want) {
				t.Fatalf("step %d: MaybeAppend(%d, %d, %t) = %v, want %v", step, ts, off, skip, got, want)
			}
		case op < 75:
			target := last.Timestamp - 20 + int64(rng.IntN(40))
			ts, off := x.Lookup(target)
			if got, want := (timestampOffset{ts, off}), m.lookup(target); got != want {
				t.Fatalf("step %d: Lookup(%d) = %+v, want %+v", step, target, got, want)
			}
		case op < 88:
			off := last.Offset - int64(rng.IntN(30)) + 3
			must(t, x.TruncateTo(off))
			m.truncateTo(off)
		case op < 94:
			must(t, x.Close())
			x = open()
		default:
			if full, want := x.IsFull(), len(m.entries) >= maxEntries-1; full != want {
				t.Fatalf("step %d: IsFull = %t, want %t", step, full, want)
			}
		}
		ts, off := x.LastEntry()
		if got, want := (timestampOffset{ts, off}), m.last(); got != want {
			t.Fatalf("step %d: LastEntry = %+v, want %+v", step, got, want)
		}
		if n := x.Entries(); n != len(m.entries) {
			t.Fatalf("step %d: Entries = %d, want %d", step, n, len(m.entries))
		}
	}
	must(t, x.SanityCheck())
	must(t, x.Close())
}
