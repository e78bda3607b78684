package main

import "strings"

// serveSchedTrace keeps the Go runtime's monitor thread (sysmon) out of
// its deep sleep. GODEBUG=schedtrace=N asks for a scheduler trace line on
// stderr every N ms, and while it is set sysmon never parks; N here is the
// largest the runtime takes (about 24.8 days), so a line is printed only
// when the monotonic clock passes a multiple of it (on a machine up that
// long, at start-up and every 24.8 days).
//
// Why: a broker's process goes idle between requests thousands of times a
// second at low partition counts. sysmon parks whenever every P is idle,
// and the next system call of any goroutine wakes it (a futex wake), after
// which it polls in 20 µs sleeps until it sees the process idle again. On
// a virtual machine where a wake-up and a timer sleep cost tens of µs, that
// was 15% of the broker's CPU producing to one partition and about 9% of
// each node's with three nodes at RF=3 (perf). Kept awake, sysmon backs
// off to sleeps of up to 10 ms on its own. Measured on that machine (bench
// produce, 16 KiB batches, this binary with and without, interleaved):
//   - one partition, acks=all: 3.32-3.70 cpu s/GiB at 179-203 MiB/s
//     without, 2.59-2.71 at 226-239 with; acks=1: 2.95-3.58 against
//     2.26-2.43;
//   - eight partitions, acks=1: 1.50 against 1.42-1.43;
//   - three nodes, RF=3 acks=all: 119-160 MiB/s against 134-170;
//   - an idle node with 10,000 partitions: about 0.6% of a core more, for
//     the 10 ms polls.
//
// The runtime reads schedtrace only from the environment at start-up (it
// is not a //go:debug setting and os.Setenv does not change it), so
// `strait serve` executes itself once more with it added (sysmon_linux.go).
// A GODEBUG that sets schedtrace itself is left alone: schedtrace=0
// restores the runtime's default.
const serveSchedTrace = "schedtrace=2147483647"

// serveGODEBUG is godebug with serveSchedTrace added, and whether that
// changed it (false when godebug sets schedtrace already).
func serveGODEBUG(godebug string) (string, bool) {
	for _, setting := range strings.Split(godebug, ",") {
		if strings.HasPrefix(strings.TrimSpace(setting), "schedtrace=") {
			return godebug, false
		}
	}
	if strings.TrimSpace(godebug) == "" {
		return serveSchedTrace, true
	}
	return godebug + "," + serveSchedTrace, true
}

// withEnv is environ with key set to value, replacing any earlier value.
func withEnv(environ []string, key, value string) []string {
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
