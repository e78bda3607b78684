package bench

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestProcReadFixture(t *testing.T) {
	r := &ProcReader{Root: "testdata/proc", TicksPerSec: 100}
	s, err := r.Read(4242)
	if err != nil {
		t.Fatal(err)
	}
	want := ProcSample{
		PID:       4242,
		Comm:      "strait (bench) x", // parentheses and spaces inside comm
		CPU:       3250 * time.Millisecond,
		RSSBytes:  102400 * 1024,
		PeakBytes: 204800 * 1024,
	}
	if s != want {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
	// The same ticks at 250 Hz.
	r.TicksPerSec = 250
	if s, _ = r.Read(4242); s.CPU != 1300*time.Millisecond {
		t.Fatalf("CPU at 250 Hz %v, want 1.3s", s.CPU)
	}
}

func TestProcParseErrors(t *testing.T) {
	for _, in := range []string{
		"",
		"12 no-parens S 1",
		"x (a) S 1 2 3",
		"12 (a) S 1 2 3 4 5 6 7 8 9 10", // too few fields
		"12 (a) S 1 2 3 4 5 6 7 8 9 10 u 12 13 14", // utime not a number
	} {
		if _, err := parseProcStat([]byte(in), 100); err == nil {
			t.Errorf("parseProcStat(%q): no error", in)
		}
	}
	for _, in := range []string{"VmRSS: 12\n", "VmRSS: x kB\n", "VmHWM: 1 kB\n"} {
		if _, err := statusKB([]byte(in), "VmRSS:"); err == nil {
			t.Errorf("statusKB(%q): no error", in)
		}
	}
}

func TestClockTicksFromAuxv(t *testing.T) {
	dir := t.TempDir()
	auxv := func(pairs ...uint64) string {
		b := make([]byte, 8*len(pairs))
		for i, v := range pairs {
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
		p := filepath.Join(dir, "auxv"+strconv.Itoa(len(pairs)))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if got := clockTicks(auxv(6, 4096, atClkTck, 250, 0, 0)); got != 250 {
		t.Errorf("AT_CLKTCK 250: got %d", got)
	}
	if got := clockTicks(auxv(6, 4096, 0, 0, atClkTck, 250)); got != 100 {
		t.Errorf("AT_CLKTCK after AT_NULL: got %d, want the fallback 100", got)
	}
	if got := clockTicks(filepath.Join(dir, "missing")); got != 100 {
		t.Errorf("no auxv: got %d, want 100", got)
	}
	if got := NewProcReader().TicksPerSec; got != 100 {
		// Linux's USER_HZ is 100 on every architecture we build for.
		t.Errorf("this machine's AT_CLKTCK %d, want 100", got)
	}
}

// TestProcReadSelf reads this process and checks it against what the
// kernel reports through other interfaces.
func TestProcReadSelf(t *testing.T) {
	// Burn some CPU so the tick counts are not all zero.
	x := 0
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
		x++
	}
	_ = x
	r := NewProcReader()
	s, err := r.Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	if s.PID != os.Getpid() {
		t.Errorf("pid %d, want %d", s.PID, os.Getpid())
	}
	// comm is the executable's name cut to TASK_COMM_LEN-1 = 15 bytes.
	comm := filepath.Base(os.Args[0])
	comm = comm[:min(len(comm), 15)]
	if s.Comm != comm {
		t.Errorf("comm %q, want %q", s.Comm, comm)
	}
	// getrusage and /proc/<pid>/stat come from the same accounting; stat
	// truncates to whole ticks, and the process keeps running between the
	// two reads, so allow two ticks plus the CPU of the reads themselves.
	rus := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if d := rus - s.CPU; d < -10*time.Millisecond || d > 50*time.Millisecond {
		t.Errorf("stat CPU %v, getrusage %v", s.CPU, rus)
	}
	if s.CPU < 50*time.Millisecond {
		t.Errorf("stat CPU %v after burning 100ms", s.CPU)
	}
	// VmRSS against statm's resident pages, read right after.
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := strconv.ParseInt(strings.Fields(string(statm))[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	statmRSS := pages * int64(os.Getpagesize())
	if diff := s.RSSBytes - statmRSS; diff < -4<<20 || diff > 4<<20 {
		t.Errorf("VmRSS %d, statm resident %d", s.RSSBytes, statmRSS)
	}
	if s.PeakBytes < s.RSSBytes {
		t.Errorf("VmHWM %d < VmRSS %d", s.PeakBytes, s.RSSBytes)
	}
}
