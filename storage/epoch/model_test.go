package epoch

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/vfs"
)

var modelSeed = flag.Uint64("epoch.seed", 0, "seed for TestCacheAgainstModel (0: time-based)")

// model is the obvious O(n) implementation of Kafka's LeaderEpochFileCache
// rules over a plain slice: filters instead of suffix scans and linear
// searches instead of binary ones.
type model []Entry

func (m model) assign(e Entry) model {
	if n := len(m); n > 0 && m[n-1].Epoch == e.Epoch && e.StartOffset >= m[n-1].StartOffset {
		return m
	}
	var out model
	for _, x := range m {
		if x.Epoch < e.Epoch && x.StartOffset < e.StartOffset {
			out = append(out, x)
		}
	}
	return append(out, e)
}

func (m model) truncateFromEnd(end int64) model {
	if end < 0 {
		return m
	}
	var out model
	for _, x := range m {
		if x.StartOffset < end {
			out = append(out, x)
		}
	}
	return out
}

func (m model) truncateFromStart(start int64) model {
	var out model
	var last *Entry
	for i, x := range m {
		if x.StartOffset <= start {
			last = &m[i]
		} else {
			out = append(out, x)
		}
	}
	if last == nil {
		return m
	}
	return append(model{{Epoch: last.Epoch, StartOffset: start}}, out...)
}

func (m model) endOffsetFor(req int32, leo int64) (int32, int64) {
	if req == UndefinedEpoch {
		return UndefinedEpoch, UndefinedOffset
	}
	if n := len(m); n > 0 && m[n-1].Epoch == req {
		return req, leo
	}
	higher := -1
	for i, x := range m {
		if x.Epoch > req {
			higher = i
			break
		}
	}
	if higher < 0 {
		return UndefinedEpoch, UndefinedOffset
	}
	floor := -1
	for i, x := range m {
		if x.Epoch <= req {
			floor = i
		}
	}
	if floor < 0 {
		return req, m[higher].StartOffset
	}
	return m[floor].Epoch, m[higher].StartOffset
}

func (m model) epochForOffset(off int64) (int32, bool) {
	var prev int32
	found := false
	for _, x := range m {
		if x.StartOffset == off {
			return x.Epoch, true
		}
		if x.StartOffset > off {
			break
		}
		prev, found = x.Epoch, true
	}
	return prev, found
}

// checkAgainst compares every read of c with the model.
func checkAgainst(c *Cache, m model, leo int64, maxEpoch int32) error {
	got := c.Entries()
	if !slices.Equal(got, []Entry(m)) {
		return fmt.Errorf("entries %v, model %v", got, m)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Epoch <= got[i-1].Epoch || got[i].StartOffset <= got[i-1].StartOffset {
			return fmt.Errorf("entries not strictly increasing: %v", got)
		}
	}
	for req := int32(-2); req <= maxEpoch+2; req++ {
		gotEpoch, gotOffset := c.EndOffsetFor(req, leo)
		wantEpoch, wantOffset := m.endOffsetFor(req, leo)
		if gotEpoch != wantEpoch || gotOffset != wantOffset {
			return fmt.Errorf("EndOffsetFor(%d, %d) = (%d, %d), model (%d, %d); entries %v",
				req, leo, gotEpoch, gotOffset, wantEpoch, wantOffset, m)
		}
	}
	for off := int64(-1); off <= leo+2; off++ {
		ge, gok := c.EpochForOffset(off)
		we, wok := m.epochForOffset(off)
		if gok != wok || (gok && ge != we) {
			return fmt.Errorf("EpochForOffset(%d) = (%d, %v), model (%d, %v); entries %v", off, ge, gok, we, wok, m)
		}
	}
	return nil
}

func TestCacheAgainstModel(t *testing.T) {
	seed := *modelSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	fail := func(iter, step int, op string, err error) {
		t.Helper()
		t.Fatalf("seed %d (rerun with -epoch.seed=%d), iteration %d step %d after %s: %v", seed, seed, iter, step, op, err)
	}
	const dir = "p"
	for iter := 0; iter < 2000; iter++ {
		mem := vfs.NewMem()
		mustMkdir(t, mem, dir)
		c, err := Open(mem, dir)
		if err != nil {
			fail(iter, 0, "open", err)
		}
		var (
			m        model
			epoch    int32 // the current leader epoch
			leo      int64 // a log end offset the ops move around
			maxEpoch int32
		)
		steps := 5 + rng.IntN(30)
		for step := 0; step < steps; step++ {
			var op string
			switch r := rng.IntN(100); {
			case r < 55: // the common case: a new epoch at or after the log end
				epoch += int32(rng.IntN(3))
				leo += int64(rng.IntN(10))
				op = fmt.Sprintf("assign(%d, %d)", epoch, leo)
				err = c.Assign(epoch, leo)
				m = m.assign(Entry{epoch, leo})
			case r < 70: // a regression: lower epoch and/or offset
				e := int32(rng.IntN(int(epoch) + 2))
				o := rng.Int64N(leo + 2)
				op = fmt.Sprintf("assign(%d, %d)", e, o)
				err = c.Assign(e, o)
				m = m.assign(Entry{e, o})
			case r < 80:
				o := rng.Int64N(leo+6) - 2
				op = fmt.Sprintf("truncateFromEnd(%d)", o)
				err = c.TruncateFromEnd(o)
				m = m.truncateFromEnd(o)
			case r < 90:
				o := rng.Int64N(leo+6) - 2
				op = fmt.Sprintf("truncateFromStart(%d)", o)
				err = c.TruncateFromStart(o)
				m = m.truncateFromStart(o)
			case r < 92:
				op = "clear"
				err = c.Clear()
				m = nil
			case r < 97:
				op = "reopen"
				c, err = Open(mem, dir)
			default:
				op = "crash"
				mem = mem.CrashClone(vfs.CrashOptions{})
				c, err = Open(mem, dir)
			}
			if err != nil {
				fail(iter, step, op, err)
			}
			maxEpoch = max(maxEpoch, epoch+1)
			if err := checkAgainst(c, m, leo, maxEpoch); err != nil {
				fail(iter, step, op, err)
			}
		}
		// Whatever the sequence, the file reopens to the same entries.
		re, err := Open(mem, dir)
		if err != nil {
			fail(iter, steps, "final reopen", err)
		}
		if a, b := re.Entries(), c.Entries(); !slices.Equal(a, b) {
			fail(iter, steps, "final reopen", fmt.Errorf("reopened %v, cache %v", a, b))
		}
		data, err := vfs.ReadFile(mem, filepath.Join(dir, CheckpointFileName))
		if err == nil {
			if want := encodeCheckpoint(c.Entries()); string(data) != string(want) {
				fail(iter, steps, "final read", fmt.Errorf("file %q, want %q", data, want))
			}
		} else if !vfs.IsNotExist(err) || len(m) != 0 {
			fail(iter, steps, "final read", err)
		}
	}
}
