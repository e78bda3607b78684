package mirrorit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/admin/cli"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestMirrorStopAllSourceKilled: the promotion barrier of issue 27 with a
// source that dies mid-stream. Idempotent producers write to two topics
// of the source, and a transactional producer leaves one transaction open;
// the whole source cluster is killed while they write; `strait mirror
// stop --all --json` on the destination must then:
//   - reach the barrier and stop every partition (exit 0), reporting per
//     partition the barrier offset, a lag abandoned that is unknown (-1:
//     the source cannot be measured, never 0), and LSO = HW;
//   - leave the destination writable at once, for an idempotent and a
//     transactional producer;
//   - leave no read_committed consumer stuck (the open transaction is
//     aborted), with no record of an aborted or open transaction visible;
//   - lose nothing below the barrier: every record the source acknowledged
//     at an offset below its partition's barrier is on the destination,
//     once, at the same offset (lost 0, duplicates 0, offsets differing 0).
//
// The stop before issue 27 had no --all and no report (exit 2 here).
func TestMirrorStopAllSourceKilled(t *testing.T) {
	t.Parallel()
	testMirrorStopAllSourceKilled(t, oneAndOne)
}

// TestMirrorStopAllSourceKilled3x3 is the 3+3-node kill test. Not
// parallel (see threeAndThree).
func TestMirrorStopAllSourceKilled3x3(t *testing.T) {
	testMirrorStopAllSourceKilled(t, threeAndThree)
}

