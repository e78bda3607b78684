package mirrorit

import (
	"testing"
	"time"
)

// sourceNodeIDs are the ids the destination's fault network gives the
// source cluster's nodes, so that the mirror link (destination node →
// source node) can be cut like any link inside the destination cluster.
var sourceNodeIDs = []int32{101, 102, 103}

// TestMirrorFaults3x3: three source nodes, three destination nodes,
// producers writing to the source all along. Mid-stream: the destination
// leader of a mirror partition is killed (and restarted), then the
// source's leader of that partition, then the mirror link between the
// clusters is cut for a while. After healing lag reaches 0, the copies are
// byte-identical, every acknowledged record is on the destination exactly
// once at its offset, and no destination high watermark ever went back.
func TestMirrorFaults3x3(t *testing.T) {
	t.Parallel()
	src, dst := startThree(t, "source"), startThree(t, "destination")
	p := newPair(t, 4*time.Minute, src, dst)
	const topic, partitions = "faults", 3
	phase := faultsPhase * time.Millisecond
	// The mirror's connections are dialed by destination nodes through
	// their fault network: tell it which addresses are the source's.
	for i, b := range src.many.Nodes() {
		dst.many.Net.Register(sourceNodeIDs[i], b.Addr())
	}
	src.createTopic(t, p.ctx, topic, partitions)
	p.createMirror()
	p.start(topic)
	mon := monitorHW(t, p.ctx, dst, topic)
	prods := []*background{
		produceInBackground(t, p.ctx, src, topic, partitions, producerKinds()[1], "idem"),
		produceInBackground(t, p.ctx, src, topic, partitions, producerKinds()[5], "zstd"),
	}
	time.Sleep(phase)

	dp, dl := leaderNotController(dst, topic, partitions)
	p.logf("killing destination node %d (leader of %s/%d)", dl, topic, dp)
	dst.many.Kill(t, dl)
	time.Sleep(phase)
	dst.many.Restart(t, dl)
	p.logf("destination node %d restarted", dl)
	time.Sleep(phase)

	sp, sl := leaderNotController(src, topic, partitions)
	p.logf("killing source node %d (leader of %s/%d)", sl, topic, sp)
	src.many.Kill(t, sl)
	time.Sleep(phase)
	src.many.Restart(t, sl)
	p.logf("source node %d restarted", sl)
	time.Sleep(phase)

	p.logf("cutting the mirror link (destination nodes 1-3 from source nodes %v)", sourceNodeIDs)
	dst.many.Net.Partition([]int32{1, 2, 3}, sourceNodeIDs)
	time.Sleep(phase / 2)
	cutFrom := sum(dst.endOffsets(t, p.ctx, topic))
	srcFrom := sum(src.endOffsets(t, p.ctx, topic))
	time.Sleep(phase)
	cutTo := sum(dst.endOffsets(t, p.ctx, topic))
	srcTo := sum(src.endOffsets(t, p.ctx, topic))
	dst.many.Net.Heal()
	p.logf("link healed: while cut the destination went %d → %d records, the source %d → %d", cutFrom, cutTo, srcFrom, srcTo)
	if srcTo <= srcFrom {
		t.Errorf("the source did not grow while the link was cut (%d → %d)", srcFrom, srcTo)
	}
	if cutTo != cutFrom {
		t.Errorf("the destination grew from %d to %d records while the mirror link was cut: the mirror's source client does not dial through the node's dialer (broker.Options.Dialer)", cutFrom, cutTo)
	}
	time.Sleep(phase)

	acked := map[string]position{}
	failed := 0
	for _, b := range prods {
		for v, pos := range b.stop() {
			acked[v] = pos
		}
		f, errs := b.errors()
		failed += f
		if f > 0 {
			t.Logf("producer errors (records not acknowledged, allowed): %v", errs)
		}
	}
	p.waitMirroring(topic, partitions, 2*time.Minute)
	samples, decreases := mon.stop()
	for _, d := range decreases {
		t.Errorf("destination high watermark went back: %s", d)
	}
	r := p.checkIdentity(topic, int64(len(acked)))
	a := auditLedger(acked, storedValues(t, readTopic(t, p.ctx, dst, topic)))
	t.Logf("counts: produced=%d unacknowledged=%d; batches=%d records=%d mismatches=%d missing=%d extra=%d; lost=%d duplicates=%d misplaced=%d; hw samples=%d decreases=%d",
		len(acked), failed, r.Batches, r.Records, r.Mismatches, r.Missing, r.Extra, a.lost, a.duplicates, a.misplaced, samples, len(decreases))
	assertLedger(t, "destination", a)
}

// leaderNotController picks a partition of topic whose leader is not the
// active controller, and that leader: killing the controller as well
// tests controller failover, the cluster tests' business (and a
// restarted ex-controller re-registering under -race on two cores can
// outlast brokertest's start timeout). Partition 0 if every leader is the
// controller.
func leaderNotController(s *side, topic string, partitions int32) (int32, int32) {
	ctrl := s.many.Controller()
	for part := range partitions {
		if l := s.leader(topic, part); l >= 0 && l != ctrl {
			return part, l
		}
	}
	return 0, s.leader(topic, 0)
}
