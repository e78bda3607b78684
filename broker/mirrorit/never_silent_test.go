package mirrorit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// Issue 5's "never silent": a mirror that cannot copy the source faithfully
// says so. A recreated source topic (another topic id under the same name)
// fails its partitions for good, naming the ids, and appends nothing of the
// new log; offsets the source deleted before they were mirrored are logged,
// counted in strait_mirror_offsets_skipped_total and shown by describe.

// TestMirrorSourceTopicRecreated mirrors two topics 1+1 to lag 0, then
// deletes one of them on the source and creates it again under the same
// name (a new topic id) with more records than the destination holds, so a
// mirror that went by name alone would append them silently. Every
// destination partition of that topic must become FAILED with a last error
// that names the topic and both ids, and stay FAILED (the failure is not
// retried); its log keeps exactly its batches (same end offsets, same
// bytes); and the other topic of the mirror keeps mirroring.
func TestMirrorSourceTopicRecreated(t *testing.T) {
	t.Parallel()
	p := newPair(t, 90*time.Second, startOne(t, "source"), startOne(t, "destination"))
	const recreated, steady, partitions, perPartition = "recreated", "steady", 2, 100
	p.src.createTopic(t, p.ctx, recreated, partitions)
	p.src.createTopic(t, p.ctx, steady, partitions)
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, recreated, part, 0, perPartition, 10, "old")
		produceBatches(t, p, p.src, steady, part, 0, perPartition, 10, "steady")
	}
	p.createMirror()
	p.start(recreated, steady)
	p.waitMirroring(recreated, partitions, 30*time.Second)
	p.waitMirroring(steady, partitions, 30*time.Second)
	p.checkIdentity(recreated, partitions*perPartition)

	oldID := storage.TopicID(topicMetadata(t, p.ctx, p.src, p.src.admin(t), recreated).ID)
	before := readTopic(t, p.ctx, p.dst, recreated)
	if storage.TopicID(before.id) != oldID {
		t.Fatalf("destination topic id %s, source %s", storage.TopicID(before.id), oldID)
	}
	beforeEnds := p.dst.endOffsets(t, p.ctx, recreated)

	recreateTopic(t, p, p.src, recreated, partitions)
	newID := storage.TopicID(topicMetadata(t, p.ctx, p.src, p.src.admin(t), recreated).ID)
	if newID == oldID {
		t.Fatalf("the recreated topic kept its id %s", oldID)
	}
	const newPerPartition = 150 // more than the destination holds
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, recreated, part, 0, newPerPartition, 10, "new")
	}
	p.logf("%s recreated on the source: id %s → %s, %d records per partition", recreated, oldID, newID, newPerPartition)

	// While the topic is gone the source says "not found" (a retriable
	// FAILED); once it exists again the ids disagree, for good.
	var td adminTopic
	p.waitFor(30*time.Second, recreated+": every partition FAILED, the source topic recreated", func() string {
		var err error
		if td, err = p.describe(recreated); err != nil {
			return err.Error()
		}
		if len(td.Partitions) != partitions {
			return fmt.Sprintf("%d partitions described:%s", len(td.Partitions), formatPartitions(td))
		}
		for _, pd := range td.Partitions {
			if pd.State != "FAILED" || !strings.Contains(pd.LastError, "source topic recreated") {
				return formatPartitions(td)
			}
		}
		return ""
	})
	p.logf("%s:%s", recreated, formatPartitions(td))
	checkRecreatedErrors(t, td, recreated, oldID, newID)

	// A non-retryable failure: still FAILED a while later, nothing appended.
	time.Sleep(time.Second)
	td, err := p.describe(recreated)
	if err != nil {
		t.Fatal(err)
	}
	for _, pd := range td.Partitions {
		if pd.State != "FAILED" {
			t.Errorf("p%d: %s a second after failing, want FAILED for good:%s", pd.Partition, pd.State, formatPartitions(td))
		}
	}
	checkRecreatedErrors(t, td, recreated, oldID, newID)
	afterEnds := p.dst.endOffsets(t, p.ctx, recreated)
	after := readTopic(t, p.ctx, p.dst, recreated)
	changed := 0
	for part := range int32(partitions) {
		if afterEnds[part] != beforeEnds[part] || afterEnds[part] != perPartition {
			t.Errorf("p%d: destination end offset %d, was %d (want %d)", part, afterEnds[part], beforeEnds[part], perPartition)
		}
		b, a := before.partitions[part], after.partitions[part]
		if len(a) != len(b) {
			t.Errorf("p%d: destination holds %d batches, held %d", part, len(a), len(b))
			changed++
			continue
		}
		for i := range b {
			if !bytes.Equal(a[i], b[i]) {
				t.Errorf("p%d: batch at offset %d changed", part, b[i].BaseOffset())
				changed++
			}
		}
	}
	if storage.TopicID(after.id) != oldID {
		t.Errorf("destination topic id %s, want the original %s", storage.TopicID(after.id), oldID)
	}

	// The other topic of the mirror is not affected.
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, steady, part, perPartition, perPartition, 10, "steady")
	}
	p.waitMirroring(steady, partitions, 30*time.Second)
	r := p.checkIdentity(steady, 2*partitions*perPartition)
	t.Logf("counts: %s FAILED partitions=%d changed batches=%d end offsets %v → %v; %s batches=%d records=%d mismatches=%d",
		recreated, len(td.Partitions), changed, beforeEnds, afterEnds, steady, r.Batches, r.Records, r.Mismatches)
}

