package limits

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// appendProbe appends WriteBytes at a time to a new file in Dir for Time,
// as a log segment grows. With sync it calls fdatasync after every write:
// the ceiling of a broker that fsyncs every batch before acknowledging
// (log.flush.interval.messages=1 with batches of WriteBytes). Without, it is
// the page cache's ceiling, the one a broker relying on replication for
// durability (Kafka's default) runs against.
func appendProbe(ctx context.Context, cfg Config, sync bool) (Probe, error) {
	var p Probe
	f, err := os.CreateTemp(cfg.Dir, "strait-limits-append-*")
	if err != nil {
		return p, fmt.Errorf("limits: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, cfg.WriteBytes)
	_, _ = rand.Read(buf)

	var total, size, syncs int64
	start := time.Now()
	deadline := start.Add(cfg.Time)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if size+int64(len(buf)) > cfg.MaxFileBytes {
			// Start over rather than fill the disk; truncating costs
			// what it costs, inside the measurement, like a segment
			// deletion would.
			if err := f.Truncate(0); err != nil {
				return p, fmt.Errorf("limits: truncate: %w", err)
			}
			if _, err := f.Seek(0, 0); err != nil {
				return p, fmt.Errorf("limits: seek: %w", err)
			}
			size = 0
		}
		n, err := f.Write(buf)
		total += int64(n)
		size += int64(n)
		if err != nil {
			return p, fmt.Errorf("limits: write: %w", err)
		}
		if sync {
			if err := unix.Fdatasync(int(f.Fd())); err != nil {
				return p, fmt.Errorf("limits: fdatasync: %w", err)
			}
			syncs++
		}
	}
	p.finish(total, time.Since(start))
	p.Syncs = syncs
	if total == 0 {
		return p, errNoProgress
	}
	return p, nil
}
