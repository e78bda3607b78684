package storage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/producer"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// TestCleanerCrashAtEveryStep crashes a compaction workload before every
// durable filesystem operation (crashFS, as TestCrashAtEveryStep does for
// appends, truncation and retention) and reopens each crash image
// uncleanly. The workload appends keyed records with flush.messages=1, so
// every record is durable before a cleaning starts; it then cleans three
// times (writing .cleaned files, renaming them to .swap, the old segments
// to .deleted and the .swap files to live names, in several groups per
// cleaning), with new records, tombstones past their horizon and a marker
// of an aborted transaction in between. Whatever the crash point, the
// reopened log must:
//
//   - open, with no .cleaned, .swap or .deleted file left;
//   - hold only records that were appended, at their offsets, with their
//     keys and values, in segments whose offsets never overlap;
//   - hold each key's latest record (a tombstone may be gone only past
//     delete.retention.ms) and every record appended after the last
//     cleaning that had started;
//   - read every offset, and pass the DumpLogSegments index checks;
//   - rebuild, without producer snapshots, the producer state it has with
//     them, and take an idempotent producer's retry as a duplicate;
//   - clean again down to one record per key.
//
// STRAIT_CRASH_SEED and STRAIT_CRASH_ONLY=compaction:<n> replay as in
// TestCrashAtEveryStep.
func TestCleanerCrashAtEveryStep(t *testing.T) { cleanerCrashAtEveryStep(t, 0, 8) }

// cleanerCrashCodecs are shared by every run and check: building a zstd
// encoder per run would dominate the test's time under -race.
var cleanerCrashCodecs = struct {
	comp   *record.Compressor
	decomp *record.Decompressor
}{record.NewCompressor(), record.NewDecompressor()}

// cleanerCrashRun is one execution of the compaction workload.
type cleanerCrashRun struct {
	fs    *crashFS
	clock *clock.Manual
	cfg   LogConfig
	dir   string
	comp  *record.Compressor
	log   *Log

	recs      []propRecord
	lastIdem  []byte // producer 1's last batch
	idemBusy  bool   // producer 1's append is under way
	txnOpen   bool   // producer 5's transaction is open
	txnBusy   bool   // its marker is being appended
	seq       int32
	protected int64 // records at or past it were appended after the last cleaning started

	// What was known at the crash instant: the records appended (those
	// of the step under way may or may not have reached the disk), the
	// checkpoint values for the reopen variants.
	crashRecs, crashProtected             int
	crashIdem                             []byte
	crashTxnOpen, crashTxnBusy            bool
	crashRP, crashStart, crashHW, crashCP int64
	crashedAfterClose                     bool
	closed                                bool
}

func newCleanerCrashRun(crashAt int, seeds []uint64) *cleanerCrashRun {
	cfg := DefaultLogConfig()
	cfg.CleanupPolicy = CleanupPolicy{Compact: true}
	cfg.SegmentBytes, cfg.IndexIntervalBytes, cfg.FlushMessages = 420, 0, 1
	cfg.DeleteRetentionMs = 10_000
	r := &cleanerCrashRun{
		clock: clock.NewManual(time.UnixMilli(1_700_000_000_000)),
		cfg:   cfg,
		dir:   "/data/compacted-0",
		comp:  cleanerCrashCodecs.comp,
	}
	r.fs = newCrashFS(vfs.NewMem(), crashAt, seeds)
	r.fs.onCrash = func() {
		r.crashedAfterClose = r.closed
		r.crashRecs, r.crashProtected = len(r.recs), int(r.protected)
		if !r.idemBusy {
			r.crashIdem = r.lastIdem
		}
		r.crashTxnOpen, r.crashTxnBusy = r.txnOpen, r.txnBusy
		if l := r.log; l != nil {
			r.crashRP, r.crashStart, r.crashHW, r.crashCP = l.RecoveryPoint(), l.LogStartOffset(), l.HighWatermark(), l.CleanerCheckpoint()
		}
	}
	return r
}