// checkRecreatedErrors: every partition's last error is the topic id
// mismatch, naming the topic and both ids.
func checkRecreatedErrors(t *testing.T, td adminTopic, topic string, oldID, newID storage.TopicID) {
	t.Helper()
	for _, pd := range td.Partitions {
		for _, want := range []string{"source topic recreated", "topic " + topic + " has id " + newID.String() + " on the source",
			"the mirror topic has " + oldID.String()} {
			if !strings.Contains(pd.LastError, want) {
				t.Errorf("p%d: last error %q does not say %q", pd.Partition, pd.LastError, want)
			}
		}
	}
}

// TestMirrorOffsetsSkipped: with the mirror config
// mirror.offsets.skip.enable=true (issue 27 made FAILED the default, see
// TestMirrorRetentionSkipFails), the mirror skips what the source deleted,
// loudly. It mirrors a topic 1+1 to lag 0 (100 records a
// partition), pauses it, writes 100 more records a partition on the source
// and deletes the source's records below K (p0: K=155, inside a batch;
// p1: K=170, a batch boundary), both beyond the destination's log end
// (100). On resume each partition's fetch falls below the source's log
// start: the mirror must continue at K, describe must show exactly K-100
// offsets skipped per partition, the broker's
// strait_mirror_offsets_skipped_total exactly their sum, the broker log
// the skip, and the destination must hold exactly the source's batches
// from K on, byte for byte.
func TestMirrorOffsetsSkipped(t *testing.T) {
	t.Parallel()
	dst := startOne(t, "destination", brokertest.WithMetrics())
	p := newPair(t, 90*time.Second, startOne(t, "source"), dst)
	const topic, partitions, mirrored, perBatch = "expiring", 2, 100, 10
	deleteTo := map[int32]int64{0: 155, 1: 170}
	p.src.createTopic(t, p.ctx, topic, partitions)
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, topic, part, 0, mirrored, perBatch, "before")
	}
	p.createMirror("mirror.offsets.skip.enable=true")
	p.start(topic)
	p.waitMirroring(topic, partitions, 30*time.Second)
	if got := int64(mirrorMetrics(t, p.ctx, dst.one.MetricsAddr())["strait_mirror_offsets_skipped_total"]); got != 0 {
		t.Fatalf("offsets skipped before anything was deleted: metric %d", got)
	}

	p.pause(topic)
	p.waitState(topic, "PAUSED", partitions, 30*time.Second)
	destEnds := p.dst.endOffsets(t, p.ctx, topic)
	for part := range int32(partitions) {
		if destEnds[part] != mirrored {
			t.Fatalf("p%d: destination end offset %d when paused, want %d", part, destEnds[part], mirrored)
		}
		produceBatches(t, p, p.src, topic, part, mirrored, 100, perBatch, "after")
	}
	var os kadm.Offsets
	for part, k := range deleteTo {
		os.Add(kadm.Offset{Topic: topic, Partition: part, At: k, LeaderEpoch: -1})
	}
	dr, err := p.src.admin(t).DeleteRecords(p.ctx, os)
	if err == nil {
		err = dr.Error()
	}
	if err != nil {
		t.Fatalf("delete records on the source: %v", err)
	}
	dr.Each(func(r kadm.DeleteRecordsResponse) {
		if r.LowWatermark != deleteTo[r.Partition] {
			t.Fatalf("p%d: source log start %d after DeleteRecords, want %d", r.Partition, r.LowWatermark, deleteTo[r.Partition])
		}
	})
	p.logf("source log start offsets now %v; destination end offsets %v", deleteTo, destEnds)

	p.resume(topic)
	p.waitMirroring(topic, partitions, 30*time.Second)
	td, err := p.describe(topic)
	if err != nil {
		t.Fatal(err)
	}
	var wantTotal int64
	for _, pd := range td.Partitions {
		want := deleteTo[pd.Partition] - destEnds[pd.Partition]
		wantTotal += want
		if pd.OffsetsSkipped != want {
			t.Errorf("p%d: describe shows %d offsets skipped, want %d (source log start %d - destination end %d)",
				pd.Partition, pd.OffsetsSkipped, want, deleteTo[pd.Partition], destEnds[pd.Partition])
		}
		if pd.State != "MIRRORING" || pd.LastError != "" {
			t.Errorf("p%d: %s, last error %q after the skip; want MIRRORING without error", pd.Partition, pd.State, pd.LastError)
		}
	}
	metric := int64(mirrorMetrics(t, p.ctx, dst.one.MetricsAddr())["strait_mirror_offsets_skipped_total"])
	if metric != wantTotal {
		t.Errorf("strait_mirror_offsets_skipped_total{mirror=%q} = %d, want %d", mirrorName, metric, wantTotal)
	}
	logs := dst.one.Logs()
	for part, k := range deleteTo {
		if !logsSkip(logs, topic, part, destEnds[part], k) {
			t.Errorf("p%d: no log line says offsets %d..%d were skipped", part, destEnds[part], k)
		}
	}

	// The destination holds exactly the source's batches from K on: the
	// batch holding K (p0's starts at 150), then every later one.
	sl := readTopic(t, p.ctx, p.src, topic)
	dl := readTopic(t, p.ctx, p.dst, topic)
	r := &Report{Topic: topic, Partitions: partitions, SameTopicID: sl.id == dl.id, SourcePartitions: len(sl.partitions),
		DestinationPartitions: len(dl.partitions)}
	for part := range int32(partitions) {
		src, dstb := sl.partitions[part], dl.partitions[part]
		if len(src) == 0 || src[0].BaseOffset() > deleteTo[part] || src[0].NextOffset() <= deleteTo[part] {
			t.Fatalf("p%d: the source's first batch does not hold its log start %d", part, deleteTo[part])
		}
		if len(dstb) > 0 && dstb[0].BaseOffset() < src[0].BaseOffset() {
			t.Errorf("p%d: destination still holds offset %d, below the source's first batch at %d", part, dstb[0].BaseOffset(), src[0].BaseOffset())
		}
		if ls := dl.logStart[part]; ls < src[0].BaseOffset() || ls > deleteTo[part] {
			t.Errorf("p%d: destination log start %d, want within [%d, %d]", part, ls, src[0].BaseOffset(), deleteTo[part])
		}
		r.ComparePartition(part, src, dstb)
	}
	p.logf("from K on: %v; source log start %v, destination log start %v; skipped %d (metric %d)",
		r, sl.logStart, dl.logStart, wantTotal, metric)
	wantRecords := int64(0)
	for _, k := range deleteTo {
		wantRecords += 2*mirrored - k
	}
	assertIdentical(t, r, wantRecords)
}

