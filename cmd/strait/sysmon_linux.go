package main

import (
	"fmt"
	"os"
	"syscall"
)

// keepSysmonAwake executes this binary again with serveSchedTrace added to
// GODEBUG (sysmon.go says why), unless GODEBUG sets schedtrace already. It
// returns only when it did not: when the setting is there, or when the
// exec failed (reported on stderr; the broker then runs with the
// runtime's default). /proc/self/exe is the running binary even if its
// file was replaced or removed since; the process keeps its pid, open
// descriptors and limits, so a supervisor sees one process.
func keepSysmonAwake() {
	godebug, changed := serveGODEBUG(os.Getenv("GODEBUG"))
	if !changed {
		return
	}
	err := syscall.Exec("/proc/self/exe", os.Args, withEnv(os.Environ(), "GODEBUG", godebug))
	fmt.Fprintf(os.Stderr, "strait serve: could not re-execute with GODEBUG=%s (%v); running with the Go runtime's default scheduler monitor\n", godebug, err)
}
