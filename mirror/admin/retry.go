package admin

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Retry backoff while the controller moves.
const (
	retryInitialBackoff = 100 * time.Millisecond
	retryMaxBackoff     = time.Second
)

// send sends req and retries, until ctx ends, while code says the answer is
// NOT_CONTROLLER: the broker could not reach an active controller (an
// election is under way). Kafka's AdminClient retries it the same way; as
// there, a write whose answer was lost on the way back may then meet its
// own effect (e.g. an invalid-state answer to a stop that did happen).
//
// When ctx ends while a retry is on its way, the answer is the last
// NOT_CONTROLLER heard, not the context's error: that is what the caller
// needs to know (Kafka's AdminClient times out with the last error as
// the cause).
func send[R kmsg.Response](ctx context.Context, cl *kgo.Client, req kmsg.Request, code func(R) int16) (R, error) {
	backoff := retryInitialBackoff
	var last R
	retrying := false
	for {
		kresp, err := cl.Request(ctx, req)
		if err != nil {
			if retrying && ctx.Err() != nil {
				return last, nil
			}
			var zero R
			return zero, err
		}
		resp := kresp.(R)
		if code(resp) != kerr.NotController.Code {
			return resp, nil
		}
		last, retrying = resp, true
		select {
		case <-ctx.Done():
			return resp, nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, retryMaxBackoff)
	}
}
