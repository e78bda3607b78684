package broker_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage/record"
)

// classicTxnVersions caps the request versions that carry KIP-890 part 2
// (Produce v12, EndTxn v5, TxnOffsetCommit v5), so a client speaks the
// classic transaction protocol whatever transaction.version is finalized:
// franz-go opts into part 2 only when the cap allows those versions.
func classicTxnVersions() kgo.Opt {
	v := kversion.Stable()
	v.SetMaxKeyVersion(int16(kmsg.Produce), 11)
	v.SetMaxKeyVersion(int16(kmsg.EndTxn), 4)
	v.SetMaxKeyVersion(int16(kmsg.TxnOffsetCommit), 4)
	return kgo.MaxVersions(v)
}

// requestCounter is a kgo hook counting the requests a client wrote, by
// key, and the highest version of each it negotiated.
type requestCounter struct {
	mu sync.Mutex
	n  map[int16]int
}

func (c *requestCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[int16]int{}
	}
	c.n[key]++
}

func (c *requestCounter) count(key kmsg.Key) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[int16(key)]
}

// TestTransactionVersion2OverTheWire: KIP-890 part 2, as a new cluster
// finalizes it (transaction.version 2, Kafka 4.0's default). franz-go's
// transactional producer, unchanged, sees the level and sends neither
// AddPartitionsToTxn nor AddOffsetsToTxn: the partition leader and the
// group coordinator add the partitions, every EndTxn (v5) bumps the epoch,
// and committed and aborted transactions, with consumer offsets, read as
// before. Lowered to transaction.version 0, a new producer speaks the
// classic protocol against the same broker.
func TestTransactionVersion2OverTheWire(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 90*time.Second)
	const topic, partitions, n = "txn-v2", 3, 4
	createTopic(t, adm, topic, partitions)
	produceSync(t, b.Client(t), &kgo.Record{Topic: topic, Value: []byte("input")})

	var reqs requestCounter
	p := b.Client(t, kgo.TransactionalID("v2-app"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.WithHooks(&reqs))
	epochs := []int16{}
	describe := func() kadm.DescribedTransaction {
		t.Helper()
		d, err := adm.DescribeTransactions(ctx, "v2-app")
		if err != nil {
			t.Fatal(err)
		}
		return d["v2-app"]
	}
	for i, commit := range []bool{true, false, true} {
		txnProduce(t, ctx, p, topic, partitions, map[bool]string{true: "committed", false: "aborted"}[commit]+string(rune('a'+i)), n, commit)
		epochs = append(epochs, describe().ProducerEpoch)
	}
	if !slices.IsSorted(epochs) || epochs[0] == epochs[1] || epochs[1] == epochs[2] {
		t.Fatalf("producer epochs after each transaction %v: every end bumps it", epochs)
	}
	// A transaction with consumer offsets, as an ETL's.
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceSync(t, p, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("with-offsets")})
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	id, _, e := p.ProducerID(ctx)
	if e != nil {
		t.Fatal(e)
	}
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = "v2-app", "v2-group", id, epochFor(t, describe())
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Offset = 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, p)
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 || resp.Version != 5 {
		t.Fatalf("TxnOffsetCommit v5 without AddOffsetsToTxn: %v %+v", err, resp)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 20*time.Second, "the transaction's offset is committed", func() bool {
		offs, err := adm.FetchOffsets(ctx, "v2-group")
		o, _ := offs.Lookup(topic, 0)
		return err == nil && o.At == 1
	})

	if got := reqs.count(kmsg.AddPartitionsToTxn) + reqs.count(kmsg.AddOffsetsToTxn); got != 0 {
		t.Fatalf("the producer sent %d AddPartitionsToTxn/AddOffsetsToTxn under transaction.version 2", got)
	}
	if reqs.count(kmsg.EndTxn) != 4 {
		t.Fatalf("EndTxn sent %d times, want 4", reqs.count(kmsg.EndTxn))
	}
	committed := readValues(t, b, topic, partitions, true)
	if len(committed) != 2*partitions*n+2 || slices.ContainsFunc(committed, func(v string) bool { return strings.HasPrefix(v, "aborted") }) {
		t.Fatalf("read_committed read %d records: %v", len(committed), committed)
	}

	d := describe()
	if d.State != "CompleteCommit" || d.ProducerEpoch != epochs[2]+1 {
		t.Fatalf("DescribeTransactions: %+v", d)
	}

	// transaction.version 0: a new producer uses the classic protocol.
	res, err := adm.UpdateFeatures(ctx, false, kadm.FeatureUpdate{Feature: "transaction.version", MaxVersionLevel: 0, UpgradeType: 2})
	if err != nil || res.Error() != nil {
		t.Fatalf("transaction.version 0: %v %v", err, res.Error())
	}
	waitUntil(t, 20*time.Second, "transaction.version 0 in ApiVersions", func() bool {
		v, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, b.Client(t))
		return err == nil && !slices.ContainsFunc(v.FinalizedFeatures, func(f kmsg.ApiVersionsResponseFinalizedFeature) bool {
			return f.Name == "transaction.version"
		})
	})
	var classic requestCounter
	p0 := b.Client(t, kgo.TransactionalID("v0-app"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.WithHooks(&classic))
	txnProduce(t, ctx, p0, topic, partitions, "classic", n, true)
	if classic.count(kmsg.AddPartitionsToTxn) == 0 {
		t.Fatal("with transaction.version 0 the producer sent no AddPartitionsToTxn")
	}
	d0, err := adm.DescribeTransactions(ctx, "v0-app")
	if err != nil || d0["v0-app"].State != "CompleteCommit" || d0["v0-app"].ProducerEpoch != 0 {
		t.Fatalf("the classic transaction: %+v %v", d0, err)
	}
	if got := readValues(t, b, topic, partitions, true); len(got) != 3*partitions*n+2 {
		t.Fatalf("read_committed read %d records after the classic transaction, want %d", len(got), 3*partitions*n+2)
	}
}

