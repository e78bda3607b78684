package mirrorit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/storage/record"
)

// TestMirrorFailover stops a mirror topic while producers write to the
// source (the failover cut-over):
//   - every partition becomes STOPPED;
//   - below the MIRROR_PID_RESET barrier the destination is identical to
//     the source, and each partition holds exactly one barrier;
//   - the destination's leader epoch, the barrier's and every later
//     batch's are higher than any mirrored batch's;
//   - an idempotent producer on the destination writes at once with no
//     sequence or epoch error (the destination's producer ids may equal
//     mirrored ones: the barrier expired their state);
//   - a consumer group that committed on the destination while mirroring
//     continues there from its committed offsets, without a gap;
//   - every destination replica of each partition (3+3: all three, not
//     only the leader) holds the same bytes up to the high watermark,
//     barrier included: the STOPPING leader appended it with acks from
//     the ISR, and the mirrored prefix reached the followers through
//     ordinary replication.
func TestMirrorFailover(t *testing.T) {
	t.Parallel()
	testMirrorFailover(t, oneAndOne)
}

// TestMirrorFailover3x3 is TestMirrorFailover between three-node clusters
// (replication factor 3).
// It is not parallel (see threeAndThree).
func TestMirrorFailover3x3(t *testing.T) {
	testMirrorFailover(t, threeAndThree)
}

func testMirrorFailover(t *testing.T, sh shape) {
	p := newPair(t, 3*time.Minute, sh.start(t, "source"), sh.start(t, "destination"))
	const topic, partitions, group = "fo", 2, "fo-group"
	p.src.createTopic(t, p.ctx, topic, partitions)
	p.createMirror()
	p.start(topic)
	prod := produceInBackground(t, p.ctx, p.src, topic, partitions, producerKinds()[1], "fo")
	p.waitFor(30*time.Second, "the destination copies", func() string {
		if n := sum(p.dst.endOffsets(t, p.ctx, topic)); n < 400 {
			return fmt.Sprintf("destination holds %d records", n)
		}
		return ""
	})

	// A consumer group on the destination reads some records and commits.
	committed := consumeAndCommit(t, p, topic, group, partitions, 200)
	p.logf("group %s committed %v on the mirror topic", group, committed)

	p.stop(topic)
	stopped := p.waitState(topic, "STOPPED", partitions, 30*time.Second)
	srcAcked := prod.stop() // the source kept taking writes during the stop

	// An idempotent producer on the destination, at once.
	const local = 300
	dprod := p.dst.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(0))
	localAcked := map[string]position{}
	var localErrs []error
	for i := range local {
		r := &kgo.Record{Partition: int32(i % partitions), Value: recordValue("local", i)}
		if err := dprod.ProduceSync(p.ctx, r).FirstErr(); err != nil {
			localErrs = append(localErrs, err)
			continue
		}
		localAcked[string(r.Value)] = position{r.Partition, r.Offset}
	}
	for i, err := range localErrs {
		if i < maxExamples {
			t.Errorf("idempotent produce on the stopped topic: %v", err)
		}
	}

	src := readTopic(t, p.ctx, p.src, topic)
	dst := readTopic(t, p.ctx, p.dst, topic)
	dec := record.NewDecompressor()
	md, err := p.dst.admin(t).Metadata(p.ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	mirrored := &topicLog{id: dst.id, partitions: map[int32][]record.Batch{}, hw: dst.hw, logStart: dst.logStart}
	var resets, epochErrors int
	for part := range int32(partitions) {
		if rf := len(md.Topics[topic].Partitions[part].Replicas); rf != sh.nodes {
			t.Errorf("p%d: %d destination replicas, want %d", part, rf, sh.nodes)
		}
		bs := dst.partitions[part]
		at := -1
		for i, b := range bs {
			if dec.IsMirrorPidReset(b) {
				resets++
				if at < 0 {
					at = i
				}
			}
		}
		if at < 0 {
			t.Errorf("p%d: no MIRROR_PID_RESET control batch among %d batches", part, len(bs))
			continue
		}
		mirrored.partitions[part] = bs[:at]
		maxMirrored := int32(-1)
		for _, b := range bs[:at] {
			maxMirrored = max(maxMirrored, b.PartitionLeaderEpoch())
		}
		for _, b := range bs[at:] {
			if b.PartitionLeaderEpoch() <= maxMirrored {
				epochErrors++
				t.Errorf("p%d: batch at %d after the barrier has epoch %d, a mirrored batch had %d", part, b.BaseOffset(), b.PartitionLeaderEpoch(), maxMirrored)
			}
		}
		leaderEpoch := md.Topics[topic].Partitions[part].LeaderEpoch
		if leaderEpoch <= maxMirrored {
			epochErrors++
			t.Errorf("p%d: destination leader epoch %d, not above the mirrored batches' %d", part, leaderEpoch, maxMirrored)
		}
		// The stop recorded the LME a failback truncates after: the epoch
		// of the last mirrored batch (−1 would make a failback copy all).
		if lme := stopped.Partitions[part].LastMirrorEpoch; lme != maxMirrored {
			epochErrors++
			t.Errorf("p%d: STOPPED with last mirrored epoch %d, want %d (the last mirrored batch's)", part, lme, maxMirrored)
		}
		t.Logf("p%d: %d mirrored batches (max epoch %d) up to offset %d, barrier at %d (epoch %d), leader epoch %d, %d batches after",
			part, at, maxMirrored, bs[at].BaseOffset(), bs[at].BaseOffset(), bs[at].PartitionLeaderEpoch(), leaderEpoch, len(bs)-at-1)
	}
	if resets != partitions {
		t.Errorf("%d MIRROR_PID_RESET batches, want exactly %d (one per partition)", resets, partitions)
	}

	// Below the barrier the destination is the source's prefix.
	prefix := compareLogs(topic, src, mirrored)
	prefix.Extra = 0 // the source went on after the stop
	prefixExtra := 0
	for part := range int32(partitions) {
		for _, b := range src.partitions[part] {
			if bs := mirrored.partitions[part]; len(bs) > 0 && b.BaseOffset() >= bs[len(bs)-1].NextOffset() {
				prefix.Missing-- // written to the source after the stop point: not expected on the destination
				prefixExtra++
			}
		}
	}
	t.Logf("mirrored prefix: %v (%d source batches beyond the stop point)", prefix, prefixExtra)
	if prefix.Mismatches != 0 || prefix.Missing != 0 || prefix.Batches == 0 || !prefix.SameTopicID {
		t.Errorf("mirrored prefix differs from the source: %v %v", prefix, prefix.Examples)
	}

	// The group continues where it committed.
	resumed := consumeFrom(t, p, topic, group, dst.hw)
	gaps := 0
	for part := range int32(partitions) {
		if got := resumed[part]; len(got) == 0 || got[0] != committed[part] {
			gaps++
			t.Errorf("p%d: the group resumed at %v, committed %d", part, first(got), committed[part])
			continue
		}
		for i := 1; i < len(resumed[part]); i++ {
			if resumed[part][i] <= resumed[part][i-1] {
				gaps++
				t.Errorf("p%d: offsets go back: %d after %d", part, resumed[part][i], resumed[part][i-1])
				break
			}
		}
	}
	a := auditLedger(localAcked, storedValues(t, dst))
	reps := checkReplicas(t, p.dst, topic, dst, sh.nodes, 30*time.Second)
	t.Logf("counts (%s): source acked=%d; local produced=%d errors=%d %v; barriers=%d epoch errors=%d; group resumed at %v gaps=%d; destination replicas: %v",
		sh.name, len(srcAcked), len(localAcked), len(localErrs), a, resets, epochErrors, firsts(resumed), gaps, reps)
	assertReplicas(t, "destination", reps, partitions, sh.nodes, partitions*sh.nodes)
	if len(localErrs) != 0 || len(localAcked) != local {
		t.Fatalf("idempotent producer on the destination: %d of %d acknowledged, %d errors", len(localAcked), local, len(localErrs))
	}
	assertLedger(t, "local producer", a)
}

