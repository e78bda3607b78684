package source_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// createTopic creates a topic on adm and returns its id.
func createTopic(t *testing.T, ctx context.Context, adm *kadm.Client, topic string, partitions int32, rf int16) storage.TopicID {
	t.Helper()
	resp, err := adm.CreateTopic(ctx, partitions, rf, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	return storage.TopicID(resp.ID)
}

// sourceLog is a Strait source node's local log of tp.
func sourceLog(t *testing.T, b *brokertest.Broker, tp storage.TopicPartition) *storage.Log {
	t.Helper()
	l, ok := b.Node().LogManager().Log(tp)
	if !ok {
		t.Fatalf("no log of %s on the source", tp)
	}
	return l
}

// TestStraitSourceCopiesByteForByte produces plain, idempotent and
// every-codec batches on a Strait source and fetches both partitions
// through the endpoint as the core would: every batch comes back exactly as
// the source stores it, the request is a consumer's, and the source high
// watermark and log start are recorded.
func TestStraitSourceCopiesByteForByte(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	b := brokertest.Start(t)
	id := createTopic(t, ctx, b.Admin(t), "orders", 2, 1)
	const perProducer = 200
	if n := produce(t, ctx, []string{b.Addr()}, "orders", 2, perProducer); n != 6*perProducer {
		t.Fatalf("produced %d records, want %d", n, 6*perProducer)
	}

	src, ev := newSource(t, []string{b.Addr()})
	tp0 := storage.TopicPartition{Topic: "orders", Partition: 0}
	ep := endpoint(t, ctx, src, tp0)
	if got := ep.Broker().ID; got != 1 {
		t.Fatalf("endpoint named after broker %d, want 1", got)
	}

	// The request is a consumer's, with the source's epoch and the
	// mirror topic's id; the core's own epoch (7) stays in Partitions.
	req := ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp0, id, 0, -1), fetchPart(storage.TopicPartition{Topic: "orders", Partition: 1}, id, 0, -1)})
	kr := req.Request
	if kr.ReplicaID != -1 || kr.ReplicaState.ID != -1 || kr.IsolationLevel != 0 || kr.SessionEpoch != -1 || kr.MaxWaitMillis != 50 {
		t.Fatalf("fetch is not a sessionless READ_UNCOMMITTED consumer fetch: replica %d/%d isolation %d session epoch %d wait %d",
			kr.ReplicaID, kr.ReplicaState.ID, kr.IsolationLevel, kr.SessionEpoch, kr.MaxWaitMillis)
	}
	if len(kr.Topics) != 1 || storage.TopicID(kr.Topics[0].TopicID) != id || len(kr.Topics[0].Partitions) != 2 {
		t.Fatalf("fetch topics %+v, want one topic with id %s and 2 partitions", kr.Topics, id)
	}
	_, srcEpoch, err := src.Leader(ctx, tp0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range kr.Topics[0].Partitions {
		if p.CurrentLeaderEpoch != srcEpoch || p.LogStartOffset != -1 || p.LastFetchedEpoch != -1 {
			t.Fatalf("partition %d: current epoch %d (source %d), log start %d, last fetched %d", p.Partition,
				p.CurrentLeaderEpoch, srcEpoch, p.LogStartOffset, p.LastFetchedEpoch)
		}
	}
	if req.Partitions[tp0].CurrentLeaderEpoch != 7 {
		t.Fatalf("the core's epoch was replaced in Partitions: %d", req.Partitions[tp0].CurrentLeaderEpoch)
	}

	totalRecords := 0
	for p := range int32(2) {
		tp := storage.TopicPartition{Topic: "orders", Partition: p}
		l := sourceLog(t, b, tp)
		hw := l.HighWatermark()
		got := fetchAll(t, ctx, ep, tp, id, 0, -1, hw)
		want := readLog(t, l, 0)
		sameBatches(t, tp.String(), got.data, want)
		st := statsOf(t, got.data)
		totalRecords += st.records
		if got.retries != 0 {
			t.Errorf("%s: %d error answers %v, want none", tp, got.retries, got.codes)
		}
		// Every codec and both producer kinds made it through.
		if len(st.codecs) != 5 || st.idempotent == 0 || st.idempotent == st.batches {
			t.Errorf("%s: codecs %v, %d idempotent of %d batches", tp, st.codecs, st.idempotent, st.batches)
		}
		if hwSeen, start, ok := src.SourceHighWatermark(tp); !ok || hwSeen != hw || start != 0 {
			t.Errorf("%s: source high watermark %d/%d (ok %v), want %d/0", tp, hwSeen, start, ok, hw)
		}
		s, _ := src.Status(tp)
		if s.Leader != 1 || s.LeaderEpoch != srcEpoch || s.Err != nil || s.OffsetsSkipped != 0 {
			t.Errorf("%s: status %+v", tp, s)
		}
		if errs := ev.errors(tp); len(errs) != 0 {
			t.Errorf("%s: reported errors %v", tp, errs)
		}
	}
	if totalRecords != 6*perProducer {
		t.Fatalf("copied %d records, want %d", totalRecords, 6*perProducer)
	}
}

