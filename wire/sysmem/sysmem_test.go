package sysmem

import (
	"math"
	"runtime"
	"testing"
	"testing/fstest"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

const meminfo = "MemTotal:       24683784 kB\nMemFree:        23276000 kB\n"

func TestAvailable(t *testing.T) {
	const phys = 24683784 << 10
	cases := []struct {
		name    string
		fs      fstest.MapFS
		goLimit int64
		want    int64
		source  Source
	}{{
		name: "physical memory when no cgroup limits it",
		fs: fstest.MapFS{
			"proc/meminfo":     file(meminfo),
			"proc/self/cgroup": file("0::/user.slice/session-1.scope\n"),
			"sys/fs/cgroup/user.slice/session-1.scope/memory.max": file("max\n"),
		},
		goLimit: math.MaxInt64, want: phys, source: SourcePhysical,
	}, {
		name: "cgroup v2 limit of the process's own group",
		fs: fstest.MapFS{
			"proc/meminfo":     file(meminfo),
			"proc/self/cgroup": file("0::/kubepods/pod1/ctr\n"),
			"sys/fs/cgroup/kubepods/pod1/ctr/memory.max": file("1073741824\n"),
			"sys/fs/cgroup/kubepods/memory.max":          file("max\n"),
		},
		goLimit: math.MaxInt64, want: 1 << 30, source: SourceCgroup,
	}, {
		name: "cgroup v2 limit of a parent group",
		fs: fstest.MapFS{
			"proc/meminfo":                 file(meminfo),
			"proc/self/cgroup":             file("0::/a/b\n"),
			"sys/fs/cgroup/a/b/memory.max": file("max\n"),
			"sys/fs/cgroup/a/memory.max":   file("536870912\n"),
		},
		goLimit: math.MaxInt64, want: 512 << 20, source: SourceCgroup,
	}, {
		name: "cgroup v2 inside a cgroup namespace: the root's file",
		fs: fstest.MapFS{
			"proc/meminfo":             file(meminfo),
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("268435456\n"),
		},
		goLimit: math.MaxInt64, want: 256 << 20, source: SourceCgroup,
	}, {
		name: "cgroup v1 memory controller, host path not mounted: the root's file",
		fs: fstest.MapFS{
			"proc/meminfo":     file(meminfo),
			"proc/self/cgroup": file("9:name=systemd:/docker/abc\n4:memory:/docker/abc\n3:cpuset:/docker/abc\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("2147483648\n"),
		},
		goLimit: math.MaxInt64, want: 2 << 30, source: SourceCgroup,
	}, {
		name: "cgroup v1 unlimited",
		fs: fstest.MapFS{
			"proc/meminfo":     file(meminfo),
			"proc/self/cgroup": file("4:memory:/process_api/x\n"),
			"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": file("9223372036854771712\n"),
		},
		goLimit: math.MaxInt64, want: phys, source: SourcePhysical,
	}, {
		name: "a cgroup limit above physical memory is physical memory",
		fs: fstest.MapFS{
			"proc/meminfo":             file(meminfo),
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("107374182400\n"),
		},
		goLimit: math.MaxInt64, want: phys, source: SourcePhysical,
	}, {
		name: "the Go memory limit wins",
		fs: fstest.MapFS{
			"proc/meminfo":             file(meminfo),
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("1073741824\n"),
		},
		goLimit: 300 << 20, want: 300 << 20, source: SourceGoMemLimit,
	}, {
		name:    "nothing known",
		fs:      fstest.MapFS{},
		goLimit: math.MaxInt64, want: 0, source: SourceUnknown,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, src := available(c.fs, c.goLimit)
			if got != c.want || src != c.source {
				t.Fatalf("available = %d (%s), want %d (%s)", got, src, c.want, c.source)
			}
		})
	}
}

// TestAvailableHere: on Linux, the machine running the tests has a
// figure (/proc/meminfo at least).
func TestAvailableHere(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux's /proc and /sys")
	}
	n, src := Available()
	t.Logf("available: %d MiB (%s)", n>>20, src)
	if n <= 0 || src == SourceUnknown {
		t.Fatalf("no memory figure: %d (%s)", n, src)
	}
}