// consumeAndCommit reads at least n records of topic on the destination in
// group, some from each of its partitions, and commits what it read; it
// returns the committed offsets. (On three nodes the partitions' leaders
// differ and answer separately: n records may all come from one.)
func consumeAndCommit(t *testing.T, p *pair, topic, group string, partitions, n int) map[int32]int64 {
	t.Helper()
	cl := p.dst.client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	read := 0
	perPartition := map[int32]int{}
	for read < n || len(perPartition) < partitions {
		fs := cl.PollFetches(p.ctx)
		if p.ctx.Err() != nil {
			t.Fatalf("group %s read %d of %d records (per partition %v): %v", group, read, n, perPartition, p.ctx.Err())
		}
		fs.EachError(func(_ string, part int32, err error) { t.Logf("group fetch p%d: %v", part, err) })
		fs.EachRecord(func(r *kgo.Record) { perPartition[r.Partition]++ })
		read += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(p.ctx); err != nil {
		t.Fatalf("group %s commit on a mirror topic: %v", group, err)
	}
	offs, err := kadm.NewClient(p.dst.client(t)).FetchOffsets(p.ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			out[o.Partition] = o.At
		}
	})
	return out
}

// consumeFrom reads topic in group from its committed offsets until ends,
// and returns the offsets read per partition.
func consumeFrom(t *testing.T, p *pair, topic, group string, ends map[int32]int64) map[int32][]int64 {
	t.Helper()
	cl := p.dst.client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	out := map[int32][]int64{}
	next := map[int32]int64{}
	done := func() bool {
		for part, end := range ends {
			if next[part] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Errorf("group %s read up to %v of %v: %v", group, next, ends, ctx.Err())
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], r.Offset)
			next[r.Partition] = r.Offset + 1
		})
	}
	return out
}

func first(offs []int64) any {
	if len(offs) == 0 {
		return "nothing"
	}
	return offs[0]
}

func firsts(m map[int32][]int64) map[int32]any {
	out := map[int32]any{}
	for p, o := range m {
		out[p] = first(o)
	}
	return out
}