func testMirrorStopAllSourceKilled(t *testing.T, sh shape) {
	p := newPair(t, 3*time.Minute, sh.start(t, "source"), sh.start(t, "destination"))
	const partitions = 2
	topics := []string{"barrier-a", "barrier-b"}
	for _, topic := range topics {
		p.src.createTopic(t, p.ctx, topic, partitions)
	}
	p.createMirror()
	p.start(topics...)
	for _, topic := range topics {
		p.waitMirroring(topic, partitions, time.Minute)
	}

	// Transactions on barrier-a: committed, aborted, and one left open.
	w := &txnWorkload{t: t, ctx: p.ctx, src: p.src, topic: topics[0], partitions: partitions, committed: map[int32][]string{}}
	w.txn("committed-0", 5, kgo.TryCommit)
	w.txn("aborted-0", 5, kgo.TryAbort)
	w.txn("open", 5)
	w.txn("committed-1", 5, kgo.TryCommit)
	txnEnds := p.src.endOffsets(t, p.ctx, topics[0])
	// Idempotent producers on both topics, killed mid-stream. A short
	// delivery timeout: the records in flight when the source dies fail
	// (not acknowledged, allowed) instead of holding the test a minute.
	idem := producerKind{"idempotent", []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(3 * time.Second)}}
	var prods []*background
	for _, topic := range topics {
		prods = append(prods, produceInBackground(t, p.ctx, p.src, topic, partitions, idem, "idem-"+topic))
	}
	// The open transaction is mirrored before the source dies, so the
	// barrier has a transaction to abort.
	p.waitFor(time.Minute, "the transactions mirrored", func() string {
		dst := p.dst.endOffsets(t, p.ctx, topics[0])
		for part, end := range txnEnds {
			if dst[part] < end {
				return fmt.Sprintf("destination %v, want at least %v", dst, txnEnds)
			}
		}
		return ""
	})
	for _, b := range prods {
		p.waitFor(30*time.Second, "the idempotent producers running", func() string {
			if b.count() < 200 {
				return fmt.Sprintf("%d acknowledged", b.count())
			}
			return ""
		})
	}

	p.logf("killing the source cluster")
	if p.src.one != nil {
		p.src.one.Crash(t)
	} else {
		for _, id := range p.src.many.Running() {
			p.src.many.Kill(t, id)
		}
	}
	acked := map[string]map[string]position{}
	for i, b := range prods {
		acked[topics[i]] = b.snapshot()
	}

	var out, errb bytes.Buffer
	code := cli.Main(p.ctx, []string{"--bootstrap-server", strings.Join(p.dst.seeds(), ","), "--timeout", "90s",
		"stop", mirrorName, "--all", "--json"}, &out, &errb)
	p.logf("stop --all: exit %d\n%s%s", code, out.String(), errb.String())
	if code != 0 {
		t.Fatalf("stop --all: exit %d: %s", code, errb.String())
	}
	var rep cli.StopReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("stop --all --json: %v\n%s", err, out.String())
	}
	barrier := map[string]map[int32]int64{}
	reportErrors := 0
	for _, pr := range rep.Partitions {
		if barrier[pr.Topic] == nil {
			barrier[pr.Topic] = map[int32]int64{}
		}
		barrier[pr.Topic][pr.Partition] = pr.Barrier
		if pr.State != "STOPPED" || pr.Barrier < 0 || pr.LastStableOffset != pr.DestinationHighWatermark ||
			pr.DestinationHighWatermark <= pr.Barrier || pr.LagRecords != -1 || pr.LagMs != -1 {
			reportErrors++
			t.Errorf("report %+v: want STOPPED, a barrier, LSO = HW past the barrier (the stop's markers), lag abandoned unknown", pr)
		}
	}
	if !rep.BarrierReached || !rep.Stopped || len(rep.Partitions) != len(topics)*partitions {
		t.Fatalf("report: barrier reached %v, stopped %v, %d partitions", rep.BarrierReached, rep.Stopped, len(rep.Partitions))
	}

	// Writable at once, for idempotent and transactional producers.
	for _, topic := range topics {
		idemProd := p.dst.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		txnProd := p.dst.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.TransactionalID("after-"+topic))
		if err := txnProd.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for part := range int32(partitions) {
			if err := idemProd.ProduceSync(p.ctx, &kgo.Record{Partition: part, Value: []byte("after-idem")}).FirstErr(); err != nil {
				t.Fatalf("%s/%d: idempotent produce after the stop: %v", topic, part, err)
			}
			if err := txnProd.ProduceSync(p.ctx, &kgo.Record{Partition: part, Value: []byte("after-txn")}).FirstErr(); err != nil {
				t.Fatalf("%s/%d: transactional produce after the stop: %v", topic, part, err)
			}
		}
		if err := txnProd.EndTransaction(p.ctx, kgo.TryCommit); err != nil {
			t.Fatalf("%s: commit after the stop: %v", topic, err)
		}
	}

	// Counted below the barrier.
	var lost, duplicates, differ, abortedVisible, txnLost int
	for i, topic := range topics {
		view := readCommittedUntil(t, p.ctx, p.dst, topic, partitions, "end-of-"+topic)
		stored := storedValues(t, readTopic(t, p.ctx, p.dst, topic))
		below := map[string]position{}
		for v, pos := range acked[topic] {
			if pos.offset < barrier[topic][pos.partition] {
				below[v] = pos
			}
		}
		a := auditLedger(below, stored)
		for _, e := range a.examples {
			t.Error(e)
		}
		lost, duplicates, differ = lost+a.lost, duplicates+a.duplicates, differ+a.misplaced
		seen := map[string]int{}
		for _, rs := range view {
			for _, r := range rs {
				seen[r.value]++
				if strings.HasPrefix(r.value, "aborted") || strings.HasPrefix(r.value, "open") {
					abortedVisible++
				}
				if seen[r.value] == 2 && !strings.HasPrefix(r.value, "after-") {
					duplicates++
				}
			}
		}
		if i == 0 {
			for _, vs := range w.committed {
				for _, v := range vs {
					if seen[v] != 1 {
						txnLost++
					}
				}
			}
		}
		p.logf("%s: %d acknowledged by the source, %d below the barrier %v; %v", topic, len(acked[topic]), len(below), barrier[topic], a)
	}
	t.Logf("counts: lost=%d duplicates=%d offsets-differ=%d aborted-visible=%d committed-txn-records-missing=%d report-errors=%d",
		lost, duplicates, differ, abortedVisible, txnLost, reportErrors)
	if lost != 0 || duplicates != 0 || differ != 0 || abortedVisible != 0 || txnLost != 0 {
		t.Fatalf("want lost=0 duplicates=0 offsets-differ=0 aborted-visible=0 committed-txn-records-missing=0")
	}
}

