//go:build unix

package main

import (
	"log/slog"
	"syscall"
)

// raiseOpenFileLimit raises the soft open-file limit (RLIMIT_NOFILE) to
// the hard one, logs both, and returns the soft limit now in force (0
// when it cannot be read). Every connection and every segment file takes
// a descriptor; Kafka's guidance is a limit of 100000 or more, and its
// start scripts leave raising it to the operator. The hard limit is the
// operator's choice, the soft one only a default for old programs.
//
// Go's runtime already raised the soft limit for itself when the process
// started (syscall's init in rlimit.go sets it to hard-1 when it was
// lower, and restores the inherited value for child processes), so the
// limit found here is the runtime's, not the one the process was started
// with: a limit the supervisor set below the hard one is not observable
// any more. Setting it here also makes children inherit the raised limit
// (syscall.Setrlimit stops the runtime restoring it); serve starts none.
func raiseOpenFileLimit(logger *slog.Logger) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		logger.Warn("cannot read the open-file limit", "err", err)
		return 0
	}
	found := lim.Cur
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			logger.Warn("cannot raise the open-file soft limit to the hard limit", "soft", lim.Cur, "hard", lim.Max, "err", err)
			return lim.Cur
		}
		lim = raised
	}
	logger.Info("open-file limit", "soft", lim.Cur, "hard", lim.Max, "soft_found", found)
	return lim.Cur
}
