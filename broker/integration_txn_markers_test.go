package broker_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// TestWriteTxnMarkersOverTheWire ends two open transactions, one committed
// and one aborted, with a WriteTxnMarkers request sent as a transaction
// coordinator would (a raw kmsg request through kgo, which routes it to
// the partition's leader). A read_committed consumer then sees the
// committed records and not the aborted ones, and DescribeProducers
// (kadm) shows each producer's open transaction before the markers and
// none after.
//
// Transactional produce is still refused until the transaction
// coordinator lands, so the transactional batches are appended through
// the replica manager's coordinator path, as a produce would leave them.
func TestWriteTxnMarkersOverTheWire(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	const topic = "txn-markers"
	const committedPID, abortedPID = 900_001, 900_002
	createTopic(t, adm, topic, 1)
	plain := b.Client(t, kgo.DefaultProduceTopic(topic), kgo.DisableIdempotentWrite())
	produceSync(t, plain, kgo.StringRecord("before"))

	appendTxn := func(pid int64, prefix string, n int) int64 {
		t.Helper()
		recs := make([]record.Record, n)
		for i := range recs {
			v := []byte(fmt.Sprintf("%s-%d", prefix, i))
			recs[i] = record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v)), OffsetDelta: int32(i)}
		}
		batch, err := record.Build(record.BatchSpec{ProducerID: pid, ProducerEpoch: 3, BaseSequence: 0, Transactional: true,
			PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli()}, recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		info, err := b.Node().Replicas().AppendCoordinator(testCtx(t, 10*time.Second), storage.TopicPartition{Topic: topic}, batch)
		if err != nil {
			t.Fatalf("append the transaction of producer %d: %v", pid, err)
		}
		return info.FirstOffset
	}
	committedStart := appendTxn(committedPID, "committed", 2) // offsets 1-2
	abortedStart := appendTxn(abortedPID, "aborted", 2)       // offsets 3-4

	txnStarts := func() map[int64]int64 {
		t.Helper()
		described, err := adm.DescribeProducers(testCtx(t, 10*time.Second), kadm.TopicsSet{topic: {0: {}}})
		if err != nil {
			t.Fatalf("DescribeProducers: %v", err)
		}
		out := map[int64]int64{}
		described.EachPartition(func(p kadm.DescribedProducersPartition) {
			if p.Err != nil {
				t.Fatalf("DescribeProducers %s[%d]: %v", p.Topic, p.Partition, p.Err)
			}
		})
		described.EachProducer(func(p kadm.DescribedProducer) {
			if p.ProducerEpoch != 3 || p.LastSequence != 1 {
				t.Errorf("producer %d: epoch %d last sequence %d, want 3 and 1", p.ProducerID, p.ProducerEpoch, p.LastSequence)
			}
			out[p.ProducerID] = p.CurrentTxnStartOffset
		})
		return out
	}
	if got, want := txnStarts(), map[int64]int64{committedPID: committedStart, abortedPID: abortedStart}; !maps.Equal(got, want) {
		t.Fatalf("open transactions: %v, want %v", got, want)
	}
	lso := func() int64 {
		t.Helper()
		offs, err := adm.ListCommittedOffsets(testCtx(t, 10*time.Second), topic)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := offs.Lookup(topic, 0)
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		return o.Offset
	}
	if got := lso(); got != committedStart {
		t.Fatalf("last stable offset %d with both transactions open, want %d", got, committedStart)
	}

	req := kmsg.NewPtrWriteTxnMarkersRequest()
	for _, m := range []struct {
		pid    int64
		commit bool
	}{{committedPID, true}, {abortedPID, false}} {
		rm := kmsg.NewWriteTxnMarkersRequestMarker()
		rm.ProducerID, rm.ProducerEpoch, rm.CoordinatorEpoch, rm.Committed = m.pid, 3, 0, m.commit
		rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		rt.Topic, rt.Partitions = topic, []int32{0}
		rm.Topics = append(rm.Topics, rt)
		req.Markers = append(req.Markers, rm)
	}
	cl := b.Client(t)
	resp, err := req.RequestWith(testCtx(t, 10*time.Second), cl)
	if err != nil {
		t.Fatalf("WriteTxnMarkers: %v", err)
	}
	if resp.Version != 1 {
		t.Errorf("WriteTxnMarkers answered at v%d, want v1 (the only version advertised)", resp.Version)
	}
	answered := 0
	for _, m := range resp.Markers {
		for _, rt := range m.Topics {
			for _, rp := range rt.Partitions {
				answered++
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					t.Fatalf("marker for producer %d on %s[%d]: %v", m.ProducerID, rt.Topic, rp.Partition, err)
				}
			}
		}
	}
	if answered != 2 {
		t.Fatalf("%d partition answers, want 2: %+v", answered, resp)
	}

	produceSync(t, plain, kgo.StringRecord("after"))
	if got := lso(); got != 8 { // before, 2 committed, 2 aborted, 2 markers, after
		t.Fatalf("last stable offset %d after the markers, want 8", got)
	}
	// Offset order puts the aborted records before "after": a consumer
	// shown them would return them among the first four.
	var values []string
	for _, r := range consumeN(t, b, 4, []string{topic}, kgo.FetchIsolationLevel(kgo.ReadCommitted())) {
		values = append(values, string(r.Value))
	}
	if want := []string{"before", "committed-0", "committed-1", "after"}; !slices.Equal(values, want) {
		t.Fatalf("read_committed read %q, want %q", values, want)
	}
	if got, want := txnStarts(), map[int64]int64{committedPID: -1, abortedPID: -1}; !maps.Equal(got, want) {
		t.Fatalf("after the markers: %v, want %v", got, want)
	}
}