// snapshot stops producing new records and returns the ledger so far
// without waiting for the records in flight: with the cluster dead they
// are never acknowledged, and an idempotent producer does not fail a
// record in flight until its client closes (at the end of the test).
func (b *background) snapshot() map[string]position {
	b.cancel()
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.acked)
}

// TestMirrorStopFailsClosed: a partition that cannot reach the barrier
// (its only replica's node is down) fails the whole stop closed: exit 1,
// the error and the --json report name the partition, and nothing became
// writable — no partition is STOPPED or STOPPING, the others are PAUSED
// and still refuse produces with READ_ONLY_TOPIC. The stop before issue 27
// stopped (and made writable) every partition it could, one by one.
// Not parallel (a three-node cluster, see threeAndThree).
func TestMirrorStopFailsClosed(t *testing.T) {
	dst := startThree(t, "destination", brokertest.WithConfig("default.replication.factor=1", "min.insync.replicas=1"))
	p := newPair(t, 2*time.Minute, startOne(t, "source"), dst)
	const topic, partitions = "closed", 3
	p.src.createTopic(t, p.ctx, topic, partitions)
	p.createMirror()
	p.start(topic)
	produceMix(t, p.ctx, p.src, topic, partitions, 30, producerKinds()[:2])
	p.waitMirroring(topic, partitions, time.Minute)

	down, node := leaderNotController(dst, topic, partitions)
	// Every partition the node leads is down with it: with RF 1 the
	// placement may give it more than one.
	downs := map[int32]bool{}
	for part := range int32(partitions) {
		if dst.leader(topic, part) == node {
			downs[part] = true
		}
	}
	p.logf("killing destination node %d, the only replica of %s partitions %v", node, topic, slices.Sorted(maps.Keys(downs)))
	dst.many.Kill(t, node)

	var out, errb bytes.Buffer
	live := []string{}
	for _, id := range dst.many.Running() {
		live = append(live, dst.many.Node(id).Addr())
	}
	code := cli.Main(p.ctx, []string{"--bootstrap-server", strings.Join(live, ","), "--timeout", "30s",
		"stop", mirrorName, "--topic", topic, "--barrier-timeout", "3s", "--json"}, &out, &errb)
	p.logf("stop: exit %d\n%s%s", code, out.String(), errb.String())
	name := fmt.Sprintf("%s-%d", topic, down)
	if code != 1 || !strings.Contains(errb.String(), "fail closed, nothing was made writable") || !strings.Contains(errb.String(), name+" (") {
		t.Fatalf("stop: exit %d, stderr %q; want 1, failing closed and naming %s", code, errb.String(), name)
	}
	var rep cli.StopReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	if rep.BarrierReached || rep.Stopped || !strings.Contains(rep.Error, name) {
		t.Fatalf("report: %+v", rep)
	}

	// Nothing writable: a second look after the command, with time for a
	// stop that had been sent to have run (a stop of a PAUSED partition
	// takes well under a second here).
	time.Sleep(time.Second)
	td, err := p.describe(topic)
	if err != nil {
		t.Fatal(err)
	}
	writable := 0
	for _, pd := range td.Partitions {
		if pd.State == "STOPPED" || pd.State == "STOPPING" {
			writable++
			t.Errorf("p%d is %s after a stop that failed closed", pd.Partition, pd.State)
		}
		if downs[pd.Partition] {
			continue
		}
		// PAUSED, or still MIRRORING when its pause is a __mirror_state
		// write to the killed node, which leads that record's partition
		// until the controller fences it (seconds after the kill): not
		// writable either way, as the produce below checks.
		if pd.State != "PAUSED" && pd.State != "MIRRORING" {
			t.Errorf("p%d is %s, want PAUSED or MIRRORING (read-only)", pd.Partition, pd.State)
		}
		prod := p.dst.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.RecordDeliveryTimeout(5*time.Second))
		err := prod.ProduceSync(p.ctx, &kgo.Record{Partition: pd.Partition, Value: []byte("must-not-land")}).FirstErr()
		if errCode(err) != mirrormsg.ReadOnlyTopic.Code { // kerr names code 134 otherwise
			writable++
			t.Errorf("p%d: produce after a stop that failed closed: %v, want READ_ONLY_TOPIC", pd.Partition, err)
		}
	}
	t.Logf("counts: partitions=%d down=%d writable-after-fail-closed=%d", partitions, len(downs), writable)
}

