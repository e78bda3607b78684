package source_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// events records what a Cluster reports.
type events struct {
	mu      sync.Mutex
	errs    map[storage.TopicPartition][]error
	skipped []skip
}

type skip struct {
	tp       storage.TopicPartition
	from, to int64
}

func (e *events) errors(tp storage.TopicPartition) []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs[tp]...)
}

func (e *events) skips() []skip {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]skip(nil), e.skipped...)
}

// anyError reports whether a reported error of tp matches target.
func (e *events) anyError(tp storage.TopicPartition, target error) bool {
	for _, err := range e.errors(tp) {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// newSource connects a mirror named "m" to seeds with short fetch waits.
func newSource(t *testing.T, seeds []string, edit ...func(*source.Config)) (*source.Cluster, *events) {
	t.Helper()
	ev := &events{errs: map[storage.TopicPartition][]error{}}
	cfg := source.Config{
		MirrorName:       "m",
		BootstrapServers: seeds,
		MaxWaitMs:        50,
		ClientOpts:       []kgo.Opt{kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })},
		OnPartitionError: func(tp storage.TopicPartition, err error) {
			ev.mu.Lock()
			ev.errs[tp] = append(ev.errs[tp], err)
			ev.mu.Unlock()
		},
		OnOffsetsSkipped: func(tp storage.TopicPartition, from, to int64) {
			ev.mu.Lock()
			ev.skipped = append(ev.skipped, skip{tp, from, to})
			ev.mu.Unlock()
		},
	}
	for _, f := range edit {
		f(&cfg)
	}
	c, err := source.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, ev
}

