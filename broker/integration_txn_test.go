package broker_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// clientMaker makes kgo clients: a brokertest.Broker or Cluster.
type clientMaker interface {
	Client(t testing.TB, opts ...kgo.Opt) *kgo.Client
}

// txnProduce runs one transaction of n records per partition with cl,
// ending it with commit or abort, and fails the test on an error.
func txnProduce(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, partitions int32, prefix string, n int, commit bool) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for p := range partitions {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s-%d-%d", prefix, p, i)})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("transactional produce: %v", err)
	}
	end := kgo.TryAbort
	if commit {
		end = kgo.TryCommit
	}
	if err := cl.EndTransaction(ctx, end); err != nil {
		t.Fatalf("end transaction (commit %v): %v", commit, err)
	}
}

// readValues writes an end record to every partition of topic (outside
// any transaction) and reads each partition from its start up to it, with
// isolation; it returns the values before it but earlier end records,
// sorted. A record a
// read_committed reader must not see would show up before "end"; a last
// stable offset stuck below it would time the read out. b is a node or a
// cluster.
func readValues(t *testing.T, b clientMaker, topic string, partitions int32, readCommitted bool) []string {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	w := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	endValue := fmt.Sprintf("end-%d", time.Now().UnixNano())
	var ends []*kgo.Record
	for p := range partitions {
		ends = append(ends, &kgo.Record{Topic: topic, Partition: p, Value: []byte(endValue)})
	}
	produceSync(t, w, ends...)
	iso := kgo.ReadUncommitted()
	if readCommitted {
		iso = kgo.ReadCommitted()
	}
	cl := b.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso))
	defer cl.Close()
	seenEnd := map[int32]bool{}
	var out []string
	for len(seenEnd) < int(partitions) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s (read_committed %v): %d partitions reached their end record, read %v", topic, readCommitted, len(seenEnd), out)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			switch v := string(r.Value); {
			case v == endValue:
				seenEnd[r.Partition] = true
			case !seenEnd[r.Partition] && !strings.HasPrefix(v, "end-"):
				out = append(out, v)
			}
		})
	}
	slices.Sort(out)
	return out
}

// TestTransactionsCommitAndAbort: franz-go's transactional producer, unchanged,
// against one node: InitProducerId with a transactional id, a committed
// and an aborted transaction over three partitions, then a zombie fenced
// by a second producer of the same id. read_committed consumers see the
// committed records only, read_uncommitted ones see both, and the last
// stable offset reaches the log end once the markers are written.
func TestTransactionsCommitAndAbort(t *testing.T) {
	b := brokertest.Start(t)
	ctx := testCtx(t, 60*time.Second)
	const topic, partitions, n = "txn", 3, 5
	createTopic(t, b.Admin(t), topic, partitions)

	p1 := b.Client(t, kgo.TransactionalID("txn-app"), kgo.TransactionTimeout(20*time.Second), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	txnProduce(t, ctx, p1, topic, partitions, "committed", n, true)
	txnProduce(t, ctx, p1, topic, partitions, "aborted", n, false)

	committed := readValues(t, b, topic, partitions, true)
	if len(committed) != partitions*n || slices.ContainsFunc(committed, func(v string) bool { return strings.HasPrefix(v, "aborted") }) {
		t.Fatalf("read_committed read %d records: %v", len(committed), committed)
	}
	if all := readValues(t, b, topic, partitions, false); len(all) != 2*partitions*n {
		t.Fatalf("read_uncommitted read %d records, want %d", len(all), 2*partitions*n)
	}
	adm := b.Admin(t)
	lso, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	hw, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	lso.Each(func(o kadm.ListedOffset) {
		if end, _ := hw.Lookup(topic, o.Partition); o.Offset != end.Offset {
			t.Errorf("partition %d: last stable offset %d, end %d", o.Partition, o.Offset, end.Offset)
		}
	})

	// A second producer of the id fences the first.
	p2 := b.Client(t, kgo.TransactionalID("txn-app"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	txnProduce(t, ctx, p2, topic, partitions, "second", 1, true)
	if err := p1.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	err = p1.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("zombie")}).FirstErr()
	if err == nil {
		err = p1.EndTransaction(ctx, kgo.TryCommit)
	}
	if err == nil || !(strings.Contains(err.Error(), kerr.ProducerFenced.Message) || strings.Contains(err.Error(), kerr.InvalidProducerEpoch.Message)) {
		t.Fatalf("the fenced producer's transaction: %v, want PRODUCER_FENCED or INVALID_PRODUCER_EPOCH", err)
	}
	if slices.Contains(readValues(t, b, topic, partitions, true), "zombie") {
		t.Fatal("the fenced producer's record is visible")
	}

	described, err := adm.DescribeTransactions(ctx, "txn-app")
	if err != nil {
		t.Fatal(err)
	}
	d, ok := described["txn-app"]
	if !ok || d.Err != nil || d.State != "CompleteCommit" {
		t.Fatalf("DescribeTransactions: %+v %v", d, ok)
	}
	listed, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil || len(listed) != 1 {
		t.Fatalf("ListTransactions: %v %v", listed, err)
	}
}
