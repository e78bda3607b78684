package bench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// allocsProfile is this process's allocs profile as net/http/pprof serves
// it, after allocating n blocks at a call site of its own.
func allocsProfile(t *testing.T, n int) []byte {
	t.Helper()
	// The runtime samples about one allocation in 512 KiB
	// (runtime.MemProfileRate): n MiB make about 2n samples, so a
	// profile taken after more of them has grown (64 KiB allocations
	// were sometimes all missed, under make test's load). The profile
	// shows what the last completed collection published: two GCs make
	// sure these allocations are in it.
	for range n {
		sink = make([]byte, 1<<20)
	}
	runtime.GC()
	runtime.GC()
	var b bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&b, 0); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var sink []byte

// profileCheck decodes a merged profile: the sum of each sample value
// column, and an error when a sample names a location, a line a
// function, a location a mapping, or a function a string that is not
// there.
func profileCheck(t *testing.T, gz []byte) []int64 {
	t.Helper()
	raw, err := gunzip(gz)
	if err != nil {
		t.Fatal(err)
	}
	var (
		strs                         int
		locs, funcs, maps            = map[uint64]bool{}, map[uint64]bool{}, map[uint64]bool{}
		sampleLocs, lineFuncs, names []uint64
		locMaps                      []uint64
		totals                       []int64
	)
	if err := walk(raw, func(num protowire.Number, typ protowire.Type, v uint64, sub, _ []byte) error {
		switch num {
		case profStringTable:
			strs++
		case profSample:
			col := 0
			return walk(sub, func(num protowire.Number, typ protowire.Type, v uint64, sub, _ []byte) error {
				each := func(x uint64) {
					if num == sampleLocationID {
						sampleLocs = append(sampleLocs, x)
						return
					}
					if col >= len(totals) {
						totals = append(totals, 0)
					}
					totals[col] += int64(x)
					col++
				}
				if num != sampleLocationID && num != sampleValue {
					return nil
				}
				if typ == protowire.BytesType {
					for len(sub) > 0 {
						x, n := protowire.ConsumeVarint(sub)
						each(x)
						sub = sub[n:]
					}
					return nil
				}
				each(v)
				return nil
			})
		case profLocation:
			return walk(sub, func(num protowire.Number, typ protowire.Type, v uint64, sub, _ []byte) error {
				switch num {
				case locationID:
					locs[v] = true
				case locationMappingID:
					locMaps = append(locMaps, v)
				case locationLine:
					return walk(sub, func(num protowire.Number, _ protowire.Type, v uint64, _, _ []byte) error {
						if num == lineFunctionID {
							lineFuncs = append(lineFuncs, v)
						}
						return nil
					})
				}
				return nil
			})
		case profFunction:
			return walk(sub, func(num protowire.Number, _ protowire.Type, v uint64, _, _ []byte) error {
				switch num {
				case functionID:
					funcs[v] = true
				case functionName, functionSystemName, functionFilename:
					names = append(names, v)
				}
				return nil
			})
		case profMapping:
			return walk(sub, func(num protowire.Number, _ protowire.Type, v uint64, _, _ []byte) error {
				if num == mappingID {
					maps[v] = true
				}
				return nil
			})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, l := range sampleLocs {
		if !locs[l] {
			t.Fatalf("a sample names location %d, which is not there", l)
		}
	}
	for _, f := range lineFuncs {
		if f != 0 && !funcs[f] {
			t.Fatalf("a line names function %d, which is not there", f)
		}
	}
	for _, m := range locMaps {
		if m != 0 && !maps[m] {
			t.Fatalf("a location names mapping %d, which is not there", m)
		}
	}
	for _, s := range names {
		if s >= uint64(strs) {
			t.Fatalf("a function names string %d of %d", s, strs)
		}
	}
	return totals
}

// TestMergeProfiles: two profiles merge into one whose every reference
// resolves and whose value columns are the inputs' sums, scaled: an
// allocs profile minus an earlier one is the allocations between them.
func TestMergeProfiles(t *testing.T) {
	a := allocsProfile(t, 10)
	b := allocsProfile(t, 20)
	ta, tb := profileCheck(t, a), profileCheck(t, b)
	if len(ta) != 4 || len(tb) != 4 || tb[1] <= ta[1] {
		t.Fatalf("allocs profiles' totals %v then %v: want 4 columns, alloc_space growing", ta, tb)
	}
	for _, tc := range []struct {
		name   string
		in     [][]byte
		scales []int64
		want   func(i int) int64
	}{
		{"sum", [][]byte{a, b}, []int64{1, 1}, func(i int) int64 { return ta[i] + tb[i] }},
		{"delta", [][]byte{b, a}, []int64{1, -1}, func(i int) int64 { return tb[i] - ta[i] }},
		{"three", [][]byte{a, b, a}, []int64{1, 1, 1}, func(i int) int64 { return 2*ta[i] + tb[i] }},
	} {
		merged, err := mergeProfiles(tc.in, tc.scales)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := profileCheck(t, merged)
		for i := range got {
			if got[i] != tc.want(i) {
				t.Errorf("%s: column %d totals %d, want %d", tc.name, i, got[i], tc.want(i))
			}
		}
		goToolReads(t, merged)
	}
}

// goToolReads checks, when the go command is on PATH, that go tool pprof
// reads the profile: an independent parser of the format.
func goToolReads(t *testing.T, gz []byte) {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return
	}
	f := filepath.Join(t.TempDir(), "merged.pb.gz")
	if err := os.WriteFile(f, gz, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goCmd, "tool", "pprof", "-raw", f).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -raw: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("allocsProfile")) {
		t.Fatalf("go tool pprof -raw: no sample of allocsProfile:\n%s", out)
	}
}
