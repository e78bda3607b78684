package mirrorit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/storage/record"
)

// TestMirrorStopAbortsOpenTransactions: franz-go's kfake as the source, a
// Strait node as the destination. The source holds committed and aborted transactions, one
// transaction (over both partitions) that is still open when the mirror
// stops, and committed transactions and plain records written after that
// one began. After the stop (failover):
//   - nothing mirrored is gone: below the stop offset the destination is
//     byte-identical to the source; after it come only the stop's ABORT
//     marker for the open transaction and MIRROR_PID_RESET;
//   - the destination's last stable offset is its log end (a
//     read_committed consumer is not stuck behind the open transaction);
//   - a read_committed consumer on the destination sees exactly what one
//     on the source sees below the stop offset, once the source's own
//     coordinator has aborted the open transaction: lost = 0, records of
//     aborted (or never committed) transactions visible = 0, duplicates = 0.
//
// Truncating to the last stable offset (what the stop did before) loses
// the records committed after the open transaction began.
func TestMirrorStopAbortsOpenTransactions(t *testing.T) {
	t.Parallel()
	testMirrorStopAbortsOpenTransactions(t, oneAndOne)
}

// TestMirrorStopAbortsOpenTransactions3 is the same with a three-node
// destination (replication factor 3, min.insync.replicas 2): the ABORT
// markers are acknowledged by the ISR and every replica holds them. Not
// parallel (see threeAndThree).
func TestMirrorStopAbortsOpenTransactions3(t *testing.T) {
	testMirrorStopAbortsOpenTransactions(t, threeAndThree)
}

// TestMirrorStopAbortsOpenTransactionsStraitSource is the same with a
// Strait source: its transactions come from its own transaction
// coordinator (markers with its coordinator epoch, __transaction_state),
// and the destination's read_committed view equals the source's.
func TestMirrorStopAbortsOpenTransactionsStraitSource(t *testing.T) {
	t.Parallel()
	testMirrorStopAbortsOpenTransactionsFrom(t, oneAndOne, oneAndOne.start(t, "source"))
}

func testMirrorStopAbortsOpenTransactions(t *testing.T, sh shape) {
	testMirrorStopAbortsOpenTransactionsFrom(t, sh, startFake(t, "kfake", 1))
}

