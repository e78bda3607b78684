package source_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// startKfake starts franz-go's fake cluster with three brokers: a source
// written by nobody here.
func startKfake(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	kc, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	return kc
}

// kfakeTopic creates a topic on kc and returns its id.
func kfakeTopic(t *testing.T, kc *kfake.Cluster, topic string, partitions int32) storage.TopicID {
	t.Helper()
	if err := kc.CreateTopic(topic, partitions, nil); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	return storage.TopicID(kc.TopicInfo(topic).TopicID)
}

// transact writes one committed and one aborted transaction to every
// partition of the topic, n records each.
func transact(t *testing.T, ctx context.Context, seeds []string, topic string, partitions int32, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic), kgo.TransactionalID("mirror-txn"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, end := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, &kgo.Record{Partition: int32(i) % partitions, Value: fmt.Appendf(nil, "txn %v %d", end, i)})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("transactional produce: %v", err)
		}
		if err := cl.EndTransaction(ctx, end); err != nil {
			t.Fatalf("end transaction: %v", err)
		}
	}
}

// TestKfakeSourceCopiesByteForByte: franz-go's kfake as the source, with
// plain, idempotent, every-codec and transactional (committed and
// aborted) batches; the endpoint returns exactly what a plain consumer of
// kfake gets, control batches included.
func TestKfakeSourceCopiesByteForByte(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	kc := startKfake(t)
	seeds := kc.ListenAddrs()
	id := kfakeTopic(t, kc, "orders", 3)
	const perProducer = 150
	n := produce(t, ctx, seeds, "orders", 3, perProducer, kgo.RequiredAcks(kgo.AllISRAcks()))
	transact(t, ctx, seeds, "orders", 3, 30)

	src, ev := newSource(t, seeds)
	plain, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()

	total := batchStats{}
	for p := range int32(3) {
		tp := storage.TopicPartition{Topic: "orders", Partition: p}
		ep := endpoint(t, ctx, src, tp)
		if got, want := ep.Broker().ID, kc.LeaderFor("orders", p); got != want {
			t.Fatalf("%s: endpoint named after broker %d, kfake leader %d", tp, got, want)
		}
		hw := kc.PartitionInfo("orders", p).HighWatermark
		got := fetchAll(t, ctx, ep, tp, id, 0, -1, hw)
		want := plainFetch(t, ctx, plain, kc.LeaderFor("orders", p), tp, id, 0, hw)
		sameBatches(t, tp.String(), got.data, want)
		if got.retries != 0 {
			t.Errorf("%s: %d error answers %v", tp, got.retries, got.codes)
		}
		st := statsOf(t, got.data)
		total.batches += st.batches
		total.records += st.records
		total.control += st.control
		total.transactional += st.transactional
		if hwSeen, _, ok := src.SourceHighWatermark(tp); !ok || hwSeen != hw {
			t.Errorf("%s: source high watermark %d, want %d", tp, hwSeen, hw)
		}
		if errs := ev.errors(tp); len(errs) != 0 {
			t.Errorf("%s: reported errors %v", tp, errs)
		}
	}
	// Records: the produced ones, 60 transactional, and one marker per
	// partition per transaction.
	if want := n + 60 + 2*3; total.records != want {
		t.Fatalf("copied %d records, want %d", total.records, want)
	}
	if total.control != 6 || total.transactional != 12 {
		t.Fatalf("copied %d control and %d transactional batches, want 6 and 12", total.control, total.transactional)
	}
}

