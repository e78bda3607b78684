package storage

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/producer"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// The cleaner property test appends random keyed records (tombstones,
// idempotent and transactional producers with commits and aborts, every
// codec) to a compacted log, cleans it at random moments with offset maps
// that are often too small for the dirty range, reopens it, and after
// every cleaning checks the log against the list of everything appended:
//
//   - nothing is invented: every record read is one appended, at its
//     original offset, with its key and value; offsets rise strictly;
//   - nothing newer is lost: each key's latest committed record is there,
//     unless it is a tombstone older than delete.retention.ms; every
//     committed record at or past the cleaned range's end is there;
//   - compaction happened: below the cleaned range's end no record has a
//     newer committed record of its key below that end, and no aborted
//     record is left;
//   - reads from every offset start at the batch holding it or the next
//     one; read_committed with the aborted transactions returned, filtered
//     as a consumer does, shows no aborted record;
//   - the indexes pass the DumpLogSegments checks, and an idempotent
//     producer's retry of its last batch is still a duplicate.
//
// At the end the log is cleaned until nothing is dirty: then every key has
// exactly its latest record. STRAIT_CLEANER_SEED=<n> (or -cleaner.seed)
// replays one seed.

var cleanerSeedFlag = flag.Uint64("cleaner.seed", 0, "replay one seed of TestCleanerProperty (env STRAIT_CLEANER_SEED does the same)")

const cleanerPropertySeeds = 8

func TestCleanerProperty(t *testing.T) { cleanerProperty(t, cleanerPropertySeeds, 350) }

func cleanerProperty(t *testing.T, nSeeds, steps int) {
	seeds := make([]uint64, nSeeds)
	base := rand.Uint64()
	for i := range seeds {
		seeds[i] = base + uint64(i)
	}
	if s := os.Getenv("STRAIT_CLEANER_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("STRAIT_CLEANER_SEED=%q: %v", s, err)
		}
		seeds = []uint64{n}
	} else if *cleanerSeedFlag != 0 {
		seeds = []uint64{*cleanerSeedFlag}
	}
	var cleanings, checks int
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c, k := runCleanerProperty(t, seed, steps)
			cleanings += c
			checks += k
		})
	}
	t.Logf("%d seeds from %d: %d cleanings, %d checks (replay one with STRAIT_CLEANER_SEED=<seed>)", len(seeds), base, cleanings, checks)
}

// propRecord is one appended record as the model knows it.
type propRecord struct {
	offset int64
	key    string
	value  []byte // nil: tombstone
	tsMs   int64
	pid    int64 // -1 without a producer id
	txn    bool
	// state: 0 committed (or not transactional), 1 aborted, 2 undecided
	state int
}

type propModel struct {
	recs []propRecord
	// lastBatch is each idempotent producer's last batch, for retries.
	lastBatch map[int64][]byte
}

func (m *propModel) decide(pid int64, commit bool) {
	for i := range m.recs {
		if r := &m.recs[i]; r.pid == pid && r.txn && r.state == 2 {
			r.state = 1
			if commit {
				r.state = 0
			}
		}
	}
}

