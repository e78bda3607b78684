// Package sysmem reports how much memory this process may use: the Go
// runtime's soft memory limit when one is set (GOMEMLIMIT, or
// debug.SetMemoryLimit), else the memory limit of the process's cgroup
// (a container's), else the machine's physical memory. The broker sizes
// its request memory pool (queued.max.request.bytes) from it and sets a
// soft memory limit below a container's limit.
package sysmem

import (
	"bufio"
	"io/fs"
	"math"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// Source says where an Available figure comes from.
type Source string

// The sources, most specific first.
const (
	SourceGoMemLimit Source = "Go soft memory limit"
	SourceCgroup     Source = "cgroup memory limit"
	SourcePhysical   Source = "physical memory"
	SourceUnknown    Source = "unknown"
)

// Available is the memory this process may use and where the figure
// comes from; 0 and SourceUnknown when nothing says.
func Available() (int64, Source) {
	return available(os.DirFS("/"), debug.SetMemoryLimit(-1))
}

// CgroupLimit is the memory limit of this process's cgroup, false when
// it has none (or no cgroup is found).
func CgroupLimit() (int64, bool) { return cgroupLimit(os.DirFS("/")) }

// available reads the figures from fsys, a view of the root file system;
// goLimit is the runtime's soft memory limit (math.MaxInt64 when unset).
func available(fsys fs.FS, goLimit int64) (int64, Source) {
	if goLimit > 0 && goLimit < math.MaxInt64 {
		return goLimit, SourceGoMemLimit
	}
	phys, havePhys := physical(fsys)
	if cg, ok := cgroupLimit(fsys); ok && (!havePhys || cg < phys) {
		return cg, SourceCgroup
	}
	if havePhys {
		return phys, SourcePhysical
	}
	return 0, SourceUnknown
}

// physical is MemTotal from /proc/meminfo.
func physical(fsys fs.FS) (int64, bool) {
	f, err := fsys.Open("proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil || kb <= 0 {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// noLimit is what cgroup v1 reports for an unlimited group (the largest
// page-aligned int64), or more.
const noLimit = math.MaxInt64 &^ (1<<12 - 1)

// cgroupLimit is the smallest memory limit on the way from the process's
// cgroup up to the root: memory.max under cgroup v2, memory.limit_in_bytes
// under cgroup v1's memory controller. Inside a container with its own
// cgroup namespace the process's path is "/"; without one the path names
// the host's hierarchy while the container sees its own group at the
// mount's root, so the root's file is read too.
func cgroupLimit(fsys fs.FS) (int64, bool) {
	data, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	best, found := int64(math.MaxInt64), false
	// consider reads file in the group's directory under the mount at
	// base and in every directory above it up to the mount's root.
	consider := func(base, group, file string) {
		for g := group; ; g = path.Dir(g) {
			if v, ok := readLimit(fsys, path.Join(base, g, file)); ok && v < best {
				best, found = v, true
			}
			if g == "." {
				return
			}
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		group := path.Clean(strings.TrimPrefix(parts[2], "/"))
		switch {
		case parts[0] == "0" && parts[1] == "":
			consider("sys/fs/cgroup", group, "memory.max")
		case hasController(parts[1], "memory"):
			consider("sys/fs/cgroup/memory", group, "memory.limit_in_bytes")
		}
	}
	return best, found
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readLimit reads one limit file: a byte count, or "max" (none).
func readLimit(fsys fs.FS, name string) (int64, bool) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || v <= 0 || v >= noLimit {
		return 0, false
	}
	return v, true
}