// epochFor is the epoch of an ongoing transaction.
func epochFor(t *testing.T, d kadm.DescribedTransaction) int16 {
	t.Helper()
	if d.State != "Ongoing" {
		t.Fatalf("transaction %s is %s, not Ongoing", d.TxnID, d.State)
	}
	return d.ProducerEpoch
}

// TestTransactionVersion2LateWriteFenced: a produce of an ended
// transaction that arrives after its markers (a retry delayed in the
// network) is refused by the epoch the end bumped, instead of opening a
// transaction no marker closes.
func TestTransactionVersion2LateWriteFenced(t *testing.T) {
	b := brokertest.Start(t)
	ctx := testCtx(t, 60*time.Second)
	const topic = "txn-v2-late"
	createTopic(t, b.Admin(t), topic, 1)
	cl := b.Client(t)
	initResp := initTxnProducer(ctx, t, cl, "late-app")
	pid, epoch := initResp.ProducerID, initResp.ProducerEpoch
	write := func(epoch int16, seq int32) error {
		t.Helper()
		batch := txnBatch(t, pid, epoch, seq)
		_, err := sendProduceTxn(ctx, t, cl, kmsg.StringPtr("late-app"), topic, 0, batch)
		return err
	}
	if err := write(epoch, 0); err != nil {
		t.Fatalf("the first write, which adds the partition: %v", err)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "late-app", pid, epoch, true
	resp, err := end.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 || resp.Version != 5 || resp.ProducerEpoch != epoch+1 {
		t.Fatalf("EndTxn: %v %+v", err, resp)
	}
	waitUntil(t, 20*time.Second, "the transaction completes", func() bool {
		d, err := b.Admin(t).DescribeTransactions(ctx, "late-app")
		return err == nil && d["late-app"].State == "CompleteCommit"
	})
	if err := write(epoch, 1); !errorIsOneOf(err, kerr.InvalidProducerEpoch, kerr.ProducerFenced) {
		t.Fatalf("a late write at the ended epoch: %v, want INVALID_PRODUCER_EPOCH", err)
	}
	if err := write(epoch+1, 0); err != nil {
		t.Fatalf("the next transaction's write: %v", err)
	}
	adm := b.Admin(t)
	lso, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := lso.Lookup(topic, 0); o.Offset != 2 {
		t.Fatalf("last stable offset %d, want 2 (the first transaction and its marker)", o.Offset)
	}
}

func errorIsOneOf(err error, want ...*kerr.Error) bool {
	for _, w := range want {
		if err != nil && strings.Contains(err.Error(), w.Message) {
			return true
		}
	}
	return false
}

// txnBatch is one transactional record of producer pid at epoch and seq.
func txnBatch(t *testing.T, pid int64, epoch int16, seq int32) []byte {
	t.Helper()
	batch, err := record.Build(record.BatchSpec{
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Transactional: true,
		PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli(),
	}, []record.Record{{KeyLen: -1, ValueLen: 1, Value: []byte("v")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return batch
}
