package limits

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// memoryMapBytes bounds the mapping the memory probes write: enough for
// half a second at the rates seen (0.4 to 1.7 GiB/s on first touch) to be
// a measurement, small enough to map under strict overcommit.
const memoryMapBytes = 512 << 20

// memoryProbes write a new anonymous mapping WriteBytes at a time for
// Time (MemoryFirstTouch), then write the same pages again
// (MemoryRewrite). The first pass pays for every page coming into use:
// the kernel's fault and zeroing, and under a hypervisor that took the
// page back (free page reporting, pageReporting) the host backing it
// again. A broker's new log data lands in pages in that state, as does a
// growing heap; the gap between the two figures is what that costs here.
// On such a machine, which rows pay it and how much depends on what was
// freed when, which is why repeated rounds of one workload can differ.
func memoryProbes(ctx context.Context, cfg Config) []Probe {
	first, again := Probe{Name: MemoryFirstTouch}, Probe{Name: MemoryRewrite}
	mem, err := unix.Mmap(-1, 0, memoryMapBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		first.Err = fmt.Sprintf("limits: mmap: %v", err)
		again.Err = first.Err
		return []Probe{first, again}
	}
	defer unix.Munmap(mem)
	buf := make([]byte, cfg.WriteBytes)
	_, _ = rand.Read(buf)

	var n int
	start := time.Now()
	deadline := start.Add(cfg.Time)
	for n+len(buf) <= len(mem) && time.Now().Before(deadline) && ctx.Err() == nil {
		n += copy(mem[n:], buf)
	}
	first.finish(int64(n), time.Since(start))

	start = time.Now()
	for off := 0; off < n && ctx.Err() == nil; off += len(buf) {
		copy(mem[off:], buf)
	}
	again.finish(int64(n), time.Since(start))
	if n == 0 {
		first.Err, again.Err = errNoProgress.Error(), errNoProgress.Error()
	}
	return []Probe{first, again}
}

// virtioBalloonReporting is VIRTIO_BALLOON_F_REPORTING, the balloon
// device's feature bit of free page reporting (Linux's
// include/uapi/linux/virtio_balloon.h); sysfs lists a device's features
// as a string of 0s and 1s from bit 0.
const virtioBalloonReporting = 5

// pageReporting describes the hypervisor's free page reporting when a
// virtio balloon negotiated it, "" otherwise: the guest hands pages it
// frees back to the host, so a page reused later must be backed again.
// sysfs and procfs are the roots of sysfs and procfs ("/sys", "/proc");
// tests point them elsewhere.
func pageReporting(sysfs, procfs string) string {
	devs, _ := filepath.Glob(filepath.Join(sysfs, "bus/virtio/drivers/virtio_balloon/virtio*/features"))
	on := false
	for _, f := range devs {
		b, err := os.ReadFile(f)
		if s := strings.TrimSpace(string(b)); err == nil && len(s) > virtioBalloonReporting && s[virtioBalloonReporting] == '1' {
			on = true
		}
	}
	if !on {
		return ""
	}
	desc := "on (virtio balloon)"
	// The smallest block the kernel reports, as a page order; above the
	// largest order it allocates nothing is reported.
	b, err := os.ReadFile(filepath.Join(sysfs, "module/page_reporting/parameters/page_reporting_order"))
	if err != nil {
		return desc
	}
	order, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return desc
	}
	if top, ok := maxPageOrder(procfs); ok && order > top {
		return fmt.Sprintf("off (virtio balloon offers it, but its order %d is above the largest block, order %d)", order, top)
	}
	return fmt.Sprintf("on (virtio balloon, blocks of order %d and up)", order)
}

// maxPageOrder is the largest block order the page allocator keeps, from
// /proc/buddyinfo: a line per zone, a count per order from 0.
func maxPageOrder(procfs string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(procfs, "buddyinfo"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		// "Node 0, zone   Normal  14302  6599 ..."
		_, counts, ok := strings.Cut(line, "zone")
		if f := strings.Fields(counts); ok && len(f) > 1 {
			return len(f) - 2, true // the zone's name, then orders 0..max
		}
	}
	return 0, false
}
