package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage/record"
)

// rawProducer sends idempotent Produce requests built by hand, so a test
// controls producer ids and sequence numbers exactly (a retry is the same
// batch sent again).
type rawProducer struct {
	cl    *kgo.Client
	id    int64
	epoch int16
}

func newRawProducer(ctx context.Context, t testing.TB, cl *kgo.Client) *rawProducer {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionTimeoutMillis = 60000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %v", err, kerr.ErrorForCode(resp.ErrorCode))
	}
	return &rawProducer{cl: cl, id: resp.ProducerID, epoch: resp.ProducerEpoch}
}

// produce sends n records with base sequence seq to topic's partition 0
// with acks=all and returns the partition's answer.
func (p *rawProducer) produce(ctx context.Context, t testing.TB, topic string, seq int32, n int) (baseOffset int64, err error) {
	t.Helper()
	var recs []record.Record
	for i := 0; i < n; i++ {
		v := []byte(fmt.Sprintf("seq-%d", int(seq)+i))
		recs = append(recs, record.Record{KeyLen: -1, ValueLen: int32(len(v)), Value: v, TimestampDelta: int64(i)})
	}
	batch, berr := record.Build(record.BatchSpec{
		ProducerID: p.id, ProducerEpoch: p.epoch, BaseSequence: seq, PartitionLeaderEpoch: -1,
		BaseTimestamp: time.Now().UnixMilli(),
	}, recs, nil)
	if berr != nil {
		t.Fatal(berr)
	}
	return sendProduce(ctx, t, p.cl, topic, 0, batch)
}

// sendProduce sends one batch to topic[partition] with acks=all and
// returns the partition's base offset and error.
func sendProduce(ctx context.Context, t testing.TB, cl *kgo.Client, topic string, partition int32, batch []byte) (int64, error) {
	t.Helper()
	return sendProduceTxn(ctx, t, cl, nil, topic, partition, batch)
}

// sendProduceTxn is sendProduce with the request's transactional id.
func sendProduceTxn(ctx context.Context, t testing.TB, cl *kgo.Client, txnID *string, topic string, partition int32, batch []byte) (int64, error) {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.TransactionID, req.Acks, req.TimeoutMillis = txnID, -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kr, err := cl.Broker(1).Request(ctx, req)
	if err != nil {
		t.Fatalf("produce request: %v", err)
	}
	resp := kr.(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("produce response %+v", resp)
	}
	pr := resp.Topics[0].Partitions[0]
	return pr.BaseOffset, kerr.ErrorForCode(pr.ErrorCode)
}

