package mirrorit

import (
	"testing"
	"time"
)

// TestMirrorPauseResume pauses a mirror topic while the source is written
// to: the destination stops growing (still read-only), resume continues
// from its log end with no truncation (its high watermarks never go back)
// and, after lag 0, both copies are identical and every acknowledged
// source record is on the destination exactly once at its offset.
func TestMirrorPauseResume(t *testing.T) {
	t.Parallel()
	p := newPair(t, 3*time.Minute, startOne(t, "source"), startOne(t, "destination"))
	const topic, partitions = "paused", 3
	p.src.createTopic(t, p.ctx, topic, partitions)
	p.createMirror()
	p.start(topic)
	mon := monitorHW(t, p.ctx, p.dst, topic)
	prod := produceInBackground(t, p.ctx, p.src, topic, partitions, producerKinds()[1], "pr")
	p.waitFor(30*time.Second, "the destination copies", func() string {
		if n := sum(p.dst.endOffsets(t, p.ctx, topic)); n < 500 {
			return "destination holds few records"
		}
		return ""
	})

	p.pause(topic)
	p.waitState(topic, "PAUSED", partitions, 30*time.Second)
	paused := p.dst.endOffsets(t, p.ctx, topic)
	srcAtPause := sum(p.src.endOffsets(t, p.ctx, topic))
	time.Sleep(time.Second) // the source keeps growing meanwhile
	still := p.dst.endOffsets(t, p.ctx, topic)
	srcLater := sum(p.src.endOffsets(t, p.ctx, topic))
	p.logf("paused: destination %v then %v; source %d then %d records", paused, still, srcAtPause, srcLater)
	for part := range int32(partitions) {
		if still[part] != paused[part] {
			t.Errorf("p%d grew from %d to %d while PAUSED", part, paused[part], still[part])
		}
	}
	if srcLater <= srcAtPause {
		t.Fatalf("the source did not grow during the pause (%d → %d): the test proves nothing", srcAtPause, srcLater)
	}
	if td, err := p.describe(topic); err == nil {
		for _, pd := range td.Partitions {
			if pd.State != "PAUSED" {
				t.Errorf("p%d: %s after a second of pause", pd.Partition, pd.State)
			}
		}
	}

	p.resume(topic)
	time.Sleep(500 * time.Millisecond)
	acked := prod.stop()
	failed, errs := prod.errors()
	p.waitMirroring(topic, partitions, time.Minute)
	samples, decreases := mon.stop()
	for _, d := range decreases {
		t.Errorf("destination high watermark went back (truncation): %s", d)
	}
	r := p.checkIdentity(topic, int64(len(acked)))
	a := auditLedger(acked, storedValues(t, readTopic(t, p.ctx, p.dst, topic)))
	t.Logf("counts: produced=%d failed=%d %v; batches=%d mismatches=%d missing=%d; lost=%d duplicates=%d; hw samples=%d decreases=%d",
		len(acked), failed, errs, r.Batches, r.Mismatches, r.Missing, a.lost, a.duplicates, samples, len(decreases))
	assertLedger(t, "destination", a)
}

func sum(m map[int32]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
