//go:build long

package e2e

import (
	"testing"
	"time"
)

// TestCrashDurabilityLong is TestCrashDurability with forty times the
// records and nine kills, each while the producer sends.
func TestCrashDurabilityLong(t *testing.T) {
	var kills []int
	for at := 20000; at < 200000; at += 20000 {
		kills = append(kills, at)
	}
	runCrash(t, crashPlan{records: 200000, sync: 10000, killAt: kills, pace: 50})
}

// TestKillDuringStartLong kills the broker at different moments of its
// start (before it is ready: while loading logs, electing itself,
// registering), then starts it for good: every kill leaves a directory
// the next start can open, and the records from before are all there.
func TestKillDuringStartLong(t *testing.T) {
	const topic = "startkill"
	n := newNode(t)
	n.start()
	createTopic(t, newAdmin(t, n.kafkaAddr()), topic, 3)
	led := newLedger(topic)
	prod := newClient(t, n.kafkaAddr())
	for i := range 2000 {
		led.produce(t.Context(), prod, i)
	}
	if err := prod.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	prod.Close()
	n.kill()
	for i, delay := range []time.Duration{0, 5, 20, 50, 100, 150, 200, 300, 500} {
		delay *= time.Millisecond
		p := startProc(t, t.TempDir(), n.args()...)
		time.Sleep(delay)
		ready := !p.exited() && len(p.linesWith(readyMsg)) > 0
		n.cur = p
		n.kill()
		t.Logf("kill %d after %v (ready: %v)", i+1, delay, ready)
	}
	n.start()
	log, ends := readAll(t, n.kafkaAddr(), topic)
	a, problems := check(led.snapshot(), log, ends)
	t.Logf("after the kills: %s", a)
	for _, p := range problems {
		t.Error(p)
	}
	if a.present != 2000 || a.records != 2000 || a.duplicates != 0 || a.gaps != 0 {
		t.Errorf("after the kills: %s; want the 2000 records exactly", a)
	}
}