func runCleanerProperty(t *testing.T, seed uint64, steps int) (cleanings, checks int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	fs := vfs.NewMem()
	cfg := DefaultLogConfig()
	cfg.CleanupPolicy = CleanupPolicy{Compact: true}
	cfg.SegmentBytes = int32(400 + rng.IntN(1200))
	cfg.IndexIntervalBytes = []int32{0, 64, 4096}[rng.IntN(3)]
	cfg.SegmentIndexBytes = []int32{10 << 20, 96, 48}[rng.IntN(3)]
	cfg.DeleteRetentionMs = int64(1000 + rng.IntN(20000))
	keys := 3 + rng.IntN(40)
	dir := "/data/compacted-0"
	comp := record.NewCompressor()
	open := func(cleanerCheckpoint int64, clean bool) *Log {
		l, _, err := Open(dir, Options{FS: fs, Clock: clk, Scheduler: InlineScheduler{}, Config: cfg, HadCleanShutdown: clean,
			CleanerCheckpoint: cleanerCheckpoint})
		if err != nil {
			t.Fatalf("seed %d: open: %v", seed, err)
		}
		return l
	}
	l := open(0, true)
	defer func() { l.Close() }()
	m := &propModel{lastBatch: map[int64][]byte{}}
	seqs := map[int64]int32{}
	openTxn := map[int64]bool{}
	fail := func(step int, format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d step %d: %s\n(replay with STRAIT_CLEANER_SEED=%d)", seed, step, fmt.Sprintf(format, args...), seed)
	}

	appendBatch := func(step int, pid int64, txn bool) {
		n := 1 + rng.IntN(5)
		recs := make([]record.Record, n)
		now := clk.Now().UnixMilli()
		spec := record.BatchSpec{
			ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
			Transactional: txn, BaseTimestamp: now, Codec: record.Codec(max(rng.IntN(8)-3, 0)),
		}
		if pid >= 0 {
			spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = pid, 0, seqs[pid]
		}
		var added []propRecord
		for i := range recs {
			k := fmt.Sprintf("k%d", rng.IntN(keys))
			// tsMs is the append time: a tombstone's horizon counts from
			// the cleaning that first kept it, which is later.
			r := propRecord{key: k, tsMs: now, pid: pid, txn: txn}
			recs[i] = record.Record{Key: []byte(k), KeyLen: int32(len(k)), TimestampDelta: int64(i), ValueLen: -1}
			if rng.IntN(8) != 0 {
				r.value = fmt.Appendf(nil, "v%d.%d-%s", step, i, bytes.Repeat([]byte{'x'}, rng.IntN(20)))
				recs[i].Value, recs[i].ValueLen = r.value, int32(len(r.value))
			}
			if txn {
				r.state = 2
			}
			added = append(added, r)
		}
		b, err := record.Build(spec, recs, comp)
		if err != nil {
			t.Fatal(err)
		}
		sent := slices.Clone(b)
		info, err := l.AppendAsLeader(b, 0, record.OriginClient)
		if err != nil {
			fail(step, "append: %v", err)
		}
		if info.Duplicate {
			fail(step, "a new batch was taken for a duplicate")
		}
		for i := range added {
			added[i].offset = info.FirstOffset + int64(i)
		}
		m.recs = append(m.recs, added...)
		if pid >= 0 {
			seqs[pid] += int32(n)
			if !txn {
				m.lastBatch[pid] = sent
			} else {
				delete(m.lastBatch, pid) // a txn producer's retry check is not modelled
			}
		}
	}

	for step := 0; step < steps; step++ {
		clk.Advance(time.Millisecond)
		switch r := rng.IntN(100); {
		case r < 30:
			appendBatch(step, -1, false)
		case r < 42:
			appendBatch(step, int64(1+rng.IntN(2)), false)
		case r < 52:
			pid := int64(3 + rng.IntN(2))
			openTxn[pid] = true
			appendBatch(step, pid, true)
		case r < 58:
			for _, pid := range sortedKeys(openTxn) {
				commit := rng.IntN(5) < 3
				b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: pid, Timestamp: clk.Now().UnixMilli()}, commit, 0)
				if _, err := l.AppendAsLeader(b, 0, record.OriginCoordinator); err != nil {
					fail(step, "marker: %v", err)
				}
				m.decide(pid, commit)
				delete(openTxn, pid)
				break
			}
		case r < 66:
			if err := l.Roll(); err != nil {
				fail(step, "roll: %v", err)
			}
		case r < 76:
			l.UpdateHighWatermark(l.LogEndOffset())
		case r < 88:
			opts := CleanOptions{}
			if rng.IntN(2) == 0 {
				opts.DedupeBufferSize = int64(2+rng.IntN(30)) * offsetMapEntrySize
			}
			res, err := l.Clean(context.Background(), opts)
			if err != nil {
				fail(step, "clean: %v", err)
			}
			if res.Aborted {
				fail(step, "clean aborted with no concurrent change")
			}
			cleanings++
			checks += checkCleaned(t, l, m, res.EndOffset, cfg, clk, func(f string, a ...any) { fail(step, f, a...) })
		case r < 92:
			clk.Advance(time.Duration(rng.Int64N(2*cfg.DeleteRetentionMs)) * time.Millisecond)
		case r < 95:
			for _, pid := range sortedKeys(m.lastBatch) {
				retry := slices.Clone(m.lastBatch[pid])
				info, err := l.AppendAsLeader(retry, 0, record.OriginClient)
				if err != nil || !info.Duplicate {
					fail(step, "retry of producer %d's last batch: %+v %v; want a duplicate", pid, info, err)
				}
				break
			}
		default:
			cp, hw := l.CleanerCheckpoint(), l.HighWatermark()
			before := l.producers.Producers()
			if err := l.Close(); err != nil {
				fail(step, "close: %v", err)
			}
			if rng.IntN(2) == 0 {
				l = open(cp, true) // what the LogManager would pass
				break
			}
			// Rebuild producer state from the cleaned log alone: the
			// batches the cleaner kept must give every producer's epoch,
			// last sequence and open transaction back.
			names, _ := fs.List(dir)
			for _, n := range names {
				if strings.HasSuffix(n, SnapshotFileSuffix) {
					fs.Remove(filepath.Join(dir, n))
				}
			}
			l = open(cp, false)
			l.UpdateHighWatermark(hw)
			after := l.producers.Producers()
			for _, p := range before {
				i := slices.IndexFunc(after, func(a producer.ProducerView) bool { return a.ProducerID == p.ProducerID })
				if i < 0 || after[i].ProducerEpoch != p.ProducerEpoch || after[i].LastSequence != p.LastSequence ||
					(after[i].CurrentTxnStartOffset >= 0) != (p.CurrentTxnStartOffset >= 0) {
					fail(step, "producer %+v rebuilt from the cleaned log as %+v", p, after)
				}
			}
			if got := len(l.producers.OngoingTxns()); got != len(openTxn) {
				fail(step, "rebuilt producer state has %d open transactions, want %d", got, len(openTxn))
			}
		}
	}

	// Finish: decide every transaction, then clean until nothing is dirty.
	for _, pid := range sortedKeys(openTxn) {
		b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: pid, Timestamp: clk.Now().UnixMilli()}, true, 0)
		if _, err := l.AppendAsLeader(b, 0, record.OriginCoordinator); err != nil {
			fail(steps, "marker: %v", err)
		}
		m.decide(pid, true)
	}
	if err := l.Roll(); err != nil {
		fail(steps, "roll: %v", err)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	for i := 0; l.CleanerCheckpoint() < l.LogEndOffset(); i++ {
		if i > 1000 {
			fail(steps, "cleaning makes no progress at %d", l.CleanerCheckpoint())
		}
		res, err := l.Clean(context.Background(), CleanOptions{DedupeBufferSize: 8 * offsetMapEntrySize})
		if err != nil {
			fail(steps, "clean: %v", err)
		}
		cleanings++
		checks += checkCleaned(t, l, m, res.EndOffset, cfg, clk, func(f string, a ...any) { fail(steps, f, a...) })
	}
	// One more full cleaning leaves exactly each key's latest record
	// (tombstones included: their horizon is only set now).
	l.cleanerCheckpoint.Store(0)
	res, err := l.Clean(context.Background(), CleanOptions{})
	if err != nil || res.EndOffset != l.LogEndOffset() {
		fail(steps, "final clean: %+v %v", res, err)
	}
	checks += checkCleaned(t, l, m, res.EndOffset, cfg, clk, func(f string, a ...any) { fail(steps, f, a...) })
	// Past the delete horizon every tombstone goes: the cleaning above set
	// the horizon on those that had none.
	clk.Advance(time.Duration(cfg.DeleteRetentionMs) * time.Millisecond)
	l.cleanerCheckpoint.Store(0)
	if res, err = l.Clean(context.Background(), CleanOptions{}); err != nil || res.EndOffset != l.LogEndOffset() {
		fail(steps, "clean past the horizon: %+v %v", res, err)
	}
	checks += checkCleaned(t, l, m, res.EndOffset, cfg, clk, func(f string, a ...any) { fail(steps, f, a...) })
	// checkCleaned showed every record left is its key's latest; and each
	// key whose latest record has a value has it.
	values := 0
	for _, g := range readPresentRecords(t, l) {
		if g.null {
			fail(steps, "tombstone of %s at %d outlived delete.retention.ms", g.key, g.offset)
		}
		values++
	}
	wantValues := 0
	for _, r := range latestByKey(m.recs, 1<<62) {
		if r.value != nil {
			wantValues++
		}
	}
	if values != wantValues {
		fail(steps, "after a full cleaning %d records with values remain, want %d (one per live key)", values, wantValues)
	}
	return cleanings, checks
}

