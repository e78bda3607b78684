package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/runtime/runtimetest"
	"github.com/strait-io/strait/storage/record"
)

const (
	loaderTopic     = "__test"
	loaderPartition = int32(3)
)

var errBoom = errors.New("boom")

// loaderRead is one call of loaderLog.Read.
type loaderRead struct {
	partition int32
	from      int64
	maxBytes  int32
}

// loaderLog is a fake LogReader over batches at consecutive offsets from
// start. Its Read keeps the LogReader contract (whole batches from the one
// holding from, at least one, about maxBytes, up to the log end offset)
// and ignores ctx, as the broker's does; hook, and the readFuncs the tests
// wrap it in, break the contract on purpose.
type loaderLog struct {
	start   int64
	batches []record.Batch
	reads   []loaderRead
	// hook, if not nil, runs first in the n-th Read (from 0); an error it
	// returns is the Read's.
	hook func(ctx context.Context, n int) error
}

func (l *loaderLog) end() int64 {
	if len(l.batches) == 0 {
		return l.start
	}
	return l.batches[len(l.batches)-1].NextOffset()
}

func (l *loaderLog) Read(ctx context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
	n := len(l.reads)
	l.reads = append(l.reads, loaderRead{p, from, maxBytes})
	if l.hook != nil {
		if err := l.hook(ctx, n); err != nil {
			return nil, 0, 0, err
		}
	}
	out, next := runtimetest.ReadBatches(l.batches, max(from, l.start), maxBytes)
	return out, next, l.end(), nil
}

func (l *loaderLog) froms() []int64 {
	out := make([]int64, len(l.reads))
	for i, r := range l.reads {
		out[i] = r.from
	}
	return out
}

var plainSpec = record.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}

// add appends a batch built by spec holding a record per key (value
// "v:"+key) at the log end, and returns it.
func (l *loaderLog) add(t *testing.T, spec record.BatchSpec, keys ...string) record.Batch {
	t.Helper()
	spec.BaseOffset = l.end()
	recs := make([]record.Record, len(keys))
	for i, k := range keys {
		v := "v:" + k
		recs[i] = record.Record{Key: []byte(k), KeyLen: int32(len(k)), Value: []byte(v), ValueLen: int32(len(v))}
	}
	var c *record.Compressor
	if spec.Codec != record.CodecNone {
		c = record.NewCompressor()
	}
	b, err := record.Build(spec, recs, c)
	if err != nil {
		t.Fatal(err)
	}
	l.batches = append(l.batches, b)
	return b
}

// addControl appends a transaction commit marker at the log end.
func (l *loaderLog) addControl() record.Batch {
	b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: 7}, true, 0)
	b.SetBaseOffset(l.end())
	l.batches = append(l.batches, b)
	return b
}

// readFunc is a LogReader made of a function.
type readFunc func(ctx context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error)

func (f readFunc) Read(ctx context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
	return f(ctx, p, from, maxBytes)
}

func newLoader(log LogReader, readBytes int32) *Loader {
	return &Loader{Log: log, Topic: loaderTopic, ReadBytes: readBytes, MaxBatchBytes: 1 << 20}
}

// collector is a replay callback keeping the keys it was given, checking
// each value, and failing with its err (if set) at key failAt.
type collector struct {
	t      *testing.T
	keys   []string
	failAt string
	err    error
	onKey  func(key string)
}

func (c *collector) replay(rec record.Record) error {
	k := string(rec.Key)
	if v := string(rec.Value); v != "v:"+k || int(rec.ValueLen) != len(v) {
		c.t.Errorf("record %q has value %q (length %d)", k, v, rec.ValueLen)
	}
	c.keys = append(c.keys, k)
	if c.onKey != nil {
		c.onKey(k)
	}
	if k == c.failAt {
		return c.err
	}
	return nil
}

func wantKeys(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("replayed %q, want %q", got, want)
	}
}

func wantErr(t *testing.T, err, is error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Load = nil, want an error wrapping %v with %q", is, msg)
	}
	if is != nil && !errors.Is(err, is) {
		t.Fatalf("Load = %v, want it to wrap %v", err, is)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Fatalf("Load = %q, want it to contain %q", err, msg)
	}
}