// TestRestartKeepsEverything produces with acks=all, commits offsets and
// writes with an idempotent producer, restarts the broker gracefully and
// then after a crash, and checks after each: topics, data and committed
// offsets are back, and the producer's retry of its last batches is
// recognised as a duplicate (same offsets, nothing appended).
func TestRestartKeepsEverything(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 60*time.Second)
	const topic, idem, group, n = "rs", "rs-idem", "rs-group", 300
	createTopic(t, adm, topic, 3, "retention.ms", "86400000")
	createTopic(t, adm, idem, 1)
	prod := b.Client(t, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	var rs []*kgo.Record
	for i := 0; i < n; i++ {
		rs = append(rs, kgo.StringRecord(fmt.Sprint(i)))
	}
	produceSync(t, prod, rs...)
	ends := map[int32]int64{}
	for _, r := range rs {
		ends[r.Partition] = max(ends[r.Partition], r.Offset+1)
	}
	commit, committed := kadm.Offsets{}, map[int32]int64{}
	for p := int32(0); p < 3; p++ {
		committed[p] = ends[p] / 2
		commit.Add(kadm.Offset{Topic: topic, Partition: p, At: committed[p], LeaderEpoch: -1, Metadata: fmt.Sprintf("half of %d", p)})
	}
	if err := adm.CommitAllOffsets(ctx, group, commit); err != nil {
		t.Fatalf("commit: %v", err)
	}

	raw := newRawProducer(ctx, t, b.Client(t))
	for _, seq := range []int32{0, 5} {
		if off, err := raw.produce(ctx, t, idem, seq, 5); err != nil || off != int64(seq) {
			t.Fatalf("idempotent batch %d: offset %d %v", seq, off, err)
		}
	}

	check := func(stage string, idemEnd int64) {
		t.Helper()
		td, err := adm.ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(td) != 2 || len(td[topic].Partitions) != 3 || len(td[idem].Partitions) != 1 {
			t.Fatalf("%s: topics %v", stage, td.Names())
		}
		records := 0
		for _, e := range ends {
			records += int(e)
		}
		got := consumeN(t, b, records, []string{topic})
		seen := map[string]bool{}
		for _, r := range got {
			seen[string(r.Value)] = true
		}
		for i := 0; i < n; i++ {
			if !seen[fmt.Sprint(i)] {
				t.Fatalf("%s: acknowledged record %d is gone", stage, i)
			}
		}
		end, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		for p := int32(0); p < 3; p++ {
			if o, _ := end.Lookup(topic, p); o.Offset != ends[p] {
				t.Fatalf("%s: %s ends at %d, want %d", stage, tp(topic, p), o.Offset, ends[p])
			}
		}
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		for p := int32(0); p < 3; p++ {
			o, ok := offs.Lookup(topic, p)
			if !ok || o.Err != nil || o.At != committed[p] || o.Metadata != fmt.Sprintf("half of %d", p) {
				t.Fatalf("%s: committed %s = %+v, want %d", stage, tp(topic, p), o, committed[p])
			}
		}
		// The producer retries its last batch: a duplicate, answered with
		// its original offset. (Only the last: like Kafka's producer
		// snapshot, the state reloaded after a restart keeps one batch
		// per producer, so older retries are out of order.)
		seq := int32(idemEnd) - 5
		if off, err := raw.produce(ctx, t, idem, seq, 5); err != nil || off != int64(seq) {
			t.Fatalf("%s: retry of batch %d: offset %d %v, want the original %d", stage, seq, off, err, seq)
		}
		ie, err := adm.ListEndOffsets(ctx, idem)
		if o, _ := ie.Lookup(idem, 0); err != nil || o.Offset != idemEnd {
			t.Fatalf("%s: %s ends at %d after the retries, want %d", stage, idem, o.Offset, idemEnd)
		}
		// A sequence gap is refused.
		if _, err := raw.produce(ctx, t, idem, int32(idemEnd)+5, 5); err != kerr.OutOfOrderSequenceNumber {
			t.Fatalf("%s: batch with a sequence gap: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", stage, err)
		}
	}

	b.Restart(t)
	// The same producer (id, epoch, sequences) on a new connection: the
	// old one died with the broker.
	raw.cl = b.Client(t)
	check("after a graceful restart", 10)
	// The producer goes on where it was; so does the kgo producer created
	// before the restart.
	for _, seq := range []int32{10, 15} {
		if off, err := raw.produce(ctx, t, idem, seq, 5); err != nil || off != int64(seq) {
			t.Fatalf("idempotent batch %d after the restart: offset %d %v", seq, off, err)
		}
	}
	if err := prod.ProduceSync(ctx, kgo.StringRecord("after")).FirstErr(); err != nil {
		t.Fatalf("the pre-restart kgo producer: %v", err)
	}
	// Account for the extra record in the checks below.
	ends = map[int32]int64{}
	end, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for p := int32(0); p < 3; p++ {
		o, _ := end.Lookup(topic, p)
		ends[p] = o.Offset
		total += o.Offset
	}
	if total != n+1 {
		t.Fatalf("%s holds %d records, want %d", topic, total, n+1)
	}

	b.Crash(t)
	b.StartAgain(t)
	raw.cl = b.Client(t)
	check("after a crash", 20)
}
