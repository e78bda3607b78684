// Package limits probes this machine's ceilings for the work a broker does:
// appending to a file with and without fsync, moving bytes over loopback TCP,
// sendfile from a file to a loopback socket, writing memory new to the
// process and again, and one system call. A bench run prints them
// beside its results, so a broker's figures read against what the machine
// can do at all, measured the same minute on the same (shared) cores.
//
// Each probe runs for a bounded time and reports MiB/s (2^20 bytes); the
// system call's is a time (Result.SyscallNanos).
package limits

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Config bounds the probes. Zero fields take the defaults.
type Config struct {
	// Dir is where the file probes write. The broker's log directory is the
	// honest choice: a tmpfs /tmp measures memory, not a disk.
	Dir string
	// Time is how long each probe runs (default 1 s).
	Time time.Duration
	// WriteBytes is the size of each append (default 16 KiB, one produce
	// batch of the standard workload, and the fsync interval of the fsync
	// probe).
	WriteBytes int
	// MaxFileBytes is where an append probe truncates its file and starts
	// over, bounding the disk it uses (default 256 MiB).
	MaxFileBytes int64
}

func (c *Config) fill() {
	if c.Dir == "" {
		c.Dir = os.TempDir()
	}
	if c.Time <= 0 {
		c.Time = time.Second
	}
	if c.WriteBytes <= 0 {
		c.WriteBytes = 16 << 10
	}
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = 256 << 20
	}
}

// Probe is one measured ceiling.
type Probe struct {
	Name      string        `json:"name"`
	Bytes     int64         `json:"bytes"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	MiBPerSec float64       `json:"mib_per_sec"`
	// Syncs is the number of fsyncs (fdatasync) the probe made.
	Syncs int64 `json:"syncs,omitempty"`
	// Err is why the probe could not run; the others still do.
	Err string `json:"error,omitempty"`
}

func (p *Probe) finish(bytes int64, elapsed time.Duration) {
	p.Bytes, p.Elapsed = bytes, elapsed
	if s := elapsed.Seconds(); s > 0 {
		p.MiBPerSec = float64(bytes) / (1 << 20) / s
	}
}

// Result is every probe of one Run.
type Result struct {
	Dir        string        `json:"dir"`
	FS         string        `json:"fs"` // the filesystem type of Dir
	Time       time.Duration `json:"time_per_probe_ns"`
	WriteBytes int           `json:"write_bytes"`
	Probes     []Probe       `json:"probes"`
	// PageReporting describes the hypervisor's free page reporting, ""
	// when there is none (memory.go).
	PageReporting string `json:"page_reporting,omitempty"`
	// SyscallNanos is the time of one getppid system call in ns
	// (syscall.go).
	SyscallNanos float64 `json:"syscall_ns,omitempty"`
}

// Probe names, in the order Run runs them.
const (
	AppendBuffered   = "append"
	AppendFsync      = "append+fsync"
	LoopbackTCP      = "loopback-tcp"
	SendfileLoopback = "sendfile-loopback"
	MemoryFirstTouch = "memory-first-touch"
	MemoryRewrite    = "memory-rewrite"
)

// Run runs every probe in turn. A probe that fails records its error in
// the Result; Run fails only when ctx ends.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg.fill()
	res := Result{Dir: cfg.Dir, FS: fsType(cfg.Dir), Time: cfg.Time, WriteBytes: cfg.WriteBytes, PageReporting: pageReporting("/sys", "/proc")}
	probes := []struct {
		name string
		fn   func(context.Context, Config) (Probe, error)
	}{
		{AppendBuffered, func(ctx context.Context, c Config) (Probe, error) { return appendProbe(ctx, c, false) }},
		{AppendFsync, func(ctx context.Context, c Config) (Probe, error) { return appendProbe(ctx, c, true) }},
		{LoopbackTCP, tcpProbe},
		{SendfileLoopback, sendfileProbe},
	}
	for _, p := range probes {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("limits: %w", err)
		}
		pr, err := p.fn(ctx, cfg)
		pr.Name = p.name
		if err != nil {
			pr.Err = err.Error()
		}
		res.Probes = append(res.Probes, pr)
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("limits: %w", err)
	}
	res.Probes = append(res.Probes, memoryProbes(ctx, cfg)...)
	res.SyscallNanos = syscallNanos(ctx, min(cfg.Time, syscallProbeTime))
	return res, ctx.Err()
}

// Get returns the named probe.
func (r *Result) Get(name string) (Probe, bool) {
	for _, p := range r.Probes {
		if p.Name == name {
			return p, true
		}
	}
	return Probe{}, false
}

// fsType names the filesystem under dir ("ext4", "tmpfs", ...), so a reader
// can tell a disk figure from a memory one.
func fsType(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	switch int64(st.Type) {
	case unix.EXT4_SUPER_MAGIC: // also ext2 and ext3
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlay"
	case unix.NFS_SUPER_MAGIC:
		return "nfs"
	case unix.V9FS_MAGIC:
		return "9p"
	case unix.FUSE_SUPER_MAGIC:
		return "fuse"
	case 0x2fc12fc1:
		return "zfs"
	}
	return fmt.Sprintf("0x%x", st.Type)
}

var errNoProgress = errors.New("no bytes moved")
