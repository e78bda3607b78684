package mirrorit

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/storage/record"
)

// TestMirrorFailback: A→B mirror; stop on B (failover); N records written
// on B; M divergent records written on A (as if A had kept accepting
// writes); then a mirror on A pointing at B is started. A must truncate
// exactly the M divergent records, copy exactly what B has beyond the stop
// point (the N records and B's MIRROR_PID_RESET barrier), and end
// byte-identical to B. Every replica of A (3+3: all three of each
// partition, followers included) must end identical to A's leader, so
// B's too: the followers truncated the divergent records as well.
func TestMirrorFailback(t *testing.T) {
	t.Parallel()
	testMirrorFailback(t, oneAndOne)
}

// TestMirrorFailback3x3 is TestMirrorFailback with A and B both
// three-node clusters (replication factor 3).
// It is not parallel (see threeAndThree).
func TestMirrorFailback3x3(t *testing.T) {
	testMirrorFailback(t, threeAndThree)
}

func testMirrorFailback(t *testing.T, sh shape) {
	a, b := sh.start(t, "A"), sh.start(t, "B")
	ab := newPair(t, 3*time.Minute, a, b)
	const topic, partitions = "fb", 2
	const perPartitionN, perPartitionM = 150, 70
	a.createTopic(t, ab.ctx, topic, partitions)
	n0 := produceMix(t, ab.ctx, a, topic, partitions, 300, producerKinds()[:3])
	ab.createMirror()
	ab.start(topic)
	ab.waitMirroring(topic, partitions, time.Minute)
	ab.stop(topic)
	stopped := ab.waitState(topic, "STOPPED", partitions, 30*time.Second)
	stopAt := a.endOffsets(t, ab.ctx, topic) // A's end: what B mirrored
	aBefore := readTopic(t, ab.ctx, a, topic)
	// B recorded the LME, the epoch of the last batch it mirrored: the
	// failback truncates A after it. (−1 would truncate A fully and copy
	// everything back, which the byte counts below cannot tell apart.)
	lmeErrors := 0
	for part := range int32(partitions) {
		bs := aBefore.partitions[part]
		if want, lme := bs[len(bs)-1].PartitionLeaderEpoch(), stopped.Partitions[part].LastMirrorEpoch; lme != want {
			lmeErrors++
			t.Errorf("p%d: B STOPPED with last mirrored epoch %d, want %d (A's last batch's)", part, lme, want)
		}
	}

	// N new records on B, M divergent ones on A.
	n := writeEach(t, ab, b, topic, partitions, perPartitionN, "on-B")
	m := writeEach(t, ab, a, topic, partitions, perPartitionM, "divergent-on-A")
	bEnd := b.endOffsets(t, ab.ctx, topic)
	aDiverged := a.endOffsets(t, ab.ctx, topic)
	ab.logf("stop point %v; B now ends at %v (+%d records), A at %v (+%d divergent)", stopAt, bEnd, n, aDiverged, m)

	// Failback: a mirror on A pointing at B.
	ba := newPair(t, 2*time.Minute, b, a)
	ba.createMirror()
	ba.start(topic)
	ba.waitMirroring(topic, partitions, time.Minute)
	r, bLog, aAfter := identity(t, ba.ctx, b, a, topic)
	ba.logf("identity B→A %v", r)
	assertIdentical(t, r, int64(n0+n))

	// What A lost and what it gained, per partition.
	values := storedValues(t, aAfter)
	divergentLeft := 0
	for i := range m {
		if _, ok := values[string(recordValue("divergent-on-A", i))]; ok {
			divergentLeft++
		}
	}
	copiedData, copiedBarriers := 0, 0
	dec := record.NewDecompressor()
	for part := range int32(partitions) {
		for _, bt := range aAfter.partitions[part] {
			if bt.BaseOffset() < stopAt[part] {
				continue
			}
			switch {
			case dec.IsMirrorPidReset(bt):
				copiedBarriers++
			case !bt.IsControl():
				copiedData += int(bt.RecordCount())
			}
		}
	}
	truncated := 0
	for part := range int32(partitions) {
		truncated += int(aDiverged[part] - stopAt[part])
	}
	// Below the stop point A kept its own batches, unchanged.
	kept := compareLogs(topic, aBefore, aAfter)
	// Every replica on both sides equals its leader; each holds B's one
	// barrier per partition (A's copied it).
	aReps := checkReplicas(t, a, topic, aAfter, sh.nodes, 30*time.Second)
	bReps := checkReplicas(t, b, topic, bLog, sh.nodes, 30*time.Second)
	t.Logf("counts (%s): mirrored=%d N=%d M=%d; LME errors=%d; A truncated %d offsets (%d divergent records left), copied %d records and %d barriers; A before/after the stop point: %v; A replicas: %v; B replicas: %v",
		sh.name, n0, n, m, lmeErrors, truncated, divergentLeft, copiedData, copiedBarriers, kept, aReps, bReps)
	assertReplicas(t, "A", aReps, partitions, sh.nodes, partitions*sh.nodes)
	assertReplicas(t, "B", bReps, partitions, sh.nodes, partitions*sh.nodes)
	if divergentLeft != 0 || truncated != m {
		t.Errorf("A truncated %d offsets with %d divergent records left, want exactly the %d divergent records gone", truncated, divergentLeft, m)
	}
	if copiedData != n || copiedBarriers != partitions {
		t.Errorf("A copied %d records and %d barriers beyond the stop point, want exactly %d and %d", copiedData, copiedBarriers, n, partitions)
	}
	if kept.Mismatches != 0 || kept.Missing != 0 || kept.Batches == 0 {
		t.Errorf("A's log below the stop point changed: %v %v", kept, kept.Examples)
	}
}

// writeEach writes perPartition records to every partition of topic on s
// with an idempotent producer, tagged tag, and returns how many.
func writeEach(t *testing.T, p *pair, s *side, topic string, partitions int32, perPartition int, tag string) int {
	t.Helper()
	cl := s.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	var recs []*kgo.Record
	for i := range int(partitions) * perPartition {
		recs = append(recs, &kgo.Record{Partition: int32(i) % partitions, Value: recordValue(tag, i)})
	}
	if err := cl.ProduceSync(p.ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("%s: writing %s: %v", s.name, tag, err)
	}
	return len(recs)
}
