package mirrorit

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/storage/record"
)

// hostileLog is what the hostile source serves for one partition: the
// batches (whole, possibly corrupt), in offset order.
type hostileLog struct{ batches []record.Batch }

// serve answers a fetch at offset: the first batch holding or after it
// (one batch per answer, so a good batch and the bad one that follows it
// arrive in separate responses), and the high watermark.
func (h hostileLog) serve(offset int64) ([]byte, int64) {
	hw := h.batches[len(h.batches)-1].NextOffset()
	for _, b := range h.batches {
		if b.NextOffset() > offset {
			return bytes.Clone(b), hw
		}
	}
	return nil, hw
}

// TestMirrorHostileSource: kfake as the source, with the Fetch answers of
// one of its brokers replaced (kfake.ControlKey) for two partitions:
//   - p0 serves a batch whose CRC does not match its bytes;
//   - p1 serves a good batch at epoch 1 and then a batch at epoch 0
//     (epochs going backwards).
//
// p2, on the other broker, is an ordinary kfake partition. p0 and p1 must
// become FAILED with nothing of the bad batches appended (p0 stays empty,
// p1 holds at most the good batch), while p2 keeps mirroring records
// produced after the failures.
func TestMirrorHostileSource(t *testing.T) {
	t.Parallel()
	src := startFake(t, "hostile-kfake", 2)
	// Keep a failed partition FAILED for the test's time if the broker
	// knows the retry configs (the checks below hold with retries too).
	var opts []brokertest.Option
	for _, kv := range []string{"mirror.failed.retry.initial.backoff.ms=60000", "mirror.failed.retry.max.backoff.ms=60000"} {
		if _, err := config.Load("", []string{kv}); err == nil {
			opts = append(opts, brokertest.WithConfig(kv))
		}
	}
	p := newPair(t, 2*time.Minute, src, startOne(t, "destination", opts...))
	const topic, partitions = "hostile", 3
	src.createTopic(t, p.ctx, topic, partitions)
	kc := src.fake
	hostileNode, goodNode := int32(0), int32(1)
	for part, node := range []int32{hostileNode, hostileNode, goodNode} {
		if err := kc.MoveTopicPartition(topic, int32(part), node); err != nil {
			t.Fatalf("move p%d to %d: %v", part, node, err)
		}
	}
	good := testBatch(t, 0, 1, "g0", "g1", "g2", "g3", "g4")
	corrupt := record.Batch(bytes.Clone(testBatch(t, 0, 0, "c0", "c1", "c2", "c3", "c4")))
	corrupt[len(corrupt)-3] ^= 0x20 // in the last record's value; the CRC no longer matches
	if corrupt.ValidCRC() {
		t.Fatal("the corrupt batch has a valid CRC")
	}
	logs := map[int32]hostileLog{
		0: {batches: []record.Batch{corrupt}},
		1: {batches: []record.Batch{good, testBatch(t, 5, 0, "r5", "r6", "r7", "r8", "r9")}},
	}
	var mu sync.Mutex
	served := map[int32]int{}
	kc.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		if kc.CurrentNode() != hostileNode {
			return nil, nil, false
		}
		return answerFetch(kreq.(*kmsg.FetchRequest), func(rp kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition) {
			h, ok := logs[rp.Partition]
			if !ok {
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				return
			}
			recs, hw := h.serve(rp.FetchOffset)
			sp.RecordBatches, sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = recs, hw, hw, 0
			mu.Lock()
			served[rp.Partition]++
			mu.Unlock()
		}), nil, true
	})

	cl := src.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceTo := func(from, n int) {
		t.Helper()
		var recs []*kgo.Record
		for i := from; i < from+n; i++ {
			recs = append(recs, &kgo.Record{Partition: 2, Value: recordValue("good", i)})
		}
		if err := cl.ProduceSync(p.ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce to kfake p2: %v", err)
		}
	}
	produceTo(0, 500)

	mon := monitorHW(t, p.ctx, p.dst, topic)
	p.createMirror()
	p.start(topic)
	td := p.waitFor2(topic, func(pd map[int32]string) bool { return pd[0] == "FAILED" && pd[1] == "FAILED" })
	p.logf("hostile partitions failed:%s", formatPartitions(td))
	produceTo(500, 500) // p2 must keep mirroring after the failures
	srcHW := int64(1000)
	p.waitFor(time.Minute, "p2 mirrored to the end", func() string {
		if hw := p.dst.endOffsets(t, p.ctx, topic)[2]; hw != srcHW {
			return "p2 destination high watermark below the source's"
		}
		return ""
	})
	td, err := p.describe(topic)
	if err != nil {
		t.Fatal(err)
	}
	_, decreases := mon.stop()
	ends := p.dst.endOffsets(t, p.ctx, topic)
	dst := readTopic(t, p.ctx, p.dst, topic)
	p.logf("after:%s; destination end offsets %v; hostile fetches served %v", formatPartitions(td), ends, served)

	states := map[int32]string{}
	for _, pd := range td.Partitions {
		states[pd.Partition] = pd.State
		if pd.Partition < 2 && pd.LastError == "" {
			t.Errorf("p%d: FAILED without a last error", pd.Partition)
		}
	}
	if states[0] != "FAILED" || states[1] != "FAILED" || states[2] != "MIRRORING" {
		t.Errorf("states %v, want p0 FAILED, p1 FAILED, p2 MIRRORING", states)
	}
	// Nothing of a bad batch on the destination.
	p0bytes := 0
	for _, b := range dst.partitions[0] {
		p0bytes += len(b)
	}
	if ends[0] != 0 || p0bytes != 0 {
		t.Errorf("p0 (corrupt source batch): destination holds %d bytes, end offset %d; want nothing", p0bytes, ends[0])
	}
	p1ok := len(dst.partitions[1]) == 0 || (len(dst.partitions[1]) == 1 && bytes.Equal(dst.partitions[1][0], good))
	if !p1ok || ends[1] > good.NextOffset() {
		t.Errorf("p1 (epochs backwards): destination holds %d batches, end offset %d; want at most the good batch (end %d)", len(dst.partitions[1]), ends[1], good.NextOffset())
	}
	// p2 is identical to kfake's.
	sl := readTopicPartitions(t, p, src, topic, 2)
	r := &Report{Topic: topic, Partitions: 1, SameTopicID: sl.id == dst.id, SourcePartitions: partitions, DestinationPartitions: len(dst.partitions)}
	r.ComparePartition(2, sl.partitions[2], dst.partitions[2])
	t.Logf("counts: p2 produced=%d %v; p0 bytes appended=%d; p1 batches=%d; hw decreases=%d", srcHW, r, p0bytes, len(dst.partitions[1]), len(decreases))
	assertIdentical(t, r, srcHW)
}