func testMirrorStopAbortsOpenTransactionsFrom(t *testing.T, sh shape, source *side) {
	p := newPair(t, 2*time.Minute, source, sh.start(t, "destination"))
	const topic, partitions = "txns", 2
	p.src.createTopic(t, p.ctx, topic, partitions)
	p.createMirror()
	p.start(topic)

	w := &txnWorkload{t: t, ctx: p.ctx, src: p.src, topic: topic, partitions: partitions, committed: map[int32][]string{}}
	w.plain("plain-before", 20)
	for i := range 3 {
		w.txn(fmt.Sprintf("committed-%d", i), 10, kgo.TryCommit)
	}
	for i := range 2 {
		w.txn(fmt.Sprintf("aborted-%d", i), 10, kgo.TryAbort)
	}
	open := w.txn("open", 5) // never ended before the stop
	for i := range 2 {
		w.txn(fmt.Sprintf("committed-after-%d", i), 10, kgo.TryCommit)
	}
	w.txn("aborted-after", 10, kgo.TryAbort)
	w.plain("plain-after", 20)

	p.waitMirroring(topic, partitions, time.Minute)
	stopAt := p.src.endOffsets(t, p.ctx, topic) // the destination has all of it
	src := readTopic(t, p.ctx, p.src, topic)
	p.stop(topic)
	stopped := p.waitState(topic, "STOPPED", partitions, 30*time.Second)

	// The destination's log: the source's up to the stop offset, then the
	// stop's own batches at a higher epoch.
	dst := readTopic(t, p.ctx, p.dst, topic)
	mirrored := &topicLog{id: dst.id, partitions: map[int32][]record.Batch{}, hw: dst.hw, logStart: dst.logStart}
	dec := record.NewDecompressor()
	var lmeErrors, stopBatchErrors int
	for part := range int32(partitions) {
		bs := dst.partitions[part]
		at := slices.IndexFunc(bs, func(b record.Batch) bool { return b.BaseOffset() >= stopAt[part] })
		if at < 0 {
			at = len(bs)
		}
		mirrored.partitions[part] = bs[:at]
		lme := src.partitions[part][len(src.partitions[part])-1].PartitionLeaderEpoch()
		if got := stopped.Partitions[part].LastMirrorEpoch; got != lme {
			lmeErrors++
			t.Errorf("p%d: STOPPED with last mirrored epoch %d, want %d (the last mirrored batch's)", part, got, lme)
		}
		// One ABORT marker (the open transaction's producer), then the
		// PID reset, both above the mirrored epochs.
		stop := bs[at:]
		if len(stop) != 2 || !stop[0].IsControl() || !stop[0].IsTransactional() || stop[0].ProducerID() < 0 ||
			!dec.IsMirrorPidReset(stop[1]) || stop[0].PartitionLeaderEpoch() <= lme || stop[1].PartitionLeaderEpoch() <= lme {
			stopBatchErrors++
			for _, b := range stop {
				t.Errorf("p%d: after the stop offset %d: batch at %d, epoch %d, control %v, transactional %v, pid %d", part,
					stopAt[part], b.BaseOffset(), b.PartitionLeaderEpoch(), b.IsControl(), b.IsTransactional(), b.ProducerID())
			}
		}
	}
	prefix := compareLogs(topic, src, mirrored)
	t.Logf("mirrored prefix: %v", prefix)
	for _, e := range prefix.Examples {
		t.Error(e)
	}
	if !prefix.OK() || prefix.Records < int64(w.total) {
		t.Errorf("the destination below the stop offsets is not the source's: %v", prefix)
	}

	reps := checkReplicas(t, p.dst, topic, dst, sh.nodes, 30*time.Second)
	t.Logf("destination replicas: %v", reps)
	assertReplicas(t, "destination", reps, partitions, sh.nodes, partitions*sh.nodes)

	// Not stuck: the last stable offset is the log end.
	lso := listCommitted(t, p.ctx, p.dst, topic)
	hw := p.dst.endOffsets(t, p.ctx, topic)
	td, err := p.describe(topic)
	if err != nil {
		t.Fatal(err)
	}
	stuck := 0
	for _, pd := range td.Partitions {
		if lso[pd.Partition] != hw[pd.Partition] || hw[pd.Partition] != pd.DestinationLogEndOffset {
			stuck++
			t.Errorf("p%d: destination LSO %d, HW %d, LEO %d; want them equal", pd.Partition, lso[pd.Partition], hw[pd.Partition],
				pd.DestinationLogEndOffset)
		}
	}

	// The source's coordinator aborts the open transaction after the stop
	// point; a last plain record on each side ends the reads.
	if err := open.EndTransaction(p.ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	srcView := readCommittedUntil(t, p.ctx, p.src, topic, partitions, "end-of-source")
	dstView := readCommittedUntil(t, p.ctx, p.dst, topic, partitions, "end-of-destination")
	var lost, abortedVisible, duplicates, differ int
	for part := range int32(partitions) {
		sv := slices.DeleteFunc(srcView[part], func(r committedRecord) bool { return r.offset >= stopAt[part] })
		dv := dstView[part]
		seen := map[string]int{}
		for _, r := range dv {
			if seen[r.value]++; seen[r.value] == 2 {
				duplicates++
			}
			if strings.HasPrefix(r.value, "aborted") || strings.HasPrefix(r.value, "open") {
				abortedVisible++
			}
		}
		for _, v := range w.committed[part] {
			if seen[v] == 0 {
				lost++
			}
		}
		if !slices.Equal(sv, dv) || len(dv) != len(w.committed[part]) {
			differ++
			t.Errorf("p%d: read_committed on the destination (%d records) differs from the source's (%d) below %d; %d committed",
				part, len(dv), len(sv), stopAt[part], len(w.committed[part]))
		}
	}
	t.Logf("counts: produced=%d committed=%d; lost=%d aborted-visible=%d duplicates=%d views-differ=%d stuck=%d; mirrored batches missing=%d differing=%d; lme-errors=%d stop-batch-errors=%d",
		w.total, w.committedCount(), lost, abortedVisible, duplicates, differ, stuck, prefix.Missing, prefix.Mismatches, lmeErrors, stopBatchErrors)
	if lost != 0 || abortedVisible != 0 || duplicates != 0 || differ != 0 || stuck != 0 {
		t.Fatalf("lost=%d aborted-visible=%d duplicates=%d views-differ=%d stuck=%d; want all 0", lost, abortedVisible, duplicates, differ, stuck)
	}
}

// txnWorkload writes to every partition of the source and keeps the
// records a read_committed consumer must see, per partition, in order.
type txnWorkload struct {
	t          *testing.T
	ctx        context.Context
	src        *side
	topic      string
	partitions int32
	committed  map[int32][]string
	total      int
}

func (w *txnWorkload) committedCount() int {
	n := 0
	for _, vs := range w.committed {
		n += len(vs)
	}
	return n
}

// produce writes n records "<tag>-<partition>-<i>" to each partition with
// cl and returns their values per partition.
func (w *txnWorkload) produce(cl *kgo.Client, tag string, n int) map[int32][]string {
	w.t.Helper()
	out := map[int32][]string{}
	for part := range w.partitions {
		var recs []*kgo.Record
		for i := range n {
			v := fmt.Sprintf("%s-%d-%d", tag, part, i)
			recs = append(recs, &kgo.Record{Partition: part, Value: []byte(v)})
			out[part] = append(out[part], v)
		}
		if err := cl.ProduceSync(w.ctx, recs...).FirstErr(); err != nil {
			w.t.Fatalf("produce %s: %v", tag, err)
		}
		w.total += n
	}
	return out
}

// plain writes n non-transactional records per partition.
func (w *txnWorkload) plain(tag string, n int) {
	w.t.Helper()
	cl := w.src.client(w.t, kgo.DefaultProduceTopic(w.topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for part, vs := range w.produce(cl, tag, n) {
		w.committed[part] = append(w.committed[part], vs...)
	}
}

// txn writes n records per partition in one transaction of a producer of
// its own and ends it with end, or leaves it open (and returns the
// producer) when end is not given.
func (w *txnWorkload) txn(tag string, n int, end ...kgo.TransactionEndTry) *kgo.Client {
	w.t.Helper()
	cl := w.src.client(w.t, kgo.DefaultProduceTopic(w.topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID("txn-"+tag))
	if err := cl.BeginTransaction(); err != nil {
		w.t.Fatal(err)
	}
	vs := w.produce(cl, tag, n)
	for _, how := range end {
		if err := cl.EndTransaction(w.ctx, how); err != nil {
			w.t.Fatalf("end %s: %v", tag, err)
		}
		if how == kgo.TryCommit {
			for part := range w.partitions {
				w.committed[part] = append(w.committed[part], vs[part]...)
			}
		}
	}
	return cl
}

// listCommitted is ListOffsets with read_committed: each partition's last
// stable offset.
func listCommitted(t *testing.T, ctx context.Context, s *side, topic string) map[int32]int64 {
	t.Helper()
	l, err := s.admin(t).ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = l.Error()
	}
	if err != nil {
		t.Fatalf("%s: committed offsets of %s: %v", s.name, topic, err)
	}
	out := map[int32]int64{}
	l.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

type committedRecord struct {
	offset int64
	value  string
}

// readCommittedUntil appends a plain record named end to every partition
// of topic on s, then reads every partition from its start with a
// read_committed consumer until that record: what the consumer sees before
// it, per partition. A last stable offset stuck below the end record
// leaves the read waiting until the test's deadline.
func readCommittedUntil(t *testing.T, ctx context.Context, s *side, topic string, partitions int32, end string) map[int32][]committedRecord {
	t.Helper()
	prod := s.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for part := range partitions {
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: part, Value: []byte(end)}).FirstErr(); err != nil {
			t.Fatalf("%s: produce %s: %v", s.name, end, err)
		}
	}
	parts := map[int32]kgo.Offset{}
	for part := range partitions {
		parts[part] = kgo.NewOffset().AtStart()
	}
	cl := s.client(t, kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out := map[int32][]committedRecord{}
	done := map[int32]bool{}
	for len(done) < int(partitions) {
		fs := cl.PollFetches(rctx)
		if rctx.Err() != nil {
			t.Fatalf("%s: read_committed did not reach %q in every partition (done %v): stuck", s.name, end, done)
		}
		fs.EachError(func(_ string, part int32, err error) { t.Logf("%s: read_committed fetch p%d: %v", s.name, part, err) })
		fs.EachRecord(func(r *kgo.Record) {
			switch {
			case done[r.Partition]:
			case string(r.Value) == end:
				done[r.Partition] = true
			default:
				out[r.Partition] = append(out[r.Partition], committedRecord{r.Offset, string(r.Value)})
			}
		})
	}
	return out
}
