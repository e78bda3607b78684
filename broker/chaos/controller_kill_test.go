package chaos

import (
	"fmt"
	"testing"
	"time"
)

// TestControllerKill is TestLeaderKill's workload with the active
// controller (the raft leader) killed every 1-2 s instead: the voters
// elect another controller, which fences the killed broker, moves its
// leaderships and serves admin requests: after the first kills, while the
// old controller is still down, a new topic is created through a client
// bootstrapped at every node.
func TestControllerKill(t *testing.T) {
	controllerKill(t, plan{records: 20_000, minFaults: 4, timeout: 100 * time.Second})
}

func controllerKill(t *testing.T, pl plan) {
	e := newEnv(t, pl.timeout+2*time.Minute)
	e.startProducers(2)
	var created []string
	kills := e.chaos(pl, func() bool {
		id := e.c.Controller()
		if id < 0 {
			return false
		}
		e.logf("kill node %d, the active controller (%d acknowledged so far)", id, e.led.nAcked.Load())
		e.c.Kill(t, id)
		e.c.WaitFor(t, isrTimeout, "a new active controller", func() bool {
			ctrl := e.c.Controller()
			return ctrl >= 0 && ctrl != id
		})
		e.logf("node %d is the active controller", e.c.Controller())
		if len(created) < 2 {
			// Two replicas: the killed node may already be fenced, and
			// placement only uses unfenced brokers.
			name := fmt.Sprintf("after-kill-%d", len(created)+1)
			e.createTopicNoWait(name, 3, 2)
			created = append(created, name)
			e.logf("created %s through the new controller", name)
		}
		time.Sleep(between(e.rng, 300*time.Millisecond, 3*time.Second))
		e.logf("restart node %d; %s", id, e.leaders())
		e.c.Restart(t, id)
		e.c.WaitForISR(t, chaosTopic, chaosRF, isrTimeout)
		e.logf("ISR full again")
		return true
	})
	a, divergent := e.finish()
	for _, name := range created {
		e.c.WaitForISR(t, name, 2, isrTimeout)
	}
	e.logf("controller kill: acked=%d kills=%d lost=%d duplicates=%d divergent=%d (read %d, failed %d); topics created after kills: %v",
		a.acked, kills, a.lost, a.dups, divergent, a.read, e.led.nFailed.Load(), created)
	if int64(a.acked) < pl.records {
		t.Errorf("%d records acknowledged, want >= %d", a.acked, pl.records)
	}
	if want := min(kills, 2); len(created) != want {
		t.Errorf("created %v after kills, want %d topics", created, want)
	}
}
