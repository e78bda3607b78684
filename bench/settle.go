package bench

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Why the cluster workload writes back dirty pages between phases.
//
// Each phase leaves its records in the page cache, dirty, and the kernel
// writes them back later: it starts once dirty data passes
// vm.dirty_background_ratio of memory and throttles writers near
// vm.dirty_ratio. A phase that began with the previous phase's data still
// dirty paid for that writeback too: the three-node phase for the single
// node's, and the latency phase, worst, for the three nodes' (three copies
// of every byte). With make bench's 256 MiB phases and 10 s latency phase,
// its p99 was 17.6-69.7 ms in three runs before and 15.6-21.5 ms after.
// syncfs(2) on the data directory before each phase makes every phase
// start from the same clean page cache and pay only for what it writes
// itself. A phase that writes past the threshold on its own still pays:
// with the default 1 GiB phases and 30 s latency phase, appends wait
// 0.1-0.25 s in the kernel's dirty-page throttling and p99 passes a
// second. That is the machine's writeback setting (Kafka's operations
// guide tunes vm.dirty_* for the same reason), not the phase order.

// settleWriteback writes back the dirty pages of the filesystem holding
// dir and reports how long it took on progress (nil: nowhere).
func settleWriteback(dir string, progress io.Writer) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	start := time.Now()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("bench: syncfs %s: %w", dir, err)
	}
	if progress != nil {
		fmt.Fprintf(progress, "wrote back the previous phase's dirty pages in %v\n", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