// TestStraitSourceOffsets covers what the core asks besides Fetch:
// ListOffsets EARLIEST/LATEST as a consumer, OffsetForLeaderEpoch as a
// consumer, DivergingEpoch passed through, and OFFSET_OUT_OF_RANGE after
// the source deleted records, counted as skipped offsets.
func TestStraitSourceOffsets(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	b := brokertest.Start(t)
	adm := b.Admin(t)
	id := createTopic(t, ctx, adm, "events", 1, 1)
	produce(t, ctx, []string{b.Addr()}, "events", 1, 50)
	tp := storage.TopicPartition{Topic: "events", Partition: 0}
	l := sourceLog(t, b, tp)
	hw := l.HighWatermark()
	if hw != 300 {
		t.Fatalf("source high watermark %d, want 300", hw)
	}

	src, ev := newSource(t, []string{b.Addr()})
	ep := endpoint(t, ctx, src, tp)
	latest, err := ep.FetchLatestOffset(ctx, tp, 7)
	if err != nil || latest.Offset != hw {
		t.Fatalf("latest offset %+v, %v; want %d", latest, err, hw)
	}
	earliest, err := ep.FetchEarliestOffset(ctx, tp, 7)
	if err != nil || earliest.Offset != 0 {
		t.Fatalf("earliest offset %+v, %v; want 0", earliest, err)
	}

	epoch, ok := l.LatestEpoch()
	if !ok {
		t.Fatal("source log has no epoch")
	}
	ends, err := ep.FetchEpochEndOffsets(ctx, map[storage.TopicPartition]fetcher.EpochRequest{
		tp: {CurrentLeaderEpoch: 7, LeaderEpoch: epoch}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ends[tp]; got.ErrorCode != 0 || got.LeaderEpoch != epoch || got.EndOffset != hw {
		t.Fatalf("epoch %d ends at %+v, want epoch %d end %d", epoch, got, epoch, hw)
	}

	// A copy that holds more of the epoch than the source (an unclean
	// election on the source) has diverged: the source says where its
	// epoch ends, with no data, and the core truncates there.
	resp, err := ep.Fetch(ctx, ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, id, hw+10, epoch)}))
	if err != nil {
		t.Fatal(err)
	}
	if d := resp[tp]; d.ErrorCode != 0 || d.DivergingEpoch.Epoch != epoch || d.DivergingEpoch.EndOffset != hw || len(d.RecordBatches) != 0 {
		t.Fatalf("diverging fetch: code %d diverging %+v, %d bytes; want epoch %d end %d",
			d.ErrorCode, d.DivergingEpoch, len(d.RecordBatches), epoch, hw)
	}

	// The source deletes records below a batch boundary; a copy still at
	// offset 0 is out of range and the core skips to the source's start.
	batches := splitBatches(t, readLog(t, l, 0))
	cut := batches[len(batches)/2].BaseOffset()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "events", Partition: 0, At: cut})
	dr, err := adm.DeleteRecords(ctx, os)
	if err == nil {
		err = dr.Error()
	}
	if err != nil {
		t.Fatalf("delete records below %d: %v", cut, err)
	}
	resp, err = ep.Fetch(ctx, ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, id, 0, -1)}))
	if err != nil {
		t.Fatal(err)
	}
	if d := resp[tp]; d.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch below the source's start: code %d, want OFFSET_OUT_OF_RANGE", d.ErrorCode)
	}
	// The core's order: latest, then earliest (fetcher.DoWork).
	if latest, err = ep.FetchLatestOffset(ctx, tp, 7); err != nil || latest.Offset != hw {
		t.Fatalf("latest after delete %+v, %v", latest, err)
	}
	if earliest, err = ep.FetchEarliestOffset(ctx, tp, 7); err != nil || earliest.Offset != cut {
		t.Fatalf("earliest after delete %+v, %v; want %d", earliest, err, cut)
	}
	if action, next := fetcher.ResetFetchOffset(0, earliest.Offset, latest.Offset); action != fetcher.ResetTruncateFully || next != cut {
		t.Fatalf("the core would reset with %v to %d", action, next)
	}
	s, _ := src.Status(tp)
	if s.OffsetsSkipped != cut || s.LogStartOffset != cut || s.HighWatermark != hw {
		t.Fatalf("status %+v, want %d skipped, log start %d, hw %d", s, cut, cut, hw)
	}
	if got := ev.skips(); len(got) != 1 || got[0] != (skip{tp, 0, cut}) {
		t.Fatalf("skips reported %+v, want one [0, %d)", got, cut)
	}
	// Asking the offsets again without an out-of-range fetch skips nothing.
	if _, err := ep.FetchEarliestOffset(ctx, tp, 7); err != nil {
		t.Fatal(err)
	}
	if s, _ := src.Status(tp); s.OffsetsSkipped != cut || len(ev.skips()) != 1 {
		t.Fatalf("skips counted twice: %+v", s)
	}
	// A copy that mirrored records (fetch offset 1 > 0) is refused the
	// skip (issue 27): the earliest offset comes with a RecordsDeletedError
	// naming the offsets lost, again when the core asks again, and nothing
	// more is counted as skipped.
	resp, err = ep.Fetch(ctx, ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, id, 1, -1)}))
	if err != nil || resp[tp].ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch at 1 below the source's start: %v %+v", err, resp[tp])
	}
	if _, err := ep.FetchLatestOffset(ctx, tp, 7); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := ep.FetchEarliestOffset(ctx, tp, 7)
		var rde *source.RecordsDeletedError
		if !errors.As(err, &rde) || rde.DestinationEnd != 1 || rde.SourceStart != cut || !source.IsFatal(err) {
			t.Fatalf("earliest past a mirrored offset: %v, want a fatal RecordsDeletedError [1, %d)", err, cut)
		}
	}
	if s, _ := src.Status(tp); s.OffsetsSkipped != cut || len(ev.skips()) != 1 {
		t.Fatalf("a refused skip was counted: %+v", s)
	}
	got := fetchAll(t, ctx, ep, tp, id, cut, -1, hw)
	sameBatches(t, "after the cut", got.data, readLog(t, l, cut))
}

