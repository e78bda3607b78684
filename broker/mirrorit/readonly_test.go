package mirrorit

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// TestMirrorReadOnly: on a mirror topic Produce (plain and idempotent
// batches) and DeleteRecords fail with READ_ONLY_TOPIC (134) and append or
// delete nothing; Fetch, ListOffsets and consumer-group commits work. On
// 3+3 nothing was appended on any replica either: every destination
// replica of each partition ends exactly at the end offset it had before
// and equals the leader's copy.
func TestMirrorReadOnly(t *testing.T) {
	t.Parallel()
	testMirrorReadOnly(t, oneAndOne)
}

// TestMirrorReadOnly3x3 is TestMirrorReadOnly between three-node clusters
// (replication factor 3).
// It is not parallel (see threeAndThree).
func TestMirrorReadOnly3x3(t *testing.T) {
	testMirrorReadOnly(t, threeAndThree)
}

func testMirrorReadOnly(t *testing.T, sh shape) {
	p := newPair(t, 2*time.Minute, sh.start(t, "source"), sh.start(t, "destination"))
	const topic, partitions = "ro", 2
	p.src.createTopic(t, p.ctx, topic, partitions)
	n := produceMix(t, p.ctx, p.src, topic, partitions, 100, producerKinds()[:2])
	p.createMirror()
	p.start(topic)
	p.waitMirroring(topic, partitions, time.Minute)

	before := p.dst.endOffsets(t, p.ctx, topic)
	starts := startOffsets(t, p, topic)
	cl := p.dst.client(t)
	var rejectedProduce, rejectedDelete int
	for part := range int32(partitions) {
		for _, pid := range []int64{record.NoProducerID, 12345} {
			seq := record.NoSequence
			if pid != record.NoProducerID {
				seq = 0
			}
			b, err := record.Build(record.BatchSpec{ProducerID: pid, BaseSequence: seq, BaseTimestamp: time.Now().UnixMilli()},
				[]record.Record{{KeyLen: -1, Value: []byte("not allowed"), ValueLen: 11}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			req := produceRequest(topic, part, -1, 5000, b)
			off, err := produceRaw(p.ctx, cl, p.dst.leader(topic, part), req)
			if code := errCode(err); code != mirrormsg.ReadOnlyTopic.Code {
				t.Errorf("produce (producer id %d) to %s/%d: offset %d, error %v (code %d), want READ_ONLY_TOPIC (134)", pid, topic, part, off, err, code)
				continue
			}
			rejectedProduce++
		}

		req := kmsg.NewPtrDeleteRecordsRequest()
		req.TimeoutMillis = 5000
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = part, before[part]
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kresp, err := cl.Broker(int(p.dst.leader(topic, part))).Request(p.ctx, req)
		if err != nil {
			t.Fatalf("DeleteRecords: %v", err)
		}
		resp := kresp.(*kmsg.DeleteRecordsResponse)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != mirrormsg.ReadOnlyTopic.Code {
			t.Errorf("DeleteRecords %s/%d up to %d: code %d, want READ_ONLY_TOPIC (134)", topic, part, before[part], code)
			continue
		}
		rejectedDelete++
	}

	// Consumer-group commits on a mirror topic work.
	offs := kadm.Offsets{}
	for part := range int32(partitions) {
		offs.AddOffset(topic, part, before[part], -1)
	}
	cr, err := p.dst.admin(t).CommitOffsets(p.ctx, "ro-group", offs)
	if err == nil {
		err = cr.Error()
	}
	if err != nil {
		t.Errorf("committing offsets of a mirror topic: %v", err)
	}

	after := p.dst.endOffsets(t, p.ctx, topic)
	startsAfter := startOffsets(t, p, topic)
	for part := range int32(partitions) {
		if after[part] != before[part] || startsAfter[part] != starts[part] {
			t.Errorf("%s/%d: offsets [%d, %d) became [%d, %d)", topic, part, starts[part], before[part], startsAfter[part], after[part])
		}
	}
	t.Logf("counts: produced=%d rejected produce=%d (want %d) rejected DeleteRecords=%d (want %d) end offsets %v → %v",
		n, rejectedProduce, 2*partitions, rejectedDelete, partitions, before, after)
	if rejectedProduce != 2*partitions || rejectedDelete != partitions {
		t.Fatalf("rejected %d produce and %d DeleteRecords requests, want %d and %d", rejectedProduce, rejectedDelete, 2*partitions, partitions)
	}
	p.checkIdentity(topic, int64(n))

	// Every replica, not only the leader that refused the writes, holds
	// exactly the mirrored data and nothing beyond it.
	dst := readTopic(t, p.ctx, p.dst, topic)
	reps := checkReplicas(t, p.dst, topic, dst, sh.nodes, 30*time.Second)
	beyond := 0
	for part := range int32(partitions) {
		for _, id := range p.dst.image().Topics[topic].Partitions[part].Replicas {
			if n := p.dst.node(id); n != nil {
				if l, ok := n.LogManager().Log(storage.TopicPartition{Topic: topic, Partition: part}); ok && l.LogEndOffset() != before[part] {
					beyond++
					t.Errorf("p%d replica %d: log end offset %d, the mirror left it at %d", part, id, l.LogEndOffset(), before[part])
				}
			}
		}
	}
	t.Logf("counts (%s): destination replicas %v; replicas with a different log end offset=%d", sh.name, reps, beyond)
	assertReplicas(t, "destination", reps, partitions, sh.nodes, 0)
}
