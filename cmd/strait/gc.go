package main

import "runtime/debug"

// serveGCPercent is the GOGC a broker runs with when the environment sets
// none. A broker's live heap is small (tens of MiB: metadata, indexes,
// sessions) while its garbage is per-request buffers in proportion to the
// traffic, so at Go's default of 100 the collector runs every few MiB of
// produce or fetch. In `strait bench cluster` (three nodes on two cores,
// RF=3 acks=all) 400 cut each node's CPU per GiB by about 20% for about
// 11 MiB more RSS. Kafka makes the same trade with a fixed 1 GiB JVM heap.
const serveGCPercent = 400

// setServeGCPercent applies serveGCPercent unless GOGC is set: the
// operator's GOGC (or GOMEMLIMIT with GOGC=off) always wins.
func setServeGCPercent(getenv func(string) string) {
	if getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(serveGCPercent)
}

// serveMemoryLimitTenths is the share, in tenths, of a container's memory
// limit that `strait serve` gives the Go runtime as its soft memory limit
// when the environment sets no GOMEMLIMIT. With GOGC=400 the heap may grow to five
// times the live heap before a collection; inside a container that can be
// past its limit, and the kernel kills the process. A soft limit makes the
// collector run harder instead as the heap nears it; the rest of the
// container's memory is left to what the runtime does not count (the page
// cache, which the cgroup charges, and mapped index files).
const serveMemoryLimitTenths = 9

// setServeMemoryLimit applies serveMemoryLimitTenths of the cgroup's
// memory limit unless GOMEMLIMIT is set (the runtime honours that itself)
// or the process has no cgroup limit.
func setServeMemoryLimit(getenv func(string) string, cgroupLimit func() (int64, bool)) {
	if getenv("GOMEMLIMIT") != "" {
		return
	}
	if limit, ok := cgroupLimit(); ok {
		debug.SetMemoryLimit(limit / 10 * serveMemoryLimitTenths)
	}
}
