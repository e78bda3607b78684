package chaos

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestLeaderIsolation cuts the leader of a random partition off from the
// other two nodes (faultnet's Isolate: raft, the controller channel and
// the replica fetchers, both directions) while the two producers of the
// other tests run and a third, pinned to the isolated leader (see
// pinnedProducer), keeps sending acks=all Produce requests for the
// partitions it leads. Cut off, the old leader's followers stop fetching,
// so its high watermark cannot pass what they fetched before the cut; the
// controller fences it once its session expires and elects new leaders.
// From then on it must acknowledge nothing; its answers are errors
// (REQUEST_TIMED_OUT while it believes it leads, NOT_LEADER_OR_FOLLOWER
// once it learns it does not). After the network heals it follows the new
// leaders and truncates what it appended above its high watermark that
// they do not have; every acknowledged record is read back, and every
// replica equals its leader below the high watermark.
func TestLeaderIsolation(t *testing.T) {
	e := newEnv(t, 3*time.Minute)
	e.startProducers(2)
	time.Sleep(between(e.rng, time.Second, 2*time.Second))

	p := int32(e.rng.IntN(chaosPartitions))
	old := e.c.Leader(chaosTopic, p)
	if old < 0 {
		t.Fatalf("%s-%d has no leader: %s", chaosTopic, p, e.leaders())
	}
	var led []int32
	for _, part := range e.c.Image().Topics[chaosTopic].Partitions {
		if part.Leader == old {
			led = append(led, part.Index)
		}
	}
	controller := e.c.Controller()
	pinned := newPinnedProducer(t, e.c.Node(old).Addr(), old, led)
	pinned.start(e.ctx)
	e.extra = append(e.extra, pinned.led)
	time.Sleep(between(e.rng, 500*time.Millisecond, time.Second))

	isolated := time.Now()
	e.logf("isolate node %d, leader of %v (controller %d; %d acknowledged by the pinned producer so far); %s",
		old, led, controller, pinned.led.nAcked.Load(), e.leaders())
	e.c.Net.Isolate(old)
	var fenced time.Time
	e.c.WaitFor(t, isrTimeout, fmt.Sprintf("node %d fenced and %v led by others", old, led), func() bool {
		img := e.c.Image()
		b, ok := img.Brokers[old]
		if !ok || !b.Fenced {
			return false
		}
		for _, q := range led {
			part, _ := img.Partition(chaosTopic, q)
			if part.Leader == old || part.Leader < 0 || slices.Contains(part.ISR, old) {
				return false
			}
		}
		fenced = time.Now()
		return true
	})
	e.logf("node %d fenced %v after the cut; %s", old, fenced.Sub(isolated).Round(time.Millisecond), e.leaders())
	time.Sleep(between(e.rng, 2*time.Second, 3*time.Second))

	// What the isolated node holds above its high watermark: appended as
	// leader, never committed by it.
	type suffix struct {
		hw, leo int64
		batches []batchSummary
	}
	suffixes := map[int32]suffix{}
	for _, q := range led {
		l := partitionLog(e.c, old, chaosTopic, q)
		s := suffix{hw: l.HighWatermark(), leo: l.LogEndOffset()}
		var err error
		if s.batches, err = batches(l, s.hw, s.leo); err != nil {
			t.Fatalf("node %d's %s-%d above its high watermark %d: %v", old, chaosTopic, q, s.hw, err)
		}
		suffixes[q] = s
		e.logf("node %d's %s-%d before healing: high watermark %d, log end %d (%d batches above the high watermark)", old, chaosTopic, q, s.hw, s.leo, len(s.batches))
	}
	healed := time.Now()
	e.c.Net.Heal()
	e.logf("healed")
	// Keep the pinned producer on for a moment: it now hears that the
	// node leads nothing.
	time.Sleep(between(e.rng, time.Second, 2*time.Second))
	pinned.Stop()

	var beforeCut, whileCut, afterFence, afterHeal int
	for _, a := range pinned.led.snapshot() {
		switch {
		case a.at.Before(isolated):
			beforeCut++
		case a.at.Before(fenced):
			whileCut++
		case a.at.Before(healed):
			afterFence++
		default:
			afterHeal++
		}
	}
	failed, answers := pinned.summary()
	e.logf("pinned producer: records acknowledged %d before the cut, %d while cut, %d after the fence, %d after healing; %d failed; answers per partition batch: %s",
		beforeCut, whileCut, afterFence, afterHeal, failed, answers)
	if afterFence != 0 || afterHeal != 0 {
		t.Errorf("node %d acknowledged %d records after it was fenced (%d of them after healing), want 0", old, afterFence+afterHeal, afterHeal)
	}
	if beforeCut == 0 {
		t.Errorf("the pinned producer had nothing acknowledged before the cut: the test never produced to the leader")
	}
	if failed == 0 {
		t.Errorf("no produce to the isolated node %d failed, want some", old)
	}

	a, divergent := e.finish()
	kept, replaced := 0, 0
	for q, s := range suffixes {
		l := partitionLog(e.c, old, chaosTopic, q)
		after, err := batches(l, s.hw, min(s.leo, l.HighWatermark()))
		if err != nil {
			t.Fatalf("node %d's %s-%d after healing: %v", old, chaosTopic, q, err)
		}
		for _, b := range s.batches {
			if slices.Contains(after, b) {
				kept++ // fetched by a follower before the cut
			} else {
				replaced++
			}
		}
	}
	e.logf("leader isolation: acked=%d lost=%d duplicates=%d divergent=%d (read %d); node %d truncated %d of the %d batches above its high watermark (%d were replicated before the cut); pinned producer: failed=%d, acknowledged after the fence=%d",
		a.acked, a.lost, a.dups, divergent, a.read, old, replaced, kept+replaced, kept, failed, afterFence+afterHeal)
	if replaced == 0 {
		// The pinned producer's batches appended after the cut never
		// reached a follower: healing must have truncated them.
		t.Errorf("node %d kept all %d batches it held above its high watermark, want the ones appended while cut off truncated", old, kept)
	}
}