// Records of several batches, read in one chunk or one batch per chunk,
// are replayed once each in log order, skipping the control batch; Read
// starts at 0 below a log start moved by retention and then where the
// previous Read said.
func TestLoaderReplaysEveryRecordAcrossBatchesAndChunks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		readBytes int32
		froms     []int64
	}{
		{"one batch per read", 1, []int64{0, 42, 43, 44, 47}},
		{"one read", 1 << 20, []int64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &loaderLog{start: 40}
			log.add(t, plainSpec, "a", "b")      // 40-41
			log.add(t, plainSpec, "c")           // 42
			log.addControl()                     // 43
			log.add(t, plainSpec, "d", "e", "f") // 44-46
			log.add(t, plainSpec, "g")           // 47
			c := &collector{t: t}
			if err := newLoader(log, tc.readBytes).Load(context.Background(), loaderPartition, c.replay); err != nil {
				t.Fatal(err)
			}
			wantKeys(t, c.keys, "a", "b", "c", "d", "e", "f", "g")
			if got := log.froms(); !slices.Equal(got, tc.froms) {
				t.Fatalf("Read from %v, want %v", got, tc.froms)
			}
			for _, r := range log.reads {
				if r.partition != loaderPartition || r.maxBytes != tc.readBytes {
					t.Fatalf("Read(partition %d, maxBytes %d), want (%d, %d)", r.partition, r.maxBytes, loaderPartition, tc.readBytes)
				}
			}
		})
	}
}

// An empty partition loads with one Read, at offset 0 or past a log start
// retention moved.
func TestLoaderEmptyLog(t *testing.T) {
	for _, start := range []int64{0, 5} {
		log := &loaderLog{start: start}
		c := &collector{t: t}
		if err := newLoader(log, 1<<20).Load(context.Background(), loaderPartition, c.replay); err != nil {
			t.Fatalf("start %d: %v", start, err)
		}
		wantKeys(t, c.keys)
		if len(log.reads) != 1 {
			t.Fatalf("start %d: %d reads, want 1", start, len(log.reads))
		}
	}
}

// Accept decides about data batches only: without it transactional data is
// replayed (the __mirror_state coordinator); a rejected batch's records
// are skipped (the group coordinator). Control batches are never replayed
// nor shown to Accept.
func TestLoaderAccept(t *testing.T) {
	txnSpec := record.BatchSpec{ProducerID: 7, ProducerEpoch: 0, BaseSequence: 0, Transactional: true}
	log := &loaderLog{}
	log.add(t, plainSpec, "a")      // 0
	log.add(t, txnSpec, "t1", "t2") // 1-2
	log.addControl()                // 3
	log.add(t, plainSpec, "b")      // 4
	log.add(t, txnSpec, "t3")       // 5

	c := &collector{t: t}
	if err := newLoader(log, 1).Load(context.Background(), loaderPartition, c.replay); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, c.keys, "a", "t1", "t2", "b", "t3")

	var asked []int64
	l := newLoader(log, 1)
	l.Accept = func(b record.Batch) bool {
		asked = append(asked, b.BaseOffset())
		return !b.IsTransactional()
	}
	c = &collector{t: t}
	if err := l.Load(context.Background(), loaderPartition, c.replay); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, c.keys, "a", "b")
	if want := []int64{0, 1, 4, 5}; !slices.Equal(asked, want) {
		t.Fatalf("Accept asked about batches at %v, want %v", asked, want)
	}
}

// Batches at or past the log end offset a Read reports are not replayed,
// and the load ends there.
func TestLoaderStopsAtLogEnd(t *testing.T) {
	log := &loaderLog{}
	log.add(t, plainSpec, "a") // 0
	log.add(t, plainSpec, "b") // 1
	log.add(t, plainSpec, "c") // 2
	log.add(t, plainSpec, "d") // 3
	reads := 0
	short := readFunc(func(ctx context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
		reads++
		data, next, _, err := log.Read(ctx, p, from, maxBytes)
		return data, next, 2, err // a log end offset below the data returned
	})
	c := &collector{t: t}
	if err := newLoader(short, 1<<20).Load(context.Background(), loaderPartition, c.replay); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, c.keys, "a", "b")
	if reads != 1 {
		t.Fatalf("%d reads, want 1", reads)
	}
}

// A Read starting before from (at the batch holding an earlier offset)
// does not replay the batches before from again.
func TestLoaderSkipsBatchesBeforeFrom(t *testing.T) {
	log := &loaderLog{}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		log.add(t, plainSpec, k) // all batches the same size
	}
	size := int32(len(log.batches[0]))
	early := readFunc(func(ctx context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
		if from > 0 {
			from-- // returns the previous batch again, then the one holding from
		}
		return log.Read(ctx, p, from, maxBytes)
	})
	c := &collector{t: t}
	if err := newLoader(early, 2*size).Load(context.Background(), loaderPartition, c.replay); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, c.keys, "a", "b", "c", "d", "e")
	if got, want := log.froms(), []int64{0, 1, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("Read from %v, want %v", got, want)
	}
}