// TestKfakeSourceFollowsLeader moves a source partition to another broker
// mid-stream: the endpoint, still named after the old leader, follows the
// new one. Moving it away and back without the endpoint noticing makes
// the old route answer FENCED_LEADER_EPOCH, which the core must see as a
// retriable NOT_LEADER_OR_FOLLOWER.
func TestKfakeSourceFollowsLeader(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	kc := startKfake(t)
	seeds := kc.ListenAddrs()
	id := kfakeTopic(t, kc, "moving", 1)
	tp := storage.TopicPartition{Topic: "moving", Partition: 0}
	n := produce(t, ctx, seeds, "moving", 1, 20)

	src, ev := newSource(t, seeds, func(c *source.Config) { c.MetadataMinInterval = time.Millisecond })
	ep := endpoint(t, ctx, src, tp)
	first := ep.Broker().ID
	_, epoch0, err := src.Leader(ctx, tp)
	if err != nil {
		t.Fatal(err)
	}
	got := fetchAll(t, ctx, ep, tp, id, 0, -1, int64(n))

	other := (first + 1) % 3
	if err := kc.MoveTopicPartition("moving", 0, other); err != nil {
		t.Fatal(err)
	}
	n += produce(t, ctx, seeds, "moving", 1, 20)
	more := fetchAll(t, ctx, ep, tp, id, got.nextOffset, got.lastEpoch, int64(n))
	if more.codes[kerr.NotLeaderForPartition.Code] != 1 || more.retries != 1 {
		t.Fatalf("after the move: error answers %v (%d retries), want one NOT_LEADER_OR_FOLLOWER", more.codes, more.retries)
	}
	s, _ := src.Status(tp)
	if s.Leader != other || s.LeaderEpoch != epoch0+1 || s.Err != nil {
		t.Fatalf("status after the move %+v, want leader %d epoch %d", s, other, epoch0+1)
	}
	if ep.Broker().ID != first {
		t.Fatalf("endpoint renamed to %d", ep.Broker().ID)
	}
	plain, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	sameBatches(t, "across the move", append(got.data, more.data...), plainFetch(t, ctx, plain, other, tp, id, 0, int64(n)))

	// Away and back: the cached route (leader other, epoch0+1) is the
	// leader again, at epoch0+3.
	third := (other + 1) % 3
	if err := kc.MoveTopicPartition("moving", 0, third); err != nil {
		t.Fatal(err)
	}
	if err := kc.MoveTopicPartition("moving", 0, other); err != nil {
		t.Fatal(err)
	}
	before := len(ev.errors(tp))
	if _, err := ep.FetchLatestOffset(ctx, tp, 7); !errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.FencedLeaderEpoch) {
		t.Fatalf("latest offset at a stale source epoch: %v, want NOT_LEADER_OR_FOLLOWER for the core", err)
	}
	errs := ev.errors(tp)[before:]
	if len(errs) != 1 || !errors.Is(errs[0], kerr.FencedLeaderEpoch) || source.IsFatal(errs[0]) {
		t.Fatalf("reported %v, want the source's FENCED_LEADER_EPOCH", errs)
	}
	// The refresh that error triggered routes the next request right.
	latest, err := ep.FetchLatestOffset(ctx, tp, 7)
	if err != nil || latest.Offset != int64(n) {
		t.Fatalf("latest after the refresh: %+v, %v", latest, err)
	}
	if s, _ := src.Status(tp); s.LeaderEpoch != epoch0+3 {
		t.Fatalf("source epoch %d after the refresh, want %d", s.LeaderEpoch, epoch0+3)
	}

	// Same for a fetch: away and back again.
	if err := kc.MoveTopicPartition("moving", 0, third); err != nil {
		t.Fatal(err)
	}
	if err := kc.MoveTopicPartition("moving", 0, other); err != nil {
		t.Fatal(err)
	}
	n += produce(t, ctx, seeds, "moving", 1, 10)
	resp, err := ep.Fetch(ctx, ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, id, more.nextOffset, more.lastEpoch)}))
	if err != nil {
		t.Fatal(err)
	}
	if code := resp[tp].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("fetch at a stale source epoch: code %d, want NOT_LEADER_OR_FOLLOWER", code)
	}
	if !errors.Is(ev.errors(tp)[len(ev.errors(tp))-1], kerr.FencedLeaderEpoch) {
		t.Fatalf("fetch fencing not reported: %v", ev.errors(tp))
	}
	last := fetchAll(t, ctx, ep, tp, id, more.nextOffset, more.lastEpoch, int64(n))
	if last.retries != 0 {
		t.Fatalf("after the refresh: %d error answers %v", last.retries, last.codes)
	}
}

