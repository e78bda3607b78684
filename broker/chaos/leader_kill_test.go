package chaos

import (
	"testing"
	"time"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestLeaderKill kills the leader of a random partition every 1-2 s
// (SIGKILL-like, brokertest's Kill) and restarts it a moment later, while
// two idempotent acks=all producers write to six RF=3 partitions with
// min.insync.replicas=2. At most one node is down at a time, and the next
// kill waits for a full ISR, so acks=all stays satisfiable. After the
// chaos: every acknowledged record is read back exactly once at its
// acknowledged offset, and every replica equals its leader below the high
// watermark.
func TestLeaderKill(t *testing.T) {
	leaderKill(t, plan{records: 20_000, minFaults: 5, timeout: 100 * time.Second})
}

// leaderKill runs the leader-kill chaos on a cluster started with opts.
func leaderKill(t *testing.T, pl plan, opts ...brokertest.Option) {
	e := newEnv(t, pl.timeout+2*time.Minute, opts...)
	e.startProducers(2)
	kills := e.chaos(pl, func() bool {
		p := int32(e.rng.IntN(chaosPartitions))
		id := e.c.Leader(chaosTopic, p)
		if id < 0 {
			return false
		}
		e.logf("kill node %d, leader of %s-%d (controller %d; %d acknowledged so far)", id, chaosTopic, p, e.c.Controller(), e.led.nAcked.Load())
		e.c.Kill(t, id)
		// Sometimes back before its session expires (it registers a new
		// incarnation), sometimes after the controller fenced it.
		time.Sleep(between(e.rng, 300*time.Millisecond, 3*time.Second))
		e.logf("restart node %d; %s", id, e.leaders())
		e.c.Restart(t, id)
		e.c.WaitForISR(t, chaosTopic, chaosRF, isrTimeout)
		e.logf("ISR full again")
		return true
	})
	a, divergent := e.finish()
	e.logf("leader kill: acked=%d kills=%d lost=%d duplicates=%d divergent=%d (read %d, failed %d)",
		a.acked, kills, a.lost, a.dups, divergent, a.read, e.led.nFailed.Load())
	if int64(a.acked) < pl.records {
		t.Errorf("%d records acknowledged, want >= %d", a.acked, pl.records)
	}
}
