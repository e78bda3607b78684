package mirrorit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/storage/record"
)

// producerKind is one way of producing to the source: the identity check
// must hold for every batch shape a client writes.
type producerKind struct {
	name string
	opts []kgo.Opt
}

// producerKinds: plain (acks=1, no idempotence, uncompressed), idempotent
// (acks=all) and one idempotent acks=all producer per codec.
func producerKinds() []producerKind {
	idem := func(c kgo.CompressionCodec) []kgo.Opt {
		return []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchCompression(c)}
	}
	return []producerKind{
		{"plain", []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression())}},
		{"idempotent", idem(kgo.NoCompression())},
		{"gzip", idem(kgo.GzipCompression())},
		{"snappy", idem(kgo.SnappyCompression())},
		{"lz4", idem(kgo.Lz4Compression())},
		{"zstd", idem(kgo.ZstdCompression())},
	}
}

// padding makes records big enough that codecs have something to do.
const padding = "the quick brown fox jumps over the lazy dog 0123456789"

func recordValue(tag string, i int) []byte {
	return fmt.Appendf(nil, "%s-%07d-%s", tag, i, padding)
}

// position is where a record is stored.
type position struct {
	partition int32
	offset    int64
}

// produceMix has every producer kind write perKind records to topic at
// once, spread round robin over its partitions, and returns how many were
// acknowledged (all of them, or the test fails). kinds nil means every
// kind.
func produceMix(t testing.TB, ctx context.Context, s *side, topic string, partitions int32, perKind int, kinds []producerKind) int {
	t.Helper()
	if kinds == nil {
		kinds = producerKinds()
	}
	var wg sync.WaitGroup
	errs := make([]error, len(kinds))
	acked := make([]int, len(kinds))
	for k, kind := range kinds {
		cl := s.client(t, append([]kgo.Opt{
			kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerLinger(2 * time.Millisecond),
			// Small batches: many of them to compare (and many
			// fetch responses for the mirror to copy).
			kgo.ProducerBatchMaxBytes(4 << 10),
		}, kind.opts...)...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mu sync.Mutex
			for i := range perKind {
				r := &kgo.Record{Partition: int32(i) % partitions, Key: fmt.Appendf(nil, "%s-%d", kind.name, i), Value: recordValue(kind.name, i)}
				cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						errs[k] = errors.Join(errs[k], err)
						return
					}
					acked[k]++
				})
			}
			if err := cl.Flush(ctx); err != nil {
				mu.Lock()
				errs[k] = errors.Join(errs[k], err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	total := 0
	for k, kind := range kinds {
		if errs[k] != nil {
			t.Fatalf("%s: producer %s: %v", s.name, kind.name, errs[k])
		}
		if acked[k] != perKind {
			t.Fatalf("%s: producer %s: %d acknowledged, want %d", s.name, kind.name, acked[k], perKind)
		}
		total += acked[k]
	}
	return total
}

// background is a producer writing to the source until stopped: it keeps
// the acknowledged records' positions (the ledger the destination is
// audited against) and counts the errors it saw.
type background struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	acked  map[string]position
	errs   map[string]int
	failed int
}

