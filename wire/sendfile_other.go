//go:build !linux

package wire

import (
	"context"
	"errors"
	"time"
)

// sendfileSupported: only Linux sends Fetch data with sendfile(2) or
// writes on a lent socket; other platforms always read the data into a
// pooled buffer and write through gnet.
const sendfileSupported = false

// directSocket is never made off Linux (acquireSocket never asks).
type directSocket struct{}

func dupSocket(int) (int, error) { return -1, errors.ErrUnsupported }

func newDirectSocket(int) (*directSocket, error) { return nil, errors.ErrUnsupported }

func (*directSocket) close() {}

func writeDirect(context.Context, *directSocket, *directFetch, time.Duration, func(int)) (int64, error) {
	return 0, errors.ErrUnsupported
}

func writeBuffers(context.Context, *directSocket, [][]byte, time.Duration, func(int)) (int64, error) {
	return 0, errors.ErrUnsupported
}

func (*directSocket) read(func() []byte, func()) (int, error) { return 0, errors.ErrUnsupported }

func (*directSocket) interruptRead() {}
