package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// FetchConfig is the consumer side of the read workloads. Zero fields keep
// kgo's defaults (fetch.max.bytes 50 MiB, max.partition.fetch.bytes 1 MiB,
// fetch.max.wait.ms 5 s, as Kafka's consumer).
type FetchConfig struct {
	MaxBytes          int32
	MaxPartitionBytes int32
}

func (f FetchConfig) opts() []kgo.Opt {
	var o []kgo.Opt
	if f.MaxBytes > 0 {
		o = append(o, kgo.FetchMaxBytes(f.MaxBytes))
	}
	if f.MaxPartitionBytes > 0 {
		o = append(o, kgo.FetchMaxPartitionBytes(f.MaxPartitionBytes))
	}
	return o
}

// offsets lists the topic's log start (start=true) or end offsets by
// partition.
func offsets(ctx context.Context, seeds []kgo.Opt, topic string, start bool) (map[int32]int64, error) {
	cl, err := kgo.NewClient(seeds...)
	if err != nil {
		return nil, fmt.Errorf("bench: admin client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var lo kadm.ListedOffsets
	if start {
		lo, err = adm.ListStartOffsets(ctx, topic)
	} else {
		lo, err = adm.ListEndOffsets(ctx, topic)
	}
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("bench: list offsets %s: %w", topic, err)
	}
	out := make(map[int32]int64)
	lo.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: list offsets %s: no partitions", topic)
	}
	return out, nil
}

// reader consumes every partition of one topic from given offsets, with no
// group: what a catch-up or tailing consumer does minus coordination.
type reader struct {
	cl    *kgo.Client
	topic string
	next  map[int32]int64 // the offset after the last record read

	records atomic.Int64 // read by the progress line while we poll
	bytes   atomic.Int64
	failed  int64
	first   error
}

func newReader(seeds []kgo.Opt, topic string, fc FetchConfig, from map[int32]int64) (*reader, error) {
	at := make(map[int32]kgo.Offset, len(from))
	for p, o := range from {
		at[p] = kgo.NewOffset().At(o)
	}
	opts := append(append(append([]kgo.Opt(nil), seeds...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: at})), fc.opts()...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("bench: consumer client: %w", err)
	}
	return &reader{cl: cl, topic: topic, next: maps.Clone(from)}, nil
}

func (r *reader) close() { r.cl.Close() }

// reached reports whether every partition was read up to until.
func (r *reader) reached(until map[int32]int64) bool {
	for p, end := range until {
		if r.next[p] < end {
			return false
		}
	}
	return true
}

// poll reads one batch of fetches, calling each for every record; each
// returns false to stop counting (the catch-up byte cap). Errors of pctx
// ending are not failures: the caller ends a poll on purpose.
func (r *reader) poll(ctx, pctx context.Context, each func(*kgo.Record) bool) {
	fs := r.cl.PollFetches(pctx)
	for _, fe := range fs.Errors() {
		if ctx.Err() == nil && (errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, context.DeadlineExceeded)) {
			continue
		}
		r.failed++
		if r.first == nil {
			r.first = fmt.Errorf("fetch %s[%d]: %w", fe.Topic, fe.Partition, fe.Err)
		}
	}
	stop := false
	fs.EachRecord(func(rec *kgo.Record) {
		if stop {
			return
		}
		r.next[rec.Partition] = rec.Offset + 1
		r.records.Add(1)
		r.bytes.Add(int64(len(rec.Value)))
		if each != nil && !each(rec) {
			stop = true
		}
	})
}

// readResult fills the counts of res from the reader.
func (r *reader) fill(res *Result) {
	res.Records = r.records.Load()
	res.Bytes = r.bytes.Load()
	res.Errors += r.failed
	if r.first != nil && res.FirstError == "" {
		res.FirstError = r.first.Error()
	}
}