// TestMirrorStopReportsLagAbandoned: with the source alive and records
// the destination does not have (the mirror paused, then 40 more records
// per partition on the source), `stop --topic` reports per partition the
// barrier (what was mirrored), the source high watermark and the lag
// abandoned in records (exactly the 40) and in ms (at least the time
// since the first of them was written), and the destination's HW and
// LSO after the stop (equal, one past the barrier: MIRROR_PID_RESET).
func TestMirrorStopReportsLagAbandoned(t *testing.T) {
	t.Parallel()
	p := newPair(t, 2*time.Minute, startOne(t, "source"), startOne(t, "destination"))
	const topic, partitions, behind = "abandoned", 2, 40
	p.src.createTopic(t, p.ctx, topic, partitions)
	p.createMirror()
	p.start(topic)
	produceMix(t, p.ctx, p.src, topic, partitions, 20, producerKinds()[1:2])
	p.waitMirroring(topic, partitions, time.Minute)
	mirrored := p.src.endOffsets(t, p.ctx, topic)
	p.pause(topic)
	p.waitState(topic, "PAUSED", partitions, 30*time.Second)
	// firstWritten: each partition's first unmirrored record has a
	// timestamp no later than this.
	firstWritten := map[int32]time.Time{}
	prod := p.src.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for part := range int32(partitions) {
		for i := range behind {
			if err := prod.ProduceSync(p.ctx, &kgo.Record{Partition: part, Value: recordValue("behind", i)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				firstWritten[part] = time.Now()
			}
		}
	}
	source := p.src.endOffsets(t, p.ctx, topic)
	time.Sleep(300 * time.Millisecond) // a lag in ms clearly above 0

	var out, errb bytes.Buffer
	began := time.Now()
	code := cli.Main(p.ctx, []string{"--bootstrap-server", p.dst.seeds()[0], "stop", mirrorName, "--topic", topic, "--json"}, &out, &errb)
	p.logf("stop: exit %d\n%s%s", code, out.String(), errb.String())
	if code != 0 {
		t.Fatalf("stop: exit %d: %s", code, errb.String())
	}
	var rep cli.StopReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	if !rep.BarrierReached || !rep.Stopped || len(rep.Partitions) != partitions {
		t.Fatalf("report: %+v", rep)
	}
	for _, pr := range rep.Partitions {
		minMs := began.Sub(firstWritten[pr.Partition]).Milliseconds()
		if pr.Barrier != mirrored[pr.Partition] || pr.SourceHighWatermark != source[pr.Partition] || pr.LagRecords != behind ||
			pr.LagMs < minMs || pr.DestinationHighWatermark != pr.Barrier+1 || pr.LastStableOffset != pr.DestinationHighWatermark {
			t.Errorf("p%d: %+v; want barrier %d, source HW %d, lag abandoned %d records and at least %d ms, HW = LSO = barrier+1",
				pr.Partition, pr, mirrored[pr.Partition], source[pr.Partition], behind, minMs)
		}
	}

	// Nothing is left to stop: --all says so and fails.
	out.Reset()
	errb.Reset()
	if code := cli.Main(p.ctx, []string{"--bootstrap-server", p.dst.seeds()[0], "stop", mirrorName, "--all"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "no topic left to stop") {
		t.Errorf("stop --all with every topic stopped: exit %d, %q", code, errb.String())
	}
}
