package broker

import (
	"context"
	"time"
)

// A listener that can no longer accept connections (its socket stopped
// listening, or the event loops serving it stopped: wire.Server.Failed)
// leaves a broker that looks alive to its supervisor but refuses every
// client. Kafka's broker runs on in that state when its Acceptor thread
// dies; Strait stops instead, so the supervisor starts it again. The
// storage is sound, so the stop is the controlled one SIGTERM gets
// (leadership moves away, logs are flushed and checkpointed), bounded by
// listenerFailureStopTimeout, and `strait serve` exits 1 naming the
// listener.

// listenerFailureStopTimeout bounds the stop after a listener failed.
const listenerFailureStopTimeout = 10 * time.Second

// watchListeners halts the node when its wire server fails; it returns
// once the node stops.
func (n *Node) watchListeners() {
	select {
	case <-n.server.Failed():
		err := n.server.Err()
		n.haltBy(func() {
			ctx, cancel := context.WithTimeout(context.Background(), listenerFailureStopTimeout)
			defer cancel()
			_ = n.Stop(ctx)
		}, err, "halting: a listener failed, so this broker stops and exits for its supervisor to start it again", "err", err)
	case <-n.bgCtx.Done():
	}
}