// produceBatches writes count records to topic's partition part of s in
// raw batches of perBatch records (a plain producer, acks=all), so batch
// boundaries are known: offsets from, from+perBatch, ... The test fails
// unless each batch lands where expected.
func produceBatches(t *testing.T, p *pair, s *side, topic string, part int32, from int64, count, perBatch int, tag string) {
	t.Helper()
	cl := s.client(t)
	for i := 0; i < count; i += perBatch {
		var recs []record.Record
		for j := i; j < min(i+perBatch, count); j++ {
			v := recordValue(tag, int(from)+j)
			recs = append(recs, record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v)), OffsetDelta: int32(j - i)})
		}
		b, err := record.Build(record.BatchSpec{ProducerID: record.NoProducerID, ProducerEpoch: -1, BaseSequence: record.NoSequence,
			BaseTimestamp: time.Now().UnixMilli()}, recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		req := produceRequest(topic, part, -1, 10_000, b)
		var off int64
		for attempt := 0; ; attempt++ {
			off, err = produceRaw(p.ctx, cl, s.leader(topic, part), req)
			// A topic just created may not be known to the client yet.
			if err == nil || attempt == 50 || !isRetriableProduce(err) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("%s: produce to %s/%d: %v", s.name, topic, part, err)
		}
		if want := from + int64(i); off != want {
			t.Fatalf("%s: batch for %s/%d stored at offset %d, want %d", s.name, topic, part, off, want)
		}
	}
}

func isRetriableProduce(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke) && ke.Retriable
}

// recreateTopic deletes topic on s and creates it again under the same
// name, retrying while the deletion is in progress.
func recreateTopic(t *testing.T, p *pair, s *side, topic string, partitions int32) {
	t.Helper()
	adm := s.admin(t)
	resp, err := adm.DeleteTopics(p.ctx, topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("%s: delete %s: %v", s.name, topic, err)
	}
	p.waitFor(20*time.Second, topic+" created again", func() string {
		cr, err := adm.CreateTopic(p.ctx, partitions, -1, nil, topic)
		if err == nil {
			err = cr.Err
		}
		if err != nil {
			return err.Error()
		}
		return ""
	})
	topicMetadata(t, p.ctx, s, adm, topic) // every partition has a leader
}

// logsSkip reports whether a broker log line says the mirror skipped the
// offsets from..to of topic's partition part.
func logsSkip(logs, topic string, part int32, from, to int64) bool {
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "skipp") && strings.Contains(line, fmt.Sprintf("%s-%d", topic, part)) &&
			strings.Contains(line, fmt.Sprintf("from=%d ", from)) && strings.Contains(line, fmt.Sprintf("to=%d", to)) {
			return true
		}
	}
	return false
}