// A failed Read fails the load, naming the partition and offset; what
// the earlier chunks held was replayed, nothing after.
func TestLoaderReadError(t *testing.T) {
	log := &loaderLog{}
	log.add(t, plainSpec, "a", "b") // 0-1
	log.add(t, plainSpec, "c")      // 2
	log.add(t, plainSpec, "d")      // 3
	log.hook = func(_ context.Context, n int) error {
		if n == 1 {
			return errBoom
		}
		return nil
	}
	c := &collector{t: t}
	err := newLoader(log, 1).Load(context.Background(), loaderPartition, c.replay)
	wantErr(t, err, errBoom, "reading __test-3 at offset 2")
	wantKeys(t, c.keys, "a", "b")
	if len(log.reads) != 2 {
		t.Fatalf("%d reads, want 2", len(log.reads))
	}
}

// A chunk that does not parse fails the load after the whole batches
// before the damage were replayed.
func TestLoaderCorruptChunk(t *testing.T) {
	log := &loaderLog{}
	log.add(t, plainSpec, "a") // 0
	log.add(t, plainSpec, "b") // 1
	torn := readFunc(func(ctx context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
		data, next, end, err := log.Read(ctx, p, from, maxBytes)
		return data[:len(data)-1], next, end, err
	})
	c := &collector{t: t}
	err := newLoader(torn, 1<<20).Load(context.Background(), loaderPartition, c.replay)
	wantErr(t, err, nil, "reading __test-3 at offset 0")
	wantKeys(t, c.keys, "a")
}

// An error from replay stops the load at once, naming the batch.
func TestLoaderReplayError(t *testing.T) {
	log := &loaderLog{}
	log.add(t, plainSpec, "a")           // 0
	log.add(t, plainSpec, "b", "c", "d") // 1-3
	log.add(t, plainSpec, "e")           // 4
	c := &collector{t: t, failAt: "c", err: errBoom}
	err := newLoader(log, 1).Load(context.Background(), loaderPartition, c.replay)
	wantErr(t, err, errBoom, "replaying __test-3 batch at offset 1")
	wantKeys(t, c.keys, "a", "b", "c")
	if len(log.reads) != 2 {
		t.Fatalf("%d reads, want 2", len(log.reads))
	}
}

// A compressed batch is replayed, within MaxBatchBytes; one that
// decompresses to more fails the load.
func TestLoaderCompressedBatch(t *testing.T) {
	log := &loaderLog{}
	spec := plainSpec
	spec.Codec = record.CodecGzip
	log.add(t, spec, "a", "b", "c")
	c := &collector{t: t}
	if err := newLoader(log, 1<<20).Load(context.Background(), loaderPartition, c.replay); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, c.keys, "a", "b", "c")

	l := newLoader(log, 1<<20)
	l.MaxBatchBytes = 8
	c = &collector{t: t}
	err := l.Load(context.Background(), loaderPartition, c.replay)
	wantErr(t, err, nil, "replaying __test-3 batch at offset 0")
	wantKeys(t, c.keys)
}

// A Read that returns nothing and does not move on below the log end
// offset fails the load instead of spinning.
func TestLoaderNoProgress(t *testing.T) {
	reads := 0
	stuck := readFunc(func(_ context.Context, _ int32, from int64, _ int32) ([]byte, int64, int64, error) {
		reads++
		if reads > 10 {
			t.Fatal("the loader keeps reading")
		}
		return nil, from, 9, nil
	})
	c := &collector{t: t}
	err := newLoader(stuck, 1<<20).Load(context.Background(), loaderPartition, c.replay)
	wantErr(t, err, nil, "reading __test-3 made no progress at offset 0 (log end offset 9)")
	if reads != 1 {
		t.Fatalf("%d reads, want 1", reads)
	}
}