// TestKfakeSourceTopicRecreated: kfake deletes and creates the source
// topic again (a new id); the endpoint fetching by the old id reports the
// distinct recreated error and returns no data of the new topic; a topic
// kfake never had is not found.
func TestKfakeSourceTopicRecreated(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	kc := startKfake(t)
	seeds := kc.ListenAddrs()
	id := kfakeTopic(t, kc, "again", 1)
	tp := storage.TopicPartition{Topic: "again", Partition: 0}
	n := produce(t, ctx, seeds, "again", 1, 10)
	src, ev := newSource(t, seeds, func(c *source.Config) { c.MetadataMinInterval = time.Millisecond })
	ep := endpoint(t, ctx, src, tp)
	got := fetchAll(t, ctx, ep, tp, id, 0, -1, int64(n))
	// A second mirror whose fetch states carry no topic id: it adopts the
	// source's id on its first fetch and must notice the recreation too.
	src2, ev2 := newSource(t, seeds, func(c *source.Config) { c.MetadataMinInterval = time.Millisecond })
	ep2 := endpoint(t, ctx, src2, tp)
	got2 := fetchAll(t, ctx, ep2, tp, storage.TopicID{}, 0, -1, int64(n))
	sameBatches(t, "without a topic id", got2.data, got.data)

	if err := kc.DeleteTopic("again"); err != nil {
		t.Fatal(err)
	}
	newID := kfakeTopic(t, kc, "again", 1)
	produce(t, ctx, seeds, "again", 1, 20)
	resp, err := ep.Fetch(ctx, ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, id, got.nextOffset, got.lastEpoch)}))
	if err != nil {
		t.Fatal(err)
	}
	if d := resp[tp]; d.ErrorCode == 0 || len(d.RecordBatches) != 0 {
		t.Fatalf("fetch by the old id: code %d, %d bytes", d.ErrorCode, len(d.RecordBatches))
	}
	errs := ev.errors(tp)
	var mismatch *source.TopicIDMismatchError
	if len(errs) != 1 || !errors.As(errs[0], &mismatch) || mismatch.Mirror != id || mismatch.Source != newID {
		t.Fatalf("reported %v, want one topic id mismatch %s -> %s", errs, id, newID)
	}
	resp, err = ep2.Fetch(ctx, ep2.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, storage.TopicID{}, got2.nextOffset, got2.lastEpoch)}))
	if err != nil || resp[tp].ErrorCode == 0 || len(resp[tp].RecordBatches) != 0 || !ev2.anyError(tp, source.ErrSourceTopicRecreated) {
		t.Fatalf("fetch without a topic id after the recreation: %v, code %d, %d bytes, errors %v", err,
			resp[tp].ErrorCode, len(resp[tp].RecordBatches), ev2.errors(tp))
	}
	// From now on no request goes out for it.
	resp, err = ep.Fetch(ctx, ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, id, got.nextOffset, got.lastEpoch)}))
	if err != nil || resp[tp].ErrorCode != kerr.InconsistentTopicID.Code || !source.IsFatal(ev.errors(tp)[1]) {
		t.Fatalf("second fetch: %v, code %d, errors %v", err, resp[tp].ErrorCode, ev.errors(tp))
	}

	nope := storage.TopicPartition{Topic: "never", Partition: 0}
	resp, err = ep.Fetch(ctx, ep.BuildFetch([]fetcher.FetchPartition{fetchPart(nope, storage.TopicID{}, 0, -1)}))
	if err != nil || resp[nope].ErrorCode != kerr.UnknownTopicOrPartition.Code || !ev.anyError(nope, source.ErrSourceTopicNotFound) {
		t.Fatalf("unknown topic: %v, %+v, errors %v", err, resp[nope], ev.errors(nope))
	}
}

// TestUnreachableSource: a source nobody answers for fails the request
// (the core backs off) within MetadataTimeout and says why for each
// partition, as a retriable error.
func TestUnreachableSource(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	src, ev := newSource(t, []string{addr}, func(c *source.Config) { c.MetadataTimeout = 300 * time.Millisecond })
	tp := storage.TopicPartition{Topic: "t", Partition: 0}
	ep, err := src.NewEndPoint(fetcher.BrokerEndPoint{ID: 1})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := ep.Fetch(ctx, ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, storage.TopicID{1}, 0, -1)}))
	if err == nil || resp != nil {
		t.Fatalf("fetch from an unreachable source: %v, %v", resp, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the fetch took %v", took)
	}
	errs := ev.errors(tp)
	var perr *source.PartitionError
	if len(errs) != 1 || !errors.As(errs[0], &perr) || perr.Op != "fetch" || source.IsFatal(errs[0]) {
		t.Fatalf("reported %v, want one retriable fetch error", errs)
	}
	if s, ok := src.Status(tp); !ok || s.Err == nil {
		t.Fatalf("status %+v", s)
	}
	if _, err := ep.FetchLatestOffset(ctx, tp, 0); err == nil {
		t.Fatal("latest offset from an unreachable source")
	}
	if len(ev.errors(tp)) != 2 {
		t.Fatalf("reported %v", ev.errors(tp))
	}
}
