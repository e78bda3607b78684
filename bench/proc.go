package bench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ProcSample is one reading of a process's cost counters from /proc.
type ProcSample struct {
	PID       int
	Comm      string        // /proc/<pid>/stat field 2, without parentheses
	CPU       time.Duration // utime + stime, user plus system CPU
	RSSBytes  int64         // VmRSS: resident memory now
	PeakBytes int64         // VmHWM: the peak of VmRSS since the process started
}

// ProcReader reads ProcSamples under a proc root ("/proc" in production; a
// testdata directory in tests), converting clock ticks with its tick rate.
type ProcReader struct {
	Root        string
	TicksPerSec int64
}

// NewProcReader reads the clock tick rate once, from the auxiliary vector of
// this process (AT_CLKTCK; Go cannot call sysconf(_SC_CLK_TCK) without cgo),
// falling back to Linux's USER_HZ of 100.
func NewProcReader() *ProcReader {
	return &ProcReader{Root: "/proc", TicksPerSec: clockTicks("/proc/self/auxv")}
}

// atClkTck is AT_CLKTCK in <elf.h>.
const atClkTck = 17

func clockTicks(auxvPath string) int64 {
	b, err := os.ReadFile(auxvPath)
	if err != nil {
		return 100
	}
	// auxv is native-endian (type, value) pairs of machine words; every
	// platform Strait runs on is 64-bit little-endian.
	for i := 0; i+16 <= len(b); i += 16 {
		typ := binary.LittleEndian.Uint64(b[i:])
		if typ == atClkTck {
			if v := binary.LittleEndian.Uint64(b[i+8:]); v > 0 {
				return int64(v)
			}
		}
		if typ == 0 {
			break
		}
	}
	return 100
}

// Read samples process pid.
func (r *ProcReader) Read(pid int) (ProcSample, error) {
	dir := filepath.Join(r.Root, strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return ProcSample{}, fmt.Errorf("bench: read proc stat: %w", err)
	}
	s, err := parseProcStat(stat, r.TicksPerSec)
	if err != nil {
		return ProcSample{}, fmt.Errorf("bench: %s/stat: %w", dir, err)
	}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return ProcSample{}, fmt.Errorf("bench: read proc status: %w", err)
	}
	if s.RSSBytes, err = statusKB(status, "VmRSS:"); err != nil {
		return ProcSample{}, fmt.Errorf("bench: %s/status: %w", dir, err)
	}
	if s.PeakBytes, err = statusKB(status, "VmHWM:"); err != nil {
		return ProcSample{}, fmt.Errorf("bench: %s/status: %w", dir, err)
	}
	return s, nil
}

var errProcFormat = errors.New("unexpected format")

// parseProcStat reads pid, comm, utime and stime (fields 1, 2, 14, 15 of
// proc(5)). comm may hold spaces and parentheses, so the fields after it are
// found from the last ')'.
func parseProcStat(b []byte, ticksPerSec int64) (ProcSample, error) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 1 || closing < open {
		return ProcSample{}, fmt.Errorf("%w: no (comm)", errProcFormat)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil {
		return ProcSample{}, fmt.Errorf("%w: pid: %w", errProcFormat, err)
	}
	rest := strings.Fields(string(b[closing+1:]))
	// rest[0] is field 3 (state), so field k is rest[k-3].
	if len(rest) < 13 {
		return ProcSample{}, fmt.Errorf("%w: %d fields after comm", errProcFormat, len(rest))
	}
	utime, err := strconv.ParseInt(rest[14-3], 10, 64)
	if err != nil {
		return ProcSample{}, fmt.Errorf("%w: utime: %w", errProcFormat, err)
	}
	stime, err := strconv.ParseInt(rest[15-3], 10, 64)
	if err != nil {
		return ProcSample{}, fmt.Errorf("%w: stime: %w", errProcFormat, err)
	}
	ticks := utime + stime
	return ProcSample{
		PID:  pid,
		Comm: string(b[open+1 : closing]),
		CPU:  time.Duration(ticks) * time.Second / time.Duration(ticksPerSec),
	}, nil
}

// statusKB reads a "Key:   1234 kB" line of /proc/<pid>/status as bytes.
func statusKB(b []byte, key string) (int64, error) {
	for line := range strings.SplitSeq(string(b), "\n") {
		v, ok := strings.CutPrefix(line, key)
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%w: %q", errProcFormat, line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q: %w", errProcFormat, line, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("%w: no %s line", errProcFormat, key)
}
