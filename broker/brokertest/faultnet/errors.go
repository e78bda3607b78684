package faultnet

import (
	"errors"
	"fmt"
	"syscall"
)

var (
	// ErrLinkCut is wrapped by errors from dials refused, and connections
	// broken, because a Partition or Isolate cut their link.
	ErrLinkCut = errors.New("faultnet: link cut")
	// ErrLinkDropped is wrapped by errors from connections reset by
	// SetLinkDrop.
	ErrLinkDropped = errors.New("faultnet: link dropped")
)

// faultError is the innermost error of a fault. It wraps the faultnet
// sentinel (for tests) and matches the errno the kernel would report (for
// code that inspects errnos), and it is Temporary so that kgo's
// isRetryableBrokerErr retries it as it retries real network errors.
type faultError struct {
	link    Link
	cause   error         // ErrLinkCut or ErrLinkDropped
	errno   syscall.Errno // ETIMEDOUT for dials, ECONNRESET for connections
	timeout bool
}

func (e *faultError) Error() string {
	return fmt.Sprintf("%v on %v: %v", e.cause, e.link, e.errno)
}

func (e *faultError) Unwrap() error { return e.cause }

// Is matches the errno too, so errors.Is(err, syscall.ECONNRESET) holds as
// for a reset real socket.
func (e *faultError) Is(target error) bool {
	errno, ok := target.(syscall.Errno)
	return ok && errno == e.errno
}

func (e *faultError) Timeout() bool   { return e.timeout }
func (e *faultError) Temporary() bool { return true }
