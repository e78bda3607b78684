package mirrorit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/mirror/admin/cli"
	"github.com/strait-io/strait/storage/record"
)

// TestMirrorDrillClone is issue 27's DR drill "done when": with the mirror
// running and the source still producing, `strait mirror clone` makes a
// writable copy of the mirror topic (the destination rolls segments every
// 100 ms, so the clone shares closed ones as hard links); the clone
// serves the mirror topic's batches byte for byte up to the clone point,
// then records produced to it at the offsets that follow; the mirror's
// lag returns to 0 while the source produces; deleting the clone leaves
// the mirror topic identical to the source.
func TestMirrorDrillClone(t *testing.T) {
	t.Parallel()
	testMirrorDrillClone(t, oneAndOne)
}

// TestMirrorDrillClone3x3 is TestMirrorDrillClone between three-node
// clusters: every replica of the clone materializes from its own copy of
// the mirror topic and holds the leader's bytes. Not parallel (see
// threeAndThree).
func TestMirrorDrillClone3x3(t *testing.T) {
	testMirrorDrillClone(t, threeAndThree)
}

func testMirrorDrillClone(t *testing.T, sh shape) {
	src := sh.start(t, "source")
	dst := sh.start(t, "destination", brokertest.WithConfig("log.roll.ms=100"))
	p := newPair(t, 2*time.Minute, src, dst)
	const topic, clone, partitions = "drill", "drill-copy", 2
	src.createTopic(t, p.ctx, topic, partitions)
	p.createMirror()
	p.start(topic)
	initial := produceMix(t, p.ctx, src, topic, partitions, 300, producerKinds()[:2])
	p.waitMirroring(topic, partitions, time.Minute)

	// The source keeps producing, slowly enough that the mirror's lag is
	// often 0, through the whole drill.
	var produced atomic.Int64
	prodCtx, stopProducing := context.WithCancel(p.ctx)
	prodDone := make(chan error, 1)
	go func() {
		cl := src.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		for i := 0; prodCtx.Err() == nil; i++ {
			r := &kgo.Record{Partition: int32(i) % partitions, Value: recordValue("live", i)}
			if err := cl.ProduceSync(prodCtx, r).FirstErr(); err != nil && prodCtx.Err() == nil {
				prodDone <- err
				return
			}
			produced.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
		prodDone <- nil
	}()
	// Segments roll every 100 ms on the destination: by now several
	// closed ones hold mirrored records.
	for produced.Load() < 30 {
		time.Sleep(10 * time.Millisecond)
	}

	res := cloneTopic(t, p, topic, clone)
	if len(res.Points) != partitions {
		t.Fatalf("clone points %+v, want %d partitions", res.Points, partitions)
	}
	var cloned int64
	for _, pt := range res.Points {
		cloned += pt.Offset
	}
	if cloned < int64(initial) {
		t.Fatalf("clone points %+v hold %d records, fewer than the %d mirrored before the clone", res.Points, cloned, initial)
	}

	// The clone's leader makes it writable: the source's producers are
	// reset (MIRROR_PID_RESET, a control batch at the clone point) so this
	// cluster's producer ids cannot meet their state.
	var ends map[int32]int64
	p.waitFor(30*time.Second, clone+": producers reset at the clone point", func() string {
		ends = dst.endOffsets(t, p.ctx, clone)
		for _, pt := range res.Points {
			if ends[pt.Partition] <= pt.Offset {
				return fmt.Sprintf("end offsets %v, clone points %+v", ends, res.Points)
			}
		}
		return ""
	})

	// The clone is writable: records produced to it follow.
	const perPartition = 5
	cl := dst.client(t, kgo.DefaultProduceTopic(clone), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for _, pt := range res.Points {
		for i := range perPartition {
			r := &kgo.Record{Partition: pt.Partition, Value: fmt.Appendf(nil, "drill-%d-%d", pt.Partition, i)}
			if err := cl.ProduceSync(p.ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce to the clone: %v", err)
			}
			if want := ends[pt.Partition] + int64(i); r.Offset != want {
				t.Errorf("record %d produced to %s/%d at offset %d, want %d (after the clone point and the reset)", i, clone, pt.Partition, r.Offset, want)
			}
		}
	}

	// Consuming the clone: the mirror topic's batches (byte for byte) up to
	// the point, then the drill's records.
	mt := readTopic(t, p.ctx, dst, topic)
	ct := readTopic(t, p.ctx, dst, clone)
	if ct.id == mt.id {
		t.Errorf("the clone has the mirror topic's id %v", ct.id)
	}
	for _, pt := range res.Points {
		var want []record.Batch
		for _, b := range mt.partitions[pt.Partition] {
			if b.LastOffset() < pt.Offset {
				want = append(want, b)
			}
		}
		got := ct.partitions[pt.Partition]
		if len(got) < len(want) {
			t.Fatalf("%s/%d: %d batches, fewer than the %d of %s below the clone point %d", clone, pt.Partition, len(got), len(want), topic, pt.Offset)
		}
		for i, b := range want {
			if !bytes.Equal(got[i], b) {
				t.Fatalf("%s/%d: batch %d differs from %s's: %s", clone, pt.Partition, i, topic, batchDiff(b, got[i]))
			}
		}
		if reset := got[len(want)]; reset.BaseOffset() != pt.Offset || !reset.IsControl() {
			t.Errorf("%s/%d: the batch at the clone point %d is at %d, control %v; want the producers' reset", clone, pt.Partition, pt.Offset, reset.BaseOffset(), reset.IsControl())
		}
		tail := storedValues(t, &topicLog{partitions: map[int32][]record.Batch{pt.Partition: got[len(want):]}})
		if len(tail) != perPartition {
			t.Errorf("%s/%d after the clone point: %v, want the %d drill records", clone, pt.Partition, tail, perPartition)
		}
		for i := range perPartition {
			v := fmt.Sprintf("drill-%d-%d", pt.Partition, i)
			if pos := tail[v]; len(pos) != 1 || pos[0].offset != ends[pt.Partition]+int64(i) {
				t.Errorf("%s/%d: %s stored at %v, want offset %d", clone, pt.Partition, v, pos, ends[pt.Partition]+int64(i))
			}
		}
	}

	// The clone shares closed segments with the mirror topic.
	if sh.nodes > 1 {
		rr := checkReplicas(t, dst, clone, ct, sh.nodes, 30*time.Second)
		p.logf("%s replicas: %s", clone, rr)
		if rr.Replicas != partitions*sh.nodes || rr.Mismatches+rr.Missing+rr.Extra+rr.Unreadable > 0 {
			t.Errorf("%s replicas differ from the leader: %s %v", clone, rr, rr.Examples)
		}
	}
	shared := 0
	for _, dir := range dst.dirs() {
		shared += sharedSegments(t, dir, clone, partitions)
	}
	p.logf("%d segment files of %s are hard links", shared, clone)
	if shared == 0 {
		t.Error("no segment of the clone is shared with the mirror topic")
	}

	// The mirror goes on: its lag returns to 0 while the source produces.
	p.waitFor(time.Minute, topic+": lag 0 while the source produces", func() string {
		td, err := p.describe(topic)
		if err != nil {
			return err.Error()
		}
		for _, pd := range td.Partitions {
			if pd.State != "MIRRORING" || pd.Lag != 0 {
				return formatPartitions(td)
			}
		}
		return ""
	})
	before := produced.Load()
	time.Sleep(200 * time.Millisecond)
	if produced.Load() == before {
		t.Fatal("the source stopped producing: lag 0 proves nothing")
	}

	// Deleting the clone leaves the mirror topic whole.
	if _, err := dst.admin(t).DeleteTopics(p.ctx, clone); err != nil {
		t.Fatalf("delete the clone: %v", err)
	}
	p.waitFor(30*time.Second, "the clone's directories gone", func() string {
		for _, dir := range dst.dirs() {
			if n := partitionDirs(t, dir, clone); n > 0 {
				return fmt.Sprintf("%d directories left in %s", n, dir)
			}
		}
		return ""
	})
	stopProducing()
	if err := <-prodDone; err != nil {
		t.Fatalf("source producer: %v", err)
	}
	p.waitMirroring(topic, partitions, time.Minute)
	assertIdentical(t, p.checkIdentity(topic, int64(initial)+produced.Load()), int64(initial)+produced.Load())
}

// cloneTopic runs `strait mirror clone ... --json` against the
// destination, as an operator would, and returns its answer.
func cloneTopic(t *testing.T, p *pair, topic, clone string) admin.CloneResult {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main(p.ctx, []string{"clone", mirrorName, "--topic", topic, "--as", clone, "--json",
		"--bootstrap-server", strings.Join(p.dst.seeds(), ",")}, &out, &errb); code != 0 {
		t.Fatalf("strait mirror clone: exit %d: %s", code, errb.String())
	}
	var res admin.CloneResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("strait mirror clone --json: %v: %s", err, out.String())
	}
	p.logf("cloned: %+v", res)
	return res
}

// dirs are the log directories of a Strait side's nodes.
func (s *side) dirs() []string {
	if s.one != nil {
		return []string{s.one.Dir()}
	}
	var out []string
	for _, n := range s.many.Nodes() {
		out = append(out, n.Dir())
	}
	return out
}

// sharedSegments counts the clone's segment files with more than one
// link.
func sharedSegments(t *testing.T, dir, topic string, partitions int) int {
	t.Helper()
	n := 0
	for p := range partitions {
		pd := filepath.Join(dir, fmt.Sprintf("%s-%d", topic, p))
		es, err := os.ReadDir(pd)
		if os.IsNotExist(err) {
			continue // not a replica on this node
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if !strings.HasSuffix(e.Name(), ".log") {
				continue
			}
			fi, err := os.Stat(filepath.Join(pd, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
				n++
			}
		}
	}
	return n
}

// partitionDirs counts the directories of topic's partitions in dir
// (deleted ones, renamed "-delete", included).
func partitionDirs(t *testing.T, dir, topic string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if e.IsDir() && strings.HasPrefix(e.Name(), topic+"-") {
			n++
		}
	}
	return n
}