func sortedKeys[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// presentRecord is a record read back from the log.
type presentRecord struct {
	offset int64
	key    string
	value  []byte
	null   bool
}

func readPresentRecords(t *testing.T, l *Log) []presentRecord {
	t.Helper()
	var out []presentRecord
	for _, b := range readAll(t, l, l.LogStartOffset(), FetchLogEnd) {
		if b.IsControl() {
			continue
		}
		rr, done, err := l.decomp.OpenRecords(b, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for {
			r, err := rr.Next(true)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, presentRecord{offset: b.BaseOffset() + int64(r.OffsetDelta), key: string(r.Key), value: r.Value, null: r.ValueLen < 0})
		}
		done()
	}
	return out
}

// latestByKey is each key's latest committed record below end.
func latestByKey(recs []propRecord, end int64) map[string]propRecord {
	out := map[string]propRecord{}
	for _, r := range recs {
		if r.state == 0 && r.offset < end {
			out[r.key] = r
		}
	}
	return out
}

// checkCleaned checks the log after a cleaning that ended at end; it
// returns the number of checks made.
func checkCleaned(t *testing.T, l *Log, m *propModel, end int64, cfg LogConfig, clk *clock.Manual, fail func(string, ...any)) int {
	t.Helper()
	checks := 0
	byOffset := map[int64]propRecord{}
	for _, r := range m.recs {
		byOffset[r.offset] = r
	}
	got := readPresentRecords(t, l)
	present := map[int64]bool{}
	prev := int64(-1)
	for _, g := range got {
		checks++
		if g.offset <= prev {
			fail("offset %d after %d", g.offset, prev)
		}
		prev = g.offset
		want, ok := byOffset[g.offset]
		if !ok || want.key != g.key || !bytes.Equal(want.value, g.value) || (want.value == nil) != g.null {
			fail("read %s=%q at %d, appended %+v", g.key, g.value, g.offset, want)
		}
		present[g.offset] = true
		if g.offset < end && want.state == 1 {
			fail("aborted record %d (%s) survived a cleaning to %d", g.offset, g.key, end)
		}
	}
	nowMs := clk.Now().UnixMilli()
	// Nothing newer is lost.
	for _, r := range latestByKey(m.recs, 1<<62) {
		checks++
		if !present[r.offset] && !(r.value == nil && nowMs-r.tsMs >= cfg.DeleteRetentionMs) {
			fail("latest record of %s at %d (value %q) is gone", r.key, r.offset, r.value)
		}
	}
	for _, r := range m.recs {
		if r.offset >= end && r.state == 0 {
			checks++
			if !present[r.offset] {
				fail("record %d (%s) past the cleaned end %d is gone", r.offset, r.key, end)
			}
		}
	}
	// Compaction happened below end.
	newest := map[string]int64{}
	for _, r := range m.recs {
		if r.state == 0 && r.offset < end {
			newest[r.key] = r.offset
		}
	}
	for _, g := range got {
		if g.offset < end {
			checks++
			if newest[g.key] != g.offset {
				fail("record %d of %s survived a cleaning to %d; %s's newest below it is %d", g.offset, g.key, end, g.key, newest[g.key])
			}
		}
	}
	// Reads from every offset.
	all := readAll(t, l, l.LogStartOffset(), FetchLogEnd)
	for off := l.LogStartOffset(); off < l.LogEndOffset(); off++ {
		checks++
		fd, err := l.Read(off, 1, FetchLogEnd, true)
		if err != nil {
			fail("read at %d: %v", off, err)
		}
		i := slices.IndexFunc(all, func(b record.Batch) bool { return b.LastOffset() >= off })
		buf := make([]byte, fd.Records.Size)
		if err := fd.Records.ReadInto(buf); err != nil {
			fail("read at %d: %v", off, err)
		}
		if i < 0 {
			if len(buf) != 0 {
				fail("read at %d past the last batch returned %d bytes", off, len(buf))
			}
			continue
		}
		if b, err := record.ReadBatch(buf); err != nil || !bytes.Equal(b, all[i]) {
			fail("read at %d did not return batch [%d,%d]: %v", off, all[i].BaseOffset(), all[i].LastOffset(), err)
		}
	}
	// read_committed, filtered as a consumer filters it, shows no aborted
	// record and every committed one that is present.
	checks += checkReadCommitted(t, l, byOffset, present, fail)
	if v := verifyLikeDumpLogSegments(t, l.fsys, l.dir); v != "" {
		for _, line := range bytes.Split([]byte(v), []byte("\n")) {
			if !bytes.Contains(line, []byte(" batches, ")) {
				fail("index check: %s", v)
			}
		}
	}
	return checks
}

// checkReadCommitted reads with FetchTxnCommitted and drops the data of
// the aborted transactions returned, the way a consumer does
// (Fetcher's abortedProducerIds); what remains must be exactly the present
// committed records below the LSO.
func checkReadCommitted(t *testing.T, l *Log, byOffset map[int64]propRecord, present map[int64]bool, fail func(string, ...any)) int {
	t.Helper()
	lso := l.LastStableOffset()
	var seen []int64
	off := l.LogStartOffset()
	abortedPids := map[int64]bool{}
	var pending []int64 // first offsets of aborted txns not yet reached, with pids
	pendingPid := map[int64][]int64{}
	for {
		fd, err := l.Read(off, 1<<20, FetchTxnCommitted, true)
		if err != nil {
			fail("read_committed at %d: %v", off, err)
		}
		for _, a := range fd.AbortedTxns {
			if !slices.Contains(pendingPid[a.FirstOffset], a.ProducerID) {
				pending = append(pending, a.FirstOffset)
				pendingPid[a.FirstOffset] = append(pendingPid[a.FirstOffset], a.ProducerID)
			}
		}
		slices.Sort(pending)
		if fd.Records.Size == 0 {
			break
		}
		buf := make([]byte, fd.Records.Size)
		if err := fd.Records.ReadInto(buf); err != nil {
			fail("read_committed: %v", err)
		}
		it := record.NewIter(buf)
		n := 0
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			if b.LastOffset() < off {
				continue
			}
			n++
			off = b.NextOffset()
			for len(pending) > 0 && pending[0] <= b.LastOffset() {
				for _, pid := range pendingPid[pending[0]] {
					abortedPids[pid] = true
				}
				delete(pendingPid, pending[0])
				pending = pending[1:]
			}
			if b.IsControl() {
				if t, err := l.decomp.ControlType(b); b.RecordCount() > 0 && err == nil && t == kmsg.ControlRecordKeyTypeAbort {
					delete(abortedPids, b.ProducerID())
				}
				continue
			}
			if b.IsTransactional() && abortedPids[b.ProducerID()] {
				continue
			}
			rr, done, err := l.decomp.OpenRecords(b, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			for {
				r, err := rr.Next(false)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				seen = append(seen, b.BaseOffset()+int64(r.OffsetDelta))
			}
			done()
		}
		if n == 0 {
			break
		}
	}
	var want []int64
	for o := range present {
		if o < lso && byOffset[o].state == 0 {
			want = append(want, o)
		}
	}
	slices.Sort(want)
	if !slices.Equal(seen, want) {
		var extra []int64
		for _, o := range seen {
			if !slices.Contains(want, o) {
				extra = append(extra, o)
			}
		}
		fail("read_committed shows %d records, want %d; unexpected %v", len(seen), len(want), extra)
	}
	return len(want) + 1
}