func (r *cleanerCrashRun) append(pid int64, txn bool, kvs ...string) error {
	now := r.clock.Now().UnixMilli()
	spec := record.BatchSpec{ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
		Transactional: txn, BaseTimestamp: now, Codec: []record.Codec{record.CodecNone, record.CodecGzip, record.CodecNone, record.CodecSnappy}[len(r.recs)%4]}
	if pid >= 0 {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = pid, 0, r.seq
	}
	var recs []record.Record
	var added []propRecord
	for i := 0; i < len(kvs); i += 2 {
		k, v := kvs[i], kvs[i+1]
		rec := record.Record{Key: []byte(k), KeyLen: int32(len(k)), ValueLen: -1}
		p := propRecord{key: k, tsMs: now, pid: pid, txn: txn}
		if v != "" {
			rec.Value, rec.ValueLen = []byte(v), int32(len(v))
			p.value = []byte(v)
		}
		if txn {
			p.state = 2
		}
		recs = append(recs, rec)
		added = append(added, p)
	}
	b, err := record.Build(spec, recs, r.comp)
	if err != nil {
		return err
	}
	sent := slices.Clone(b)
	r.idemBusy = pid == 1
	info, err := r.log.AppendAsLeader(b, 0, record.OriginClient)
	r.idemBusy = false
	if err != nil {
		return err
	}
	for i := range added {
		added[i].offset = info.FirstOffset + int64(i)
	}
	r.recs = append(r.recs, added...)
	if pid == 1 {
		r.seq += int32(len(recs))
		r.lastIdem = sent
	}
	r.clock.Advance(time.Millisecond)
	return nil
}

func (r *cleanerCrashRun) marker(pid int64, commit bool) error {
	b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: pid, Timestamp: r.clock.Now().UnixMilli()}, commit, 0)
	r.txnBusy = true
	_, err := r.log.AppendAsLeader(b, 0, record.OriginCoordinator)
	r.txnBusy = false
	if err != nil {
		return err
	}
	r.txnOpen = false
	m := propModel{recs: r.recs}
	m.decide(pid, commit)
	return nil
}

func (r *cleanerCrashRun) clean() error {
	r.log.UpdateHighWatermark(r.log.LogEndOffset())
	r.protected = r.log.LogEndOffset()
	res, err := r.log.Clean(context.Background(), CleanOptions{DedupeBufferSize: 40 * offsetMapEntrySize})
	if err == nil && (res.Aborted || res.SegmentsWritten == 0) {
		err = fmt.Errorf("cleaning did nothing: %+v", res)
	}
	return err
}

type cleanerCrashStep struct {
	name string
	run  func(r *cleanerCrashRun) error
}

func cleanerCrashWorkload() []cleanerCrashStep {
	kv := func(i, round int) []string {
		var out []string
		for j := range 3 {
			out = append(out, fmt.Sprintf("k%d", (i*3+j)%7), fmt.Sprintf("v%d.%d.%d%s", round, i, j, strings.Repeat("x", 20)))
		}
		return out
	}
	steps := []cleanerCrashStep{{"open", func(r *cleanerCrashRun) error {
		l, _, err := Open(r.dir, Options{FS: r.fs, Clock: r.clock, Scheduler: InlineScheduler{}, Config: r.cfg,
			Compressor: cleanerCrashCodecs.comp, Decompressor: cleanerCrashCodecs.decomp})
		r.log = l
		return err
	}}}
	for i := range 7 {
		pid := int64(-1)
		if i%3 == 1 {
			pid = 1
		}
		steps = append(steps, cleanerCrashStep{fmt.Sprintf("append %d", i), func(r *cleanerCrashRun) error { return r.append(pid, false, kv(i, 0)...) }})
	}
	steps = append(steps,
		cleanerCrashStep{"txn pid 5", func(r *cleanerCrashRun) error {
			r.txnOpen = true
			return r.append(5, true, "k1", "aborted", "t", "aborted")
		}},
		cleanerCrashStep{"abort pid 5", func(r *cleanerCrashRun) error { return r.marker(5, false) }},
		cleanerCrashStep{"tombstones", func(r *cleanerCrashRun) error { return r.append(-1, false, "k2", "", "k3", "") }},
		cleanerCrashStep{"roll", func(r *cleanerCrashRun) error { return r.log.Roll() }},
		cleanerCrashStep{"clean 1", func(r *cleanerCrashRun) error { return r.clean() }},
	)
	for i := range 3 {
		steps = append(steps, cleanerCrashStep{fmt.Sprintf("append round 1 %d", i), func(r *cleanerCrashRun) error {
			pid := int64(-1)
			if i == 2 {
				pid = 1
			}
			return r.append(pid, false, kv(i+4, 1)...)
		}})
	}
	steps = append(steps,
		cleanerCrashStep{"roll", func(r *cleanerCrashRun) error { return r.log.Roll() }},
		cleanerCrashStep{"clean 2", func(r *cleanerCrashRun) error {
			r.clock.Advance(11 * time.Second) // past the tombstones' horizon
			return r.clean()
		}},
		cleanerCrashStep{"append round 2", func(r *cleanerCrashRun) error { return r.append(-1, false, kv(1, 2)...) }},
		cleanerCrashStep{"roll", func(r *cleanerCrashRun) error { return r.log.Roll() }},
		cleanerCrashStep{"clean 3", func(r *cleanerCrashRun) error {
			r.clock.Advance(11 * time.Second) // past the abort marker's horizon
			return r.clean()
		}},
		cleanerCrashStep{"close", func(r *cleanerCrashRun) error {
			err := r.log.Close()
			r.closed = true
			return err
		}},
	)
	return steps
}

