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