// endpoint returns an endpoint named after tp's current source leader.
func endpoint(t *testing.T, ctx context.Context, c *source.Cluster, tp storage.TopicPartition) fetcher.LeaderEndPoint {
	t.Helper()
	leader, _, err := c.Leader(ctx, tp)
	if err != nil {
		t.Fatalf("leader of %s: %v", tp, err)
	}
	ep, err := c.NewEndPoint(leader)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// fetchPart is a fetch of one partition as the core would ask it.
func fetchPart(tp storage.TopicPartition, id storage.TopicID, offset int64, lastEpoch int32) fetcher.FetchPartition {
	return fetcher.FetchPartition{TP: tp, TopicID: id, FetchOffset: offset, LogStartOffset: 0,
		CurrentLeaderEpoch: 7, LastFetchedEpoch: lastEpoch}
}

// copied is what fetchAll copied: the bytes, batch by batch, and the
// error answers it retried.
type copied struct {
	data       []byte
	batches    int
	retries    int
	codes      map[int16]int
	lastEpoch  int32
	nextOffset int64
}

// fetchAll drives ep the way the core does for one partition, from offset
// until the fetch offset reaches until, retrying error answers (the
// core's backoff) for at most 20 s.
func fetchAll(t *testing.T, ctx context.Context, ep fetcher.LeaderEndPoint, tp storage.TopicPartition, id storage.TopicID,
	offset int64, lastEpoch int32, until int64) copied {
	t.Helper()
	out, err := copyRange(ctx, ep, tp, id, offset, lastEpoch, until)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// copyRange is fetchAll for any goroutine: it returns its failure.
func copyRange(ctx context.Context, ep fetcher.LeaderEndPoint, tp storage.TopicPartition, id storage.TopicID,
	offset int64, lastEpoch int32, until int64) (copied, error) {
	out := copied{codes: map[int16]int{}, lastEpoch: lastEpoch, nextOffset: offset}
	deadline := time.Now().Add(20 * time.Second)
	for out.nextOffset < until {
		if time.Now().After(deadline) {
			return out, fmt.Errorf("fetching %s: at offset %d of %d after 20 s; error answers %v", tp, out.nextOffset, until, out.codes)
		}
		req := ep.BuildFetch([]fetcher.FetchPartition{fetchPart(tp, id, out.nextOffset, out.lastEpoch)})
		resp, err := ep.Fetch(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				return out, err
			}
			out.retries++
			time.Sleep(50 * time.Millisecond)
			continue
		}
		d, ok := resp[tp]
		if !ok {
			continue
		}
		if d.ErrorCode != 0 {
			out.codes[d.ErrorCode]++
			out.retries++
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if d.DivergingEpoch.Epoch >= 0 {
			return out, fmt.Errorf("fetching %s at %d: unexpected diverging epoch %+v", tp, out.nextOffset, d.DivergingEpoch)
		}
		bs, err := batchesOf(d.RecordBatches)
		if err != nil {
			return out, err
		}
		for _, b := range bs {
			if b.BaseOffset() != out.nextOffset {
				// A mirror allows compaction gaps; these tests compact
				// nothing, so any jump is a bug.
				return out, fmt.Errorf("fetching %s at %d: batch starts at %d", tp, out.nextOffset, b.BaseOffset())
			}
			out.data = append(out.data, b...)
			out.batches++
			out.nextOffset, out.lastEpoch = b.NextOffset(), b.PartitionLeaderEpoch()
		}
	}
	return out, nil
}

// splitBatches cuts data into whole batches, dropping a trailing partial
// one (as the core does).
func splitBatches(t *testing.T, data []byte) []record.Batch {
	t.Helper()
	out, err := batchesOf(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func batchesOf(data []byte) ([]record.Batch, error) {
	var out []record.Batch
	for len(data) >= record.LogOverhead {
		size := record.LogOverhead + int(record.Batch(data).BatchLength())
		if size <= record.LogOverhead || len(data) < size {
			break
		}
		b := record.Batch(data[:size])
		if !b.ValidCRC() {
			return nil, fmt.Errorf("batch at %d has a bad CRC", b.BaseOffset())
		}
		out = append(out, b)
		data = data[size:]
	}
	return out, nil
}

// readLog reads a local log's batches from offset to its end.
func readLog(t *testing.T, l *storage.Log, offset int64) []byte {
	t.Helper()
	var out []byte
	for offset < l.LogEndOffset() {
		info, err := l.Read(offset, 1<<20, storage.FetchLogEnd, true)
		if err != nil {
			t.Fatalf("read %s at %d: %v", l.Dir(), offset, err)
		}
		if info.Records.Size == 0 {
			break
		}
		buf := make([]byte, info.Records.Size)
		if err := info.Records.ReadInto(buf); err != nil {
			t.Fatal(err)
		}
		bs := splitBatches(t, buf)
		for _, b := range bs {
			out = append(out, b...)
		}
		offset = bs[len(bs)-1].NextOffset()
	}
	return out
}

// plainFetch reads a partition from offset to until as a plain consumer
// (kgo's negotiated Fetch, no epochs), straight from the leader: what any
// consumer of the source sees.
func plainFetch(t *testing.T, ctx context.Context, cl *kgo.Client, leader int32, tp storage.TopicPartition, id storage.TopicID,
	offset, until int64) []byte {
	t.Helper()
	var out []byte
	for offset < until {
		req := kmsg.NewPtrFetchRequest()
		req.MaxWaitMillis, req.MaxBytes = 10, 1<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = tp.Topic, id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = tp.Partition, offset, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
		if err != nil {
			t.Fatalf("plain fetch %s at %d: %v", tp, offset, err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			t.Fatalf("plain fetch %s at %d: %v", tp, offset, kerr.ErrorForCode(p.ErrorCode))
		}
		bs := splitBatches(t, p.RecordBatches)
		if len(bs) == 0 {
			t.Fatalf("plain fetch %s at %d: no data below %d", tp, offset, until)
		}
		for _, b := range bs {
			out = append(out, b...)
		}
		offset = bs[len(bs)-1].NextOffset()
	}
	return out
}

// sameBatches fails unless a and b hold the same batches byte for byte,
// naming the first batch that differs.
func sameBatches(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	g, w := splitBatches(t, got), splitBatches(t, want)
	for i := range min(len(g), len(w)) {
		if !bytes.Equal(g[i], w[i]) {
			t.Fatalf("%s: batch %d differs: got base %d crc %08x (%d bytes), want base %d crc %08x (%d bytes)", what, i,
				g[i].BaseOffset(), g[i].CRC(), len(g[i]), w[i].BaseOffset(), w[i].CRC(), len(w[i]))
		}
	}
	t.Fatalf("%s: %d batches (%d bytes), want %d batches (%d bytes)", what, len(g), len(got), len(w), len(want))
}

// batchStats counts the batches of data by kind.
type batchStats struct {
	batches, records, control, transactional, idempotent int
	codecs                                               map[record.Codec]int
}

func statsOf(t *testing.T, data []byte) batchStats {
	t.Helper()
	s := batchStats{codecs: map[record.Codec]int{}}
	for _, b := range splitBatches(t, data) {
		if !b.ValidCRC() {
			t.Fatalf("batch at %d has a bad CRC", b.BaseOffset())
		}
		s.batches++
		s.records += int(b.RecordCount())
		s.codecs[b.Compression()]++
		if b.IsControl() {
			s.control++
		}
		if b.IsTransactional() {
			s.transactional++
		}
		if b.HasProducerID() {
			s.idempotent++
		}
	}
	return s
}

// producer is one way of writing to the source.
type producer struct {
	name string
	opts []kgo.Opt
}

// producers are the plain, idempotent and every-codec writers.
func producers() []producer {
	return []producer{
		{"plain", []kgo.Opt{kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression())}},
		{"idempotent", []kgo.Opt{kgo.ProducerBatchCompression(kgo.NoCompression())}},
		{"gzip", []kgo.Opt{kgo.ProducerBatchCompression(kgo.GzipCompression())}},
		{"snappy", []kgo.Opt{kgo.ProducerBatchCompression(kgo.SnappyCompression())}},
		{"lz4", []kgo.Opt{kgo.ProducerBatchCompression(kgo.Lz4Compression())}},
		{"zstd", []kgo.Opt{kgo.ProducerBatchCompression(kgo.ZstdCompression())}},
	}
}

// produce writes n records per producer to the topic's partitions, in
// groups of 10 so batches hold several records, and returns the count.
func produce(t *testing.T, ctx context.Context, seeds []string, topic string, partitions int32, n int, extra ...kgo.Opt) int {
	t.Helper()
	total := 0
	for _, p := range producers() {
		opts := append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5 * time.Millisecond),
			kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })}, p.opts...)
		opts = append(opts, extra...)
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i += 10 {
			var recs []*kgo.Record
			for j := i; j < min(i+10, n); j++ {
				recs = append(recs, &kgo.Record{Partition: int32(j) % partitions, Key: fmt.Appendf(nil, "%s-%d", p.name, j),
					Value: bytes.Repeat(fmt.Appendf(nil, "%s value %d;", p.name, j), 1+j%7)})
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				cl.Close()
				t.Fatalf("produce %s: %v", p.name, err)
			}
			total += len(recs)
		}
		cl.Close()
	}
	return total
}

// newLocalLog opens an empty destination log on an in-memory filesystem.
func newLocalLog(t *testing.T, tp storage.TopicPartition) *storage.Log {
	t.Helper()
	l, _, err := storage.Open("/data/"+tp.String(), storage.Options{FS: vfs.NewMem(), Clock: clock.Real{},
		Scheduler: storage.InlineScheduler{}, Config: storage.DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// waitFor polls cond every 20 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