// produceInBackground starts a producer of kind writing batches of
// perRound records to topic, tagging values with tag, pausing between
// rounds.
func produceInBackground(t testing.TB, ctx context.Context, s *side, topic string, partitions int32, kind producerKind, tag string) *background {
	t.Helper()
	cl := s.client(t, append([]kgo.Opt{
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(time.Millisecond),
		kgo.RecordDeliveryTimeout(60 * time.Second),
	}, kind.opts...)...)
	bctx, cancel := context.WithCancel(ctx)
	b := &background{cancel: cancel, done: make(chan struct{}), acked: map[string]position{}, errs: map[string]int{}}
	const perRound = 20
	go func() {
		defer close(b.done)
		var wg sync.WaitGroup
		defer wg.Wait()
		for i := 0; bctx.Err() == nil; {
			for range perRound {
				wg.Add(1)
				r := &kgo.Record{Partition: int32(i) % partitions, Value: recordValue(tag, i)}
				i++
				// The records' own context is ctx, not bctx: stopping the
				// producer stops new records, not the ones in flight.
				cl.Produce(ctx, r, func(r *kgo.Record, err error) {
					defer wg.Done()
					b.mu.Lock()
					defer b.mu.Unlock()
					if err != nil {
						b.failed++
						b.errs[err.Error()]++
						return
					}
					b.acked[string(r.Value)] = position{r.Partition, r.Offset}
				})
			}
			select {
			case <-bctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return b
}

// stop stops producing, waits for the records in flight and returns the
// ledger.
func (b *background) stop() map[string]position {
	b.cancel()
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.acked
}

func (b *background) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.acked)
}

func (b *background) errors() (int, map[string]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failed, b.errs
}

// storedValues decodes every data record of a topic's copy: value →
// positions (control batches skipped).
func storedValues(t testing.TB, l *topicLog) map[string][]position {
	t.Helper()
	d := record.NewDecompressor()
	out := map[string][]position{}
	for p, bs := range l.partitions {
		for _, b := range bs {
			if b.IsControl() {
				continue
			}
			rr, closeFn, err := d.OpenRecords(b, 64<<20)
			if err != nil {
				t.Fatalf("p%d offset %d: %v", p, b.BaseOffset(), err)
			}
			for range b.RecordCount() {
				rec, err := rr.Next(true)
				if err != nil {
					closeFn()
					t.Fatalf("p%d batch %d: %v", p, b.BaseOffset(), err)
				}
				out[string(rec.Value)] = append(out[string(rec.Value)], position{p, b.BaseOffset() + int64(rec.OffsetDelta)})
			}
			closeFn()
		}
	}
	return out
}

// ledgerAudit compares acknowledged records with a copy of the topic.
type ledgerAudit struct {
	acked, lost, duplicates, misplaced int
	examples                           []string
}

func (a ledgerAudit) String() string {
	return fmt.Sprintf("acked=%d lost=%d duplicates=%d misplaced=%d", a.acked, a.lost, a.duplicates, a.misplaced)
}

// auditLedger counts the acknowledged records missing from stored, stored
// more than once, or stored elsewhere than acknowledged.
func auditLedger(acked map[string]position, stored map[string][]position) ledgerAudit {
	a := ledgerAudit{acked: len(acked)}
	keys := make([]string, 0, len(acked))
	for v := range acked {
		keys = append(keys, v)
	}
	sort.Strings(keys)
	for _, v := range keys {
		want := acked[v]
		got := stored[v]
		short := v[:strings.LastIndexByte(v, '-')]
		switch {
		case len(got) == 0:
			a.lost++
			if a.lost <= maxExamples {
				a.examples = append(a.examples, fmt.Sprintf("lost %s acked at p%d/%d", short, want.partition, want.offset))
			}
			continue
		case len(got) > 1:
			a.duplicates += len(got) - 1
			if a.duplicates <= maxExamples {
				a.examples = append(a.examples, fmt.Sprintf("duplicate %s stored at %v", short, got))
			}
		}
		if got[0] != want {
			a.misplaced++
			if a.misplaced <= maxExamples {
				a.examples = append(a.examples, fmt.Sprintf("misplaced %s acked at %v stored at %v", short, want, got[0]))
			}
		}
	}
	return a
}

func assertLedger(t testing.TB, what string, a ledgerAudit) {
	t.Helper()
	t.Logf("%s ledger: %v", what, a)
	for _, e := range a.examples {
		t.Error(e)
	}
	if a.acked == 0 || a.lost != 0 || a.duplicates != 0 || a.misplaced != 0 {
		t.Fatalf("%s: want acked>0 lost=0 duplicates=0 misplaced=0, got %v", what, a)
	}
}