// TestStraitSourceTopicErrors: a topic the source does not have, a
// partition it does not have, and a source topic deleted and created again
// under the same name each surface as their distinct error; the metadata
// requests never create a topic on the source.
func TestStraitSourceTopicErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	b := brokertest.Start(t, brokertest.WithConfig("auto.create.topics.enable=true"))
	adm := b.Admin(t)
	src, ev := newSource(t, []string{b.Addr()}, func(c *source.Config) { c.MetadataMinInterval = time.Millisecond })

	missing := storage.TopicPartition{Topic: "missing", Partition: 0}
	if _, _, err := src.Leader(ctx, missing); !errors.Is(err, source.ErrSourceTopicNotFound) || !source.IsFatal(err) {
		t.Fatalf("leader of a missing topic: %v, want ErrSourceTopicNotFound", err)
	}
	info, err := src.Topics(ctx, "missing")
	if err != nil || !errors.Is(info["missing"].Err, source.ErrSourceTopicNotFound) {
		t.Fatalf("topics: %+v, %v", info, err)
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("missing") {
		t.Fatal("the source endpoint created the topic it asked about")
	}

	id := createTopic(t, ctx, adm, "recreated", 2, 1)
	produce(t, ctx, []string{b.Addr()}, "recreated", 2, 10)
	info, err = src.Topics(ctx, "recreated")
	if err != nil || info["recreated"].ID != id || info["recreated"].Partitions != 2 || info["recreated"].Err != nil {
		t.Fatalf("topics: %+v, %v; want id %s and 2 partitions", info, err, id)
	}
	tp := storage.TopicPartition{Topic: "recreated", Partition: 0}
	ep := endpoint(t, ctx, src, tp)

	// A partition the source topic does not have.
	p9 := storage.TopicPartition{Topic: "recreated", Partition: 9}
	resp, err := ep.Fetch(ctx, ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, id, 0, -1), fetchPart(p9, id, 0, -1)}))
	if err != nil {
		t.Fatal(err)
	}
	if resp[tp].ErrorCode != 0 || len(resp[tp].RecordBatches) == 0 {
		t.Fatalf("partition 0: code %d, %d bytes", resp[tp].ErrorCode, len(resp[tp].RecordBatches))
	}
	if resp[p9].ErrorCode != kerr.UnknownTopicOrPartition.Code || !ev.anyError(p9, source.ErrSourcePartitionNotFound) {
		t.Fatalf("partition 9: code %d, errors %v", resp[p9].ErrorCode, ev.errors(p9))
	}

	// Deleted on the source: not found.
	if _, err := adm.DeleteTopics(ctx, "recreated"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the fetch to report the deleted source topic", func() bool {
		resp, err := ep.Fetch(ctx, ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, id, 0, -1)}))
		return err == nil && resp[tp].ErrorCode != 0 && ev.anyError(tp, source.ErrSourceTopicNotFound)
	})
	// Created again: another topic id, the distinct recreated error, and
	// no data from the new topic reaches the copy.
	newID := createTopic(t, ctx, adm, "recreated", 2, 1)
	produce(t, ctx, []string{b.Addr()}, "recreated", 2, 10)
	if newID == id {
		t.Fatal("the recreated topic kept its id")
	}
	waitFor(t, 10*time.Second, "the fetch to report the recreated source topic", func() bool {
		resp, err := ep.Fetch(ctx, ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, id, 0, -1)}))
		if err != nil {
			return false
		}
		if d := resp[tp]; d.ErrorCode == 0 || len(d.RecordBatches) != 0 {
			t.Fatalf("fetch of the old topic id got code %d and %d bytes", d.ErrorCode, len(d.RecordBatches))
		}
		return ev.anyError(tp, source.ErrSourceTopicRecreated)
	})
	s, _ := src.Status(tp)
	var mismatch *source.TopicIDMismatchError
	if !errors.As(s.Err, &mismatch) || mismatch.Mirror != id || mismatch.Source != newID || !source.IsFatal(s.Err) {
		t.Fatalf("status error %v, want a topic id mismatch %s -> %s", s.Err, id, newID)
	}
	// ListOffsets carries no topic id, yet it refuses the new topic too.
	if _, err := ep.FetchLatestOffset(ctx, tp, 7); !errors.Is(err, source.ErrSourceTopicRecreated) {
		t.Fatalf("latest offset of the recreated topic: %v", err)
	}
	if _, _, err := src.Leader(ctx, tp); !errors.Is(err, source.ErrSourceTopicRecreated) {
		t.Fatalf("leader of the recreated topic: %v", err)
	}
}
