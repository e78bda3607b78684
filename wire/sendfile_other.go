//go:build !linux

package wire

import (
	"context"
	"errors"
	"time"
)

// sendfileSupported: only Linux sends Fetch data with sendfile(2); other
// platforms always read it into a pooled buffer.
const sendfileSupported = false

func dupSocket(int) (int, error) { return -1, errors.ErrUnsupported }

func closeSocket(int) {}

func writeDirect(context.Context, int, *directFetch, time.Duration, func(int)) (int64, error) {
	return 0, errors.ErrUnsupported
}
