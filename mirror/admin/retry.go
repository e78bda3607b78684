package admin

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Retry backoff while the controller or a leader moves.
const (
	retryInitialBackoff = 100 * time.Millisecond
	retryMaxBackoff     = time.Second
)

// idempotency says whether a request may be sent again after its outcome
// became unknown (a timeout): a read may, a write may not (pausing twice
// answers MIRROR_TOPIC_ALREADY_PAUSED).
type idempotency bool

const (
	isRead  idempotency = true
	isWrite idempotency = false
)

// retriable reports whether an answer carrying code is worth asking
// again, after the cluster had time to settle: what Kafka's AdminClient
// retries (RetriableException) for the mirror RPCs.
//   - NOT_CONTROLLER: the broker could not reach an active controller (an
//     election is under way).
//   - NOT_LEADER_OR_FOLLOWER: a partition the request needs has no leader
//     right now, or not the broker asked.
//   - COORDINATOR_LOAD_IN_PROGRESS: the __mirror_state partition the
//     broker reads is still loading after a leader change.
//   - COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: the broker running a
//     mirror's syncer (SyncMirrorGroupOffsets) is moving or starting.
//   - REQUEST_TIMED_OUT: only a request that may be sent twice: a write's
//     timeout leaves it unknown whether it happened.
func retriable(code int16, idem idempotency) bool {
	switch code {
	case kerr.NotController.Code, kerr.NotLeaderForPartition.Code, kerr.CoordinatorLoadInProgress.Code,
		kerr.CoordinatorNotAvailable.Code, kerr.NotCoordinator.Code:
		return true
	case kerr.RequestTimedOut.Code:
		return bool(idem)
	}
	return false
}

// connectionLost reports whether a request failed because its broker's
// connection did (the broker stopped or died), not because ctx ended or
// the client closed: Kafka's AdminClient retries a call after such a
// DisconnectException, a RetriableException, reads and writes alike.
func connectionLost(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var firstRead *kgo.ErrFirstReadEOF
	var opErr *net.OpError
	return errors.As(err, &firstRead) || errors.As(err, &opErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// send sends req and retries, until ctx ends, while code says the answer is
// retriable (above) or the broker's connection was lost, forcing a metadata refresh before each retry so the
// client finds a moved controller or leader, as Kafka's AdminClient
// rediscovers them. As there, a write whose answer was lost on the way
// back may then meet its own effect (e.g. an invalid-state answer to a
// stop that did happen); a broker's own retries to the controller are
// exact (raftmeta's forwarded requests).
//
// When ctx ends while a retry is on its way, the answer is the last
// retriable one heard, not the context's error: that is what the caller
// needs to know (Kafka's AdminClient times out with the last error as
// the cause).
func send[R kmsg.Response](ctx context.Context, cl *kgo.Client, req kmsg.Request, idem idempotency, code func(R) int16) (R, error) {
	backoff := retryInitialBackoff
	var last R
	retrying := false
	var lastErr error
	for {
		kresp, err := cl.Request(ctx, req)
		switch {
		case err != nil && retrying && ctx.Err() != nil:
			if lastErr != nil {
				return last, lastErr
			}
			return last, nil
		case err != nil && !connectionLost(ctx, err):
			var zero R
			return zero, err
		case err != nil:
			lastErr, retrying = err, true
		default:
			resp := kresp.(R)
			if !retriable(code(resp), idem) {
				return resp, nil
			}
			last, lastErr, retrying = resp, nil, true
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return last, lastErr
			}
			return last, nil
		case <-time.After(backoff):
		}
		cl.ForceMetadataRefresh()
		backoff = min(2*backoff, retryMaxBackoff)
	}
}
