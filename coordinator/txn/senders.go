package txn

import "time"

// senderIdle is how long a marker sender waits for another prepared
// transaction before it exits.
const senderIdle = 30 * time.Second

// goSend runs f, the markers and completion of a prepared transaction
// (shard.finish), on an idle marker sender, or on a new one when none is
// idle, so transactions still complete in parallel (a slow leader holds
// up only its own). A sender goes on to the next transaction when it is
// done and exits after senderIdle without one.
//
// Why reuse them: a goroutine starts with a small stack, and one sending
// markers grows it through the append path (WriteTxnMarkers, the log
// append, the completion's append) every time: with a goroutine per
// transaction that copying was about 3% of the broker's CPU under a
// transactional producer, as much as the marker's append itself. Kafka's
// TransactionMarkerChannelManager is one long-lived sender thread.
func (c *Coordinator) goSend(f func()) {
	select {
	case c.idleSenders <- f:
		return
	default:
	}
	c.sendersStarted.Add(1)
	c.wg.Go(func() { c.sender(f) })
}

// sender runs f, then every job handed to it while idle, until it has
// been idle for senderIdle or the coordinator closes.
func (c *Coordinator) sender(f func()) {
	idle := time.NewTimer(senderIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(senderIdle)
		c.sendersIdle.Add(1)
		select {
		case f = <-c.idleSenders:
			c.sendersIdle.Add(-1)
		case <-idle.C:
			c.sendersIdle.Add(-1)
			return
		case <-c.ctx.Done():
			c.sendersIdle.Add(-1)
			return
		}
	}
}
