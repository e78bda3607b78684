package limits

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// syscallProbeTime bounds the system call probe: a few hundred thousand
// calls are a steady figure.
const syscallProbeTime = 200 * time.Millisecond

// syscallNanos is the time of the cheapest system call, getppid, averaged
// over up to d: what each read, write and wake-up of a broker pays on top
// of its own work. A bare machine answers in about 0.1 µs; under some
// hypervisors every system call is a trip through the host and costs ten
// times that or more, and it can change from one hour to the next as the
// host's load does. A Produce costs Strait three to four system calls
// (read, pwrite, sendmsg and a wake-up), so the CPU of its produce rows
// moves with this figure, and so do kfake's; a run's ratios read in its
// light. 0 when ctx ended first.
func syscallNanos(ctx context.Context, d time.Duration) float64 {
	const perCheck = 1000
	calls := 0
	start := time.Now()
	for time.Since(start) < d && ctx.Err() == nil {
		for range perCheck {
			unix.Getppid()
		}
		calls += perCheck
	}
	if calls == 0 {
		return 0
	}
	return float64(time.Since(start).Nanoseconds()) / float64(calls)
}