// runTo runs the workload until the crash has happened and its step has
// finished, or to the end. It returns the step the crash fell in and the
// number of operations at the end of each step run.
func (r *cleanerCrashRun) runTo(steps []cleanerCrashStep) (int, []int, error) {
	var ends []int
	for i, s := range steps {
		if err := s.run(r); err != nil {
			return i, ends, fmt.Errorf("step %d (%s): %w", i, s.name, err)
		}
		ends = append(ends, r.fs.n)
		if r.fs.crashed {
			return i, ends, nil
		}
	}
	r.fs.takeClones()
	return len(steps), ends, nil
}

// cleanerCrashAtEveryStep checks every crash point of the cleaning steps
// and every sample-th one of the others (the appends, rolls and close that
// TestCrashAtEveryStep covers at every point).
func cleanerCrashAtEveryStep(t *testing.T, tornSeeds, sample int) {
	base := crashBaseSeed(t)
	t.Logf("torn-tail base seed %d (replay with STRAIT_CRASH_SEED=%d)", base, base)
	steps := cleanerCrashWorkload()
	count := newCleanerCrashRun(-1, nil)
	_, ends, err := count.runTo(steps)
	if err != nil {
		t.Fatalf("counting run: %v", err)
	}
	inCleaning := func(n int) bool {
		for i, end := range ends {
			if n < end {
				return strings.HasPrefix(steps[i].name, "clean")
			}
		}
		return false
	}
	k := count.fs.n
	if os.Getenv("STRAIT_CRASH_OPS") != "" {
		for i, op := range count.fs.ops {
			t.Logf("#%d %s", i, op)
		}
	}
	from, to := 0, k
	if only, ok := crashOnly(t, "compaction"); ok {
		from, to = only, only
	}
	checked, failures, swapsCompleted, points := 0, 0, 0, 0
	for n := from; n <= to; n++ {
		if from != to && !inCleaning(n) && n%sample != 0 {
			continue
		}
		points++
		seeds := make([]uint64, tornSeeds)
		for i := range seeds {
			seeds[i] = base + uint64(n)*uint64(tornSeeds) + uint64(i)
		}
		r := newCleanerCrashRun(n, seeds)
		step, _, err := r.runTo(steps)
		if err != nil {
			t.Fatalf("crash run %d: %v", n, err)
		}
		if !slices.Equal(r.fs.ops[:min(n, len(r.fs.ops))], count.fs.ops[:min(n, len(count.fs.ops))]) {
			t.Fatalf("crash run %d: the operations differ from the counting run: the workload is not deterministic", n)
		}
		stepName := "after the last step"
		if step < len(steps) {
			stepName = steps[step].name
		}
		images := append([]*vfs.MemFS{r.fs.clean}, r.fs.torn...)
		type variant struct {
			name              string
			clean             bool
			rp, start, hw, cp int64
		}
		variants := []variant{
			{name: "no checkpoints"},
			{name: "checkpoints at crash", rp: r.crashRP, start: r.crashStart, hw: r.crashHW, cp: r.crashCP},
		}
		if r.crashedAfterClose {
			variants = append(variants, variant{name: "clean shutdown", clean: true, rp: r.crashRP, start: r.crashStart, hw: r.crashHW, cp: r.crashCP})
		}
		for i, img := range images {
			if names, _ := img.List(r.dir); slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, LogFileSuffix+SwapFileSuffix) }) {
				swapsCompleted++
			}
			for _, v := range variants {
				disk := img.CrashClone(vfs.CrashOptions{})
				o := Options{FS: disk, Clock: clock.NewManual(r.clock.Now()), Scheduler: InlineScheduler{}, Config: r.cfg,
					HadCleanShutdown: v.clean, RecoveryPoint: v.rp, LogStartOffset: v.start, HighWatermark: v.hw, CleanerCheckpoint: v.cp,
					Compressor: cleanerCrashCodecs.comp, Decompressor: cleanerCrashCodecs.decomp}
				problems := cleanerCrashCheck(t, disk, r, o)
				checked++
				if len(problems) > 0 {
					failures++
					if failures <= 10 {
						t.Errorf("crash before op %s in step %d %q, image %d, %s:\n  %s\n  replay: STRAIT_CRASH_SEED=%d STRAIT_CRASH_ONLY=compaction:%d",
							count.fs.opName(n), step, stepName, i, v.name, strings.Join(problems, "\n  "), base, n)
					}
				}
			}
		}
	}
	if failures > 10 {
		t.Errorf("%d failing images in all (first 10 shown)", failures)
	}
	t.Logf("compaction: %d operations, %d crash points checked, %d images, %d with a committed swap to complete", k, points, checked, swapsCompleted)
}