// answerFetch is a hostile source's answer to req: fill sets each
// partition's part of it.
func answerFetch(req *kmsg.FetchRequest, fill func(kmsg.FetchRequestTopicPartition, *kmsg.FetchResponseTopicPartition)) *kmsg.FetchResponse {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			fill(rp, &sp)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// waitFor2 waits until cond holds for the partition states of topic.
func (p *pair) waitFor2(topic string, cond func(map[int32]string) bool) (td adminTopic) {
	p.t.Helper()
	p.waitFor(time.Minute, topic+" partition states", func() string {
		var err error
		if td, err = p.describe(topic); err != nil {
			return err.Error()
		}
		st := map[int32]string{}
		for _, pd := range td.Partitions {
			st[pd.Partition] = pd.State
		}
		if !cond(st) {
			return formatPartitions(td)
		}
		return ""
	})
	return td
}

// readTopicPartitions reads only the listed partitions of topic from s.
func readTopicPartitions(t *testing.T, p *pair, s *side, topic string, parts ...int32) *topicLog {
	t.Helper()
	cl := s.client(t)
	adm := newAdm(cl)
	td := topicMetadata(t, p.ctx, s, adm, topic)
	out := &topicLog{id: td.ID, partitions: map[int32][]record.Batch{}, hw: map[int32]int64{}, logStart: map[int32]int64{}}
	for _, part := range parts {
		bs, hw, ls, err := readPartition(p.ctx, cl, adm, topic, td.ID, part)
		if err != nil {
			t.Fatalf("%s: reading %s/%d: %v", s.name, topic, part, err)
		}
		out.partitions[part], out.hw[part], out.logStart[part] = bs, hw, ls
	}
	return out
}