// A load whose context is cancelled mid-way stops with the context's error
// before its next Read, whether Read ignores the context (the chunk in
// hand is replayed to its end, none after) or fails with it.
func TestLoaderContextCancelledMidway(t *testing.T) {
	build := func(t *testing.T) *loaderLog {
		log := &loaderLog{}
		log.add(t, plainSpec, "a", "b", "c") // 0-2
		log.add(t, plainSpec, "d")           // 3
		log.add(t, plainSpec, "e")           // 4
		return log
	}

	t.Run("cancelled while replaying", func(t *testing.T) {
		log := build(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := &collector{t: t, onKey: func(k string) {
			if k == "b" {
				cancel()
			}
		}}
		err := newLoader(log, 1).Load(ctx, loaderPartition, c.replay)
		wantErr(t, err, context.Canceled, "loading __test-3 stopped at offset 3")
		wantKeys(t, c.keys, "a", "b", "c")
		if len(log.reads) != 1 {
			t.Fatalf("%d reads, want 1", len(log.reads))
		}
	})

	t.Run("cancelled during a read", func(t *testing.T) {
		log := build(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		log.hook = func(ctx context.Context, n int) error {
			if n == 2 {
				cancel()
				return ctx.Err()
			}
			return nil
		}
		c := &collector{t: t}
		err := newLoader(log, 1).Load(ctx, loaderPartition, c.replay)
		wantErr(t, err, context.Canceled, "reading __test-3 at offset 4")
		wantKeys(t, c.keys, "a", "b", "c", "d")
	})

	t.Run("cancelled before", func(t *testing.T) {
		log := build(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := &collector{t: t}
		err := newLoader(log, 1).Load(ctx, loaderPartition, c.replay)
		wantErr(t, err, context.Canceled, "loading __test-3 stopped at offset 0")
		wantKeys(t, c.keys)
		if len(log.reads) != 0 {
			t.Fatalf("%d reads, want 0", len(log.reads))
		}
	})
}

// addBatch appends b at the log end (its base offset set there).
func (l *loaderLog) addBatch(b record.Batch) record.Batch {
	b.SetBaseOffset(l.end())
	l.batches = append(l.batches, b)
	return b
}

// controlBatch builds a control batch holding one record with key.
func controlBatch(t *testing.T, key []byte) record.Batch {
	t.Helper()
	b, err := record.Build(record.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Control: true},
		[]record.Record{{Key: key, KeyLen: int32(len(key)), Value: []byte{0, 0, 0, 0, 0, 0}, ValueLen: 6}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// marker builds a COMMIT or ABORT marker of producer pid at epoch.
func marker(pid int64, epoch int16, commit bool) record.Batch {
	return record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: pid, ProducerEpoch: epoch}, commit, 5)
}

// playbackLog is a Playback writing down what it is handed, one line per
// call, in order.
type playbackLog struct {
	lines  []string
	failAt string // a line whose call fails with errBoom
}

func (p *playbackLog) playback() Playback {
	return Playback{
		Record: func(b BatchContext, offset int64, rec record.Record) error {
			return p.add(fmt.Sprintf("record %s@%d batch %d-%d pid %d/%d txn %t",
				rec.Key, offset, b.BaseOffset, b.LastOffset, b.ProducerID, b.ProducerEpoch, b.Transactional))
		},
		EndTxnMarker: func(m EndTxnMarker) error {
			return p.add(fmt.Sprintf("marker commit %t@%d pid %d/%d", m.Commit, m.Offset, m.ProducerID, m.ProducerEpoch))
		},
	}
}

func (p *playbackLog) add(line string) error {
	p.lines = append(p.lines, line)
	if line == p.failAt {
		return errBoom
	}
	return nil
}

func wantLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("played back:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// Replay hands data records with their batch's producer and COMMIT/ABORT
// markers with theirs, interleaved in log order (CoordinatorLoaderImpl's
// replay and replayEndTransactionMarker), read in one chunk or one batch
// per chunk; control records of other types are skipped.
func TestReplayHandsRecordsAndMarkersInLogOrder(t *testing.T) {
	for _, readBytes := range []int32{1, 1 << 20} {
		t.Run(fmt.Sprint(readBytes), func(t *testing.T) {
			log := &loaderLog{}
			txn := func(pid int64, epoch int16) record.BatchSpec {
				return record.BatchSpec{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: 0, Transactional: true}
			}
			leaderChange := controlBatch(t, []byte{0, 0, 0, byte(kmsg.ControlRecordKeyTypeLeaderChange)})
			pidReset := record.MirrorPidResetBatch(record.ControlBatchSpec{ProducerID: -1, ProducerEpoch: -1})
			unknownType := controlBatch(t, []byte{0, 0, 0x7f, 0x7f})
			log.add(t, plainSpec, "a")        // 0
			log.add(t, txn(7, 2), "t1", "t2") // 1-2
			log.add(t, txn(8, 0), "u1")       // 3
			log.addBatch(marker(7, 2, true))  // 4
			log.addBatch(leaderChange)        // 5
			log.addBatch(pidReset)            // 6
			log.addBatch(unknownType)         // 7
			log.add(t, plainSpec, "b")        // 8
			log.addBatch(marker(8, 0, false)) // 9
			log.add(t, txn(7, 3), "t3")       // 10
			p := &playbackLog{}
			if err := newLoader(log, readBytes).Replay(context.Background(), loaderPartition, p.playback()); err != nil {
				t.Fatal(err)
			}
			wantLines(t, p.lines,
				"record a@0 batch 0-0 pid -1/-1 txn false",
				"record t1@1 batch 1-2 pid 7/2 txn true",
				"record t2@2 batch 1-2 pid 7/2 txn true",
				"record u1@3 batch 3-3 pid 8/0 txn true",
				"marker commit true@4 pid 7/2",
				"record b@8 batch 8-8 pid -1/-1 txn false",
				"marker commit false@9 pid 8/0",
				"record t3@10 batch 10-10 pid 7/3 txn true",
			)
		})
	}
}

// A compressed multi-record transactional batch gives each record its own
// offset and the batch's producer; Accept still filters data batches, and
// a Playback without EndTxnMarker skips control batches as Load does.
func TestReplayBatchContextOfACompressedBatch(t *testing.T) {
	log := &loaderLog{start: 10}
	spec := record.BatchSpec{ProducerID: 9, ProducerEpoch: 4, BaseSequence: 0, Transactional: true, Codec: record.CodecZstd}
	log.add(t, spec, "x", "y", "z") // 10-12
	log.addBatch(marker(9, 4, false))
	spec.Codec = record.CodecGzip
	log.add(t, spec, "w") // 14
	log.add(t, plainSpec, "p")

	p := &playbackLog{}
	if err := newLoader(log, 1<<20).Replay(context.Background(), loaderPartition, p.playback()); err != nil {
		t.Fatal(err)
	}
	wantLines(t, p.lines,
		"record x@10 batch 10-12 pid 9/4 txn true",
		"record y@11 batch 10-12 pid 9/4 txn true",
		"record z@12 batch 10-12 pid 9/4 txn true",
		"marker commit false@13 pid 9/4",
		"record w@14 batch 14-14 pid 9/4 txn true",
		"record p@15 batch 15-15 pid -1/-1 txn false",
	)

	l := newLoader(log, 1<<20)
	l.Accept = func(b record.Batch) bool { return b.Compression() != record.CodecZstd }
	p = &playbackLog{}
	pb := p.playback()
	pb.EndTxnMarker = nil
	if err := l.Replay(context.Background(), loaderPartition, pb); err != nil {
		t.Fatal(err)
	}
	wantLines(t, p.lines,
		"record w@14 batch 14-14 pid 9/4 txn true",
		"record p@15 batch 15-15 pid -1/-1 txn false",
	)
}

// A failing EndTxnMarker stops the replay at the marker, naming its batch;
// a control record whose key does not parse fails the replay, as it fails
// Kafka's ControlRecordType.parse.
func TestReplayMarkerErrors(t *testing.T) {
	log := &loaderLog{}
	log.add(t, plainSpec, "a")       // 0
	log.addBatch(marker(3, 1, true)) // 1
	log.add(t, plainSpec, "b")       // 2
	p := &playbackLog{failAt: "marker commit true@1 pid 3/1"}
	err := newLoader(log, 1<<20).Replay(context.Background(), loaderPartition, p.playback())
	wantErr(t, err, errBoom, "replaying __test-3 batch at offset 1")
	wantLines(t, p.lines, "record a@0 batch 0-0 pid -1/-1 txn false", "marker commit true@1 pid 3/1")

	log = &loaderLog{}
	log.add(t, plainSpec, "a")                     // 0
	log.addBatch(controlBatch(t, []byte{0, 0, 0})) // 1: three bytes, no type
	p = &playbackLog{}
	err = newLoader(log, 1<<20).Replay(context.Background(), loaderPartition, p.playback())
	wantErr(t, err, nil, "replaying __test-3 batch at offset 1: control record at offset 1")
	wantLines(t, p.lines, "record a@0 batch 0-0 pid -1/-1 txn false")

	// Load, which asks for no markers, does not read control records.
	c := &collector{t: t}
	if err := newLoader(log, 1<<20).Load(context.Background(), loaderPartition, c.replay); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, c.keys, "a")
}