// cleanerCrashCheck reopens a crash image and returns what is wrong.
func cleanerCrashCheck(t *testing.T, disk *vfs.MemFS, r *cleanerCrashRun, o Options) (problems []string) {
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	scratch := disk.CrashClone(vfs.CrashOptions{})
	if names, err := scratch.List(r.dir); err == nil {
		for _, n := range names {
			if strings.HasSuffix(n, SnapshotFileSuffix) {
				scratch.Remove(filepath.Join(r.dir, n))
			}
		}
	}
	l, _, err := crashOpen(r.dir, o)
	if err != nil {
		fail("open: %v", err)
		return problems
	}
	defer l.Close()
	l.UpdateHighWatermark(l.LogEndOffset())
	names, _ := disk.List(r.dir)
	for _, n := range names {
		if strings.HasSuffix(n, CleanedFileSuffix) || strings.HasSuffix(n, SwapFileSuffix) || strings.HasSuffix(n, DeletedFileSuffix) {
			fail("%s left after open", n)
		}
	}

	// Segments hold batches in rising offsets, never overlapping.
	physical, err := crashSegmentBatches(disk, r.dir, l.Segments())
	if err != nil {
		fail("reading segments: %v", err)
	}
	for i := 1; i < len(physical); i++ {
		if physical[i].BaseOffset() <= physical[i-1].LastOffset() {
			fail("batch [%d,%d] follows [%d,%d]", physical[i].BaseOffset(), physical[i].LastOffset(), physical[i-1].BaseOffset(), physical[i-1].LastOffset())
		}
	}
	segs := l.Segments()
	for i, s := range l.segs() {
		for _, b := range crashBatchesOf(disk, r.dir, s.baseOffset) {
			if b.BaseOffset() < s.baseOffset || (i+1 < len(segs) && b.LastOffset() >= segs[i+1]) {
				fail("segment %d holds batch [%d,%d] outside its range", s.baseOffset, b.BaseOffset(), b.LastOffset())
			}
		}
	}

	// Records: appended ones at their offsets; each key's latest there.
	byOffset := map[int64]propRecord{}
	for _, p := range r.recs {
		byOffset[p.offset] = p
	}
	got := readPresentRecordsErr(l, &problems)
	present := map[int64]bool{}
	for _, g := range got {
		want, ok := byOffset[g.offset]
		if !ok || want.key != g.key || !bytes.Equal(want.value, g.value) || (want.value == nil) != g.null {
			fail("read %s=%q at %d, appended %+v", g.key, g.value, g.offset, want)
		}
		present[g.offset] = true
	}
	nowMs := o.Clock.Now().UnixMilli()
	durable := r.recs[:r.crashRecs]
	for _, p := range latestByKey(durable, 1<<62) {
		if !present[p.offset] && !(p.value == nil && nowMs-p.tsMs >= r.cfg.DeleteRetentionMs) {
			fail("latest record of %s at %d is gone", p.key, p.offset)
		}
	}
	for _, p := range durable {
		if p.offset >= int64(r.crashProtected) && p.state == 0 && !present[p.offset] {
			fail("record %d (%s), appended after the last cleaning began, is gone", p.offset, p.key)
		}
	}
	if leo := l.LogEndOffset(); len(durable) > 0 && leo < durable[len(durable)-1].offset+1 {
		fail("log end offset %d, but %d was durable", leo, durable[len(durable)-1].offset)
	}

	// Every offset reads the batch holding it or the next one.
	all, _, err := crashReadAll(l, l.LogStartOffset(), FetchLogEnd)
	if err != nil {
		fail("read: %v", err)
	}
	for off := l.LogStartOffset(); off < l.LogEndOffset(); off++ {
		fd, err := l.Read(off, 1, FetchLogEnd, true)
		if err != nil {
			fail("read at %d: %v", off, err)
			break
		}
		buf := make([]byte, fd.Records.Size)
		if err := fd.Records.ReadInto(buf); err != nil {
			fail("read at %d: %v", off, err)
			break
		}
		i := slices.IndexFunc(all, func(b record.Batch) bool { return b.LastOffset() >= off })
		if i < 0 {
			if len(buf) > 0 {
				fail("read at %d past the last batch returned %d bytes", off, len(buf))
			}
			continue
		}
		if b, err := record.ReadBatch(buf); err != nil || !bytes.Equal(b, all[i]) {
			fail("read at %d did not return batch [%d,%d]", off, all[i].BaseOffset(), all[i].LastOffset())
			break
		}
	}
	if v := crashVerifyIndexes(disk, r.dir); v != "" {
		fail("index check: %s", v)
	}

	// Producer state from the log alone matches the snapshots'.
	o2 := o
	o2.FS, o2.RecoveryPoint, o2.HadCleanShutdown = scratch, 0, false
	l2, _, err := crashOpen(r.dir, o2)
	if err != nil {
		fail("open without snapshots: %v", err)
		return problems
	}
	defer l2.Close()
	l2.UpdateHighWatermark(l2.LogEndOffset())
	view := func(ps []producer.ProducerView) []string {
		var out []string
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%d/%d seq=%d txn=%t", p.ProducerID, p.ProducerEpoch, p.LastSequence, p.CurrentTxnStartOffset >= 0))
		}
		return out
	}
	if p1, p2 := view(l.producers.Producers()), view(l2.producers.Producers()); !slices.Equal(p1, p2) {
		fail("producers %v, rebuilt from the log alone %v", p1, p2)
	}
	// Producer 5's transaction is open if the crash came before its
	// marker was written (and its data was), closed after.
	open := len(l.producers.OngoingTxns()) > 0
	if !r.crashTxnBusy && open != (r.crashTxnOpen && slices.ContainsFunc(got, func(g presentRecord) bool { return g.key == "t" })) {
		fail("open transactions %v at the crash point (open=%t)", l.producers.OngoingTxns(), r.crashTxnOpen)
	}
	if open {
		// The coordinator would abort it.
		b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: 5, Timestamp: o.Clock.Now().UnixMilli()}, false, 0)
		if _, err := l.AppendAsLeader(b, 0, record.OriginCoordinator); err != nil {
			fail("abort: %v", err)
		}
	}
	if r.crashIdem != nil {
		info, err := l.AppendAsLeader(slices.Clone(r.crashIdem), 0, record.OriginClient)
		if err != nil || !info.Duplicate {
			fail("retry of producer 1's last batch: %+v, %v; want a duplicate", info, err)
		}
	}

	// The log cleans on: down to one record per key.
	l.cleanerCheckpoint.Store(0)
	if err := l.Roll(); err != nil {
		fail("roll: %v", err)
		return problems
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	if _, err := l.Clean(context.Background(), CleanOptions{}); err != nil {
		fail("clean after recovery: %v", err)
		return problems
	}
	keys := map[string]bool{}
	for _, g := range readPresentRecordsErr(l, &problems) {
		if keys[g.key] {
			fail("key %s twice after a full cleaning", g.key)
		}
		keys[g.key] = true
	}
	return problems
}

func crashBatchesOf(fsys vfs.FS, dir string, base int64) []record.Batch {
	bs, _ := crashSegmentBatches(fsys, dir, []int64{base})
	return bs
}

// readPresentRecordsErr is readPresentRecords reporting problems instead of
// failing the test.
func readPresentRecordsErr(l *Log, problems *[]string) []presentRecord {
	bs, _, err := crashReadAll(l, l.LogStartOffset(), FetchLogEnd)
	if err != nil {
		*problems = append(*problems, fmt.Sprintf("read: %v", err))
	}
	var out []presentRecord
	for _, b := range bs {
		if b.IsControl() {
			continue
		}
		rr, done, err := l.decomp.OpenRecords(b, 1<<20)
		if err != nil {
			*problems = append(*problems, err.Error())
			continue
		}
		for rr.Remaining() > 0 {
			rec, err := rr.Next(true)
			if err != nil {
				*problems = append(*problems, err.Error())
				break
			}
			out = append(out, presentRecord{offset: b.BaseOffset() + int64(rec.OffsetDelta), key: string(rec.Key), value: rec.Value, null: rec.ValueLen < 0})
		}
		done()
	}
	return out
}
