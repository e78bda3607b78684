package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/epoch"
	"github.com/strait-io/strait/storage/index"
	"github.com/strait-io/strait/storage/producer"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// Crash at every step. Each workload below is run once to number its
// durable filesystem operations (crashFS), then once more for every n from
// 0 to that count, crashing just before operation n: the MemFS is cloned as a
// power loss would leave it (only synced bytes, or with a torn-tail seed a
// random prefix of each unsynced tail), the clone is reopened uncleanly, and
// the recovered log is checked against a model of what the workload wrote
// and what it had been promised was durable:
//
//   - Open succeeds and does not panic.
//   - Durability: every batch below the durable offset (acknowledged with
//     flush.messages=1, or below the last completed Flush, roll flush or
//     Close) is there, byte for byte.
//   - Prefix: the batches read from the log start are a contiguous run of
//     some history the workload wrote (truncation starts a new history), so
//     nothing is invented, reordered or duplicated.
//   - Every offset in [log start, LEO) reads the batch holding it, and the
//     indexes pass the DumpLogSegments checks.
//   - The leader epoch cache is the one the surviving batches imply.
//   - Producer state equals a rebuild with every snapshot removed, and the
//     LSO and aborted transactions match the surviving markers.
//
// The checkpoints a broker would pass to Open are varied: all zero (none
// written yet) and the log's own values at the crash instant (written just
// before it). After a completed Close the broker would also have written the
// clean shutdown marker, so crash points from then until the next Open
// finishes are also reopened clean.
//
// Beyond the list above, each segment must know its largest timestamp, and
// the recovered log must stay usable: an idempotent producer's retry of its
// last batch is recognised as a duplicate and a new append lands at the log
// end. Three behaviours Kafka shares are allowed and counted (crashStats).
//
// STRAIT_CRASH_SEED=<n> replays the torn-tail seeds of a failed run;
// STRAIT_CRASH_ONLY=<workload>:<n> checks a single crash point;
// STRAIT_CRASH_OPS=1 logs each workload's numbered operations by step.

// crashTornSeeds is the number of torn-tail images per crash point, besides
// the synced-only one; the long variant (crash_long_test.go) takes more.
const crashTornSeeds = 3

// crashBatch is one batch the workload wrote, as it is in the log.
type crashBatch = record.Batch

// crashModel is what the workload knows after a step.
type crashModel struct {
	// versions are the histories written so far; truncation starts a new
	// one. A slice's length is its length at the end of the step.
	versions [][]crashBatch
	// durable is the offset below which the current history was promised
	// durable.
	durable int64
	// logStart is the log start offset after the step.
	logStart int64
	// cleanMarker is set while a broker would have a clean shutdown marker
	// on disk: from a completed Close until the next Open has finished.
	cleanMarker bool
	// opsEnd is the number of durable operations when the step ended.
	opsEnd int
}

func (m crashModel) current() []crashBatch { return m.versions[len(m.versions)-1] }

// crashStep is one call of a workload. It updates the run's model.
type crashStep struct {
	name string
	run  func(r *crashRun) error
}

type crashWorkload struct {
	name  string
	cfg   func(c *LogConfig)
	steps []crashStep
}

// crashRun is one execution of a workload.
type crashRun struct {
	fs    *crashFS
	clock *clock.Manual
	cfg   LogConfig
	dir   string
	comp  *record.Compressor

	log     *Log // the open log, nil between Close and Open
	lastLog *Log // the last log opened, for its checkpoint values

	versions    [][]crashBatch
	durable     int64
	cleanMarker bool
	seqs        map[int64]int32

	// The checkpoint values at the crash instant, and the step it fell in.
	crashRP, crashLogStart, crashHW int64
	crashedIn                       int
	step                            int // the step running
}

func newCrashRun(w *crashWorkload, crashAt int, seeds []uint64) *crashRun {
	cfg := DefaultLogConfig()
	w.cfg(&cfg)
	r := &crashRun{
		clock:    clock.NewManual(time.UnixMilli(1_700_000_000_000)),
		cfg:      cfg,
		dir:      "/data/topic-0",
		comp:     record.NewCompressor(),
		versions: [][]crashBatch{nil},
		seqs:     map[int64]int32{},
	}
	// The log directory exists, durably, as LogManager leaves it: the
	// partition directory is then created the way a broker creates it,
	// its syncs in the task Open schedules (run inline here), so crash
	// points fall between them (new_dir.go).
	mem := vfs.NewMem()
	if err := vfs.MkdirAllDurable(mem, filepath.Dir(r.dir)); err != nil {
		panic(err)
	}
	r.fs = newCrashFS(mem, crashAt, seeds)
	r.fs.onCrash = func() {
		r.crashedIn = r.step
		l := r.log
		if l == nil {
			l = r.lastLog
		}
		if l != nil {
			r.crashRP, r.crashLogStart, r.crashHW = l.RecoveryPoint(), l.LogStartOffset(), l.HighWatermark()
		}
	}
	return r
}

func (r *crashRun) model() crashModel {
	vs := make([][]crashBatch, len(r.versions))
	copy(vs, r.versions)
	m := crashModel{versions: vs, durable: r.durable, cleanMarker: r.cleanMarker, opsEnd: r.fs.n}
	if r.log != nil {
		m.logStart = r.log.LogStartOffset()
	} else if r.lastLog != nil {
		m.logStart = r.lastLog.LogStartOffset()
	}
	return m
}

// runSteps runs the workload until the crash has happened and the step it
// happened in has finished (the rest cannot change the crash image), or to
// the end. It returns the model after each step run.
func (r *crashRun) runSteps(w *crashWorkload) ([]crashModel, error) {
	var models []crashModel
	for i, s := range w.steps {
		r.step = i
		if err := s.run(r); err != nil {
			return models, fmt.Errorf("step %d (%s): %w", i, s.name, err)
		}
		models = append(models, r.model())
		if r.fs.crashed {
			return models, nil
		}
	}
	r.step = len(w.steps)
	r.fs.takeClones() // crash after the last operation
	return models, nil
}

func (r *crashRun) open(clean bool) error {
	o := Options{FS: r.fs, Clock: r.clock, Scheduler: InlineScheduler{}, Config: r.cfg, HadCleanShutdown: clean}
	if r.lastLog != nil {
		o.RecoveryPoint, o.LogStartOffset, o.HighWatermark = r.lastLog.RecoveryPoint(), r.lastLog.LogStartOffset(), r.lastLog.HighWatermark()
	}
	l, _, err := Open(r.dir, o)
	if err != nil {
		return err
	}
	r.log, r.lastLog = l, l
	r.cleanMarker = false // the broker removes the marker once its logs are open
	return nil
}

func (r *crashRun) close() error {
	leo := r.log.LogEndOffset()
	if err := r.log.Close(); err != nil {
		return err
	}
	r.durable = leo
	r.log = nil
	r.cleanMarker = true
	return nil
}

// crashAppend describes one leader append.
type crashAppend struct {
	records, valueSize int
	epoch              int32
	pid                int64 // 0: no producer id
	pepoch             int16
	txn                bool
}

func (r *crashRun) buildBatch(a crashAppend) []byte {
	spec := record.BatchSpec{
		PartitionLeaderEpoch: a.epoch,
		ProducerID:           record.NoProducerID,
		ProducerEpoch:        record.NoProducerEpoch,
		BaseSequence:         record.NoSequence,
		Transactional:        a.txn,
		BaseTimestamp:        r.clock.Now().UnixMilli(),
	}
	if a.pid > 0 {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = a.pid, a.pepoch, r.seqs[a.pid]
	}
	recs := make([]record.Record, a.records)
	for i := range recs {
		v := []byte(fmt.Sprintf("v%d@%d", i, r.clock.Now().UnixMilli()))
		if a.valueSize > len(v) {
			v = append(v, bytes.Repeat([]byte{'x'}, a.valueSize-len(v))...)
		}
		// Spread timestamps so time index entries differ.
		recs[i] = record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v)), TimestampDelta: int64(i)}
	}
	b, err := record.Build(spec, recs, r.comp)
	if err != nil {
		panic(err)
	}
	return b
}

// appendBuf appends buf as leader and records it in the model.
func (r *crashRun) appendBuf(buf []byte, epoch int32, origin record.AppendOrigin) (AppendInfo, error) {
	l := r.log
	segsBefore := l.Segments()
	info, err := l.AppendAsLeader(buf, epoch, origin)
	if err != nil {
		return info, err
	}
	r.clock.Advance(time.Millisecond)
	if info.Duplicate {
		return info, nil
	}
	cur := r.versions[len(r.versions)-1]
	r.versions[len(r.versions)-1] = append(cur, slices.Clone(record.Batch(buf)))
	if r.cfg.FlushMessages == 1 {
		r.durable = info.LastOffset + 1
	}
	// InlineScheduler runs a roll's flush of the old segment before the
	// append returns: everything below the new segment is durable.
	segsAfter := l.Segments()
	if last := segsAfter[len(segsAfter)-1]; last > segsBefore[len(segsBefore)-1] {
		r.durable = max(r.durable, last)
	}
	return info, nil
}

func (r *crashRun) append(a crashAppend) error {
	buf := r.buildBatch(a)
	info, err := r.appendBuf(buf, a.epoch, record.OriginClient)
	if err != nil {
		return err
	}
	if a.pid > 0 && !info.Duplicate {
		r.seqs[a.pid] += int32(a.records)
	}
	return nil
}

func (r *crashRun) marker(pid int64, pepoch int16, commit bool, epoch int32) error {
	b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: pid, ProducerEpoch: pepoch, Timestamp: r.clock.Now().UnixMilli()}, commit, 0)
	_, err := r.appendBuf(b, epoch, record.OriginCoordinator)
	return err
}

func (r *crashRun) pidReset(epoch int32) error {
	b := record.MirrorPidResetBatch(record.ControlBatchSpec{
		ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch,
		Timestamp: r.clock.Now().UnixMilli(), PartitionLeaderEpoch: epoch,
	})
	_, err := r.appendBuf(b, epoch, record.OriginCoordinator)
	return err
}

func (r *crashRun) flush() error {
	leo := r.log.LogEndOffset()
	if err := r.log.Flush(); err != nil {
		return err
	}
	r.durable = max(r.durable, leo)
	return nil
}

// truncateTo truncates at a batch boundary and starts a new history.
func (r *crashRun) truncateTo(target int64) error {
	cur := r.versions[len(r.versions)-1]
	i := slices.IndexFunc(cur, func(b crashBatch) bool { return b.BaseOffset() == target })
	if i < 0 {
		return fmt.Errorf("workload bug: %d is not a batch boundary", target)
	}
	if _, err := r.log.TruncateTo(target); err != nil {
		return err
	}
	r.versions = append(r.versions, slices.Clone(cur[:i]))
	r.durable = min(r.durable, target)
	return nil
}

func (r *crashRun) truncateFully(offset int64) error {
	if err := r.log.TruncateFullyAndStartAt(offset); err != nil {
		return err
	}
	r.versions = append(r.versions, nil)
	r.durable = offset
	return nil
}

func crashWorkloads() []*crashWorkload {
	appendStep := func(name string, a crashAppend) crashStep {
		return crashStep{name, func(r *crashRun) error { return r.append(a) }}
	}
	open := crashStep{"open", func(r *crashRun) error { return r.open(false) }}
	openClean := crashStep{"open clean", func(r *crashRun) error { return r.open(true) }}
	closeStep := crashStep{"close", func(r *crashRun) error { return r.close() }}
	flush := crashStep{"flush", func(r *crashRun) error { return r.flush() }}
	withHW := func(s crashStep) crashStep {
		return crashStep{s.name + "+hw", func(r *crashRun) error {
			if err := s.run(r); err != nil {
				return err
			}
			r.log.UpdateHighWatermark(r.log.LogEndOffset())
			return nil
		}}
	}
	retention := crashStep{"retention", func(r *crashRun) error {
		_, err := r.log.DeleteOldSegments()
		return err
	}}

	var ws []*crashWorkload

	// (a) Every append is flushed before it is acknowledged; small
	// segments make appends roll, with their producer snapshots and
	// background (here inline) flushes.
	a := &crashWorkload{name: "flush-every-append", cfg: func(c *LogConfig) {
		c.SegmentBytes, c.IndexIntervalBytes, c.FlushMessages = 600, 0, 1
	}}
	a.steps = append(a.steps, open)
	for i := range 10 {
		ap := crashAppend{records: 2 + i%2, valueSize: 60, epoch: 1 + int32(i/5)}
		if i%3 == 1 {
			ap.pid, ap.pepoch = 7, 0
		}
		a.steps = append(a.steps, appendStep(fmt.Sprintf("append %d", i), ap))
	}
	ws = append(ws, a)

	// (b) Idempotent and transactional producers, commit and abort markers
	// and a MIRROR_PID_RESET, flushed only once midway (and by rolls).
	b := &crashWorkload{name: "transactions", cfg: func(c *LogConfig) {
		c.SegmentBytes, c.IndexIntervalBytes = 900, 100
	}}
	b.steps = []crashStep{
		open,
		appendStep("idempotent pid 1", crashAppend{records: 2, valueSize: 40, epoch: 1, pid: 1}),
		appendStep("txn pid 2", crashAppend{records: 2, valueSize: 40, epoch: 1, pid: 2, txn: true}),
		appendStep("txn pid 3", crashAppend{records: 1, valueSize: 40, epoch: 1, pid: 3, txn: true}),
		appendStep("plain", crashAppend{records: 3, valueSize: 40, epoch: 1}),
		{"commit pid 2", func(r *crashRun) error { return r.marker(2, 0, true, 1) }},
		appendStep("idempotent pid 1 again", crashAppend{records: 2, valueSize: 40, epoch: 1, pid: 1}),
		flush,
		appendStep("txn pid 3 more", crashAppend{records: 2, valueSize: 40, epoch: 1, pid: 3, txn: true}),
		{"abort pid 3", func(r *crashRun) error { return r.marker(3, 0, false, 1) }},
		{"mirror pid reset", func(r *crashRun) error {
			if err := r.pidReset(2); err != nil {
				return err
			}
			clear(r.seqs) // no producer had an open transaction: all start over
			return nil
		}},
		appendStep("pid 1 after reset", crashAppend{records: 1, valueSize: 40, epoch: 2, pid: 1}),
		appendStep("txn pid 4 (left open)", crashAppend{records: 2, valueSize: 40, epoch: 2, pid: 4, txn: true}),
		appendStep("txn pid 2 again", crashAppend{records: 1, valueSize: 40, epoch: 2, pid: 2, txn: true}),
		{"abort pid 2", func(r *crashRun) error { return r.marker(2, 0, false, 2) }},
		appendStep("plain 2", crashAppend{records: 2, valueSize: 40, epoch: 2}),
	}
	ws = append(ws, b)

	// (c) Truncation to a batch boundary across segments, a new epoch,
	// Flush, then truncation of the whole log and a restart at an offset.
	c := &crashWorkload{name: "truncation", cfg: func(c *LogConfig) {
		c.SegmentBytes, c.IndexIntervalBytes = 500, 0
	}}
	c.steps = []crashStep{open}
	for i := range 6 {
		c.steps = append(c.steps, appendStep(fmt.Sprintf("append e1 %d", i), crashAppend{records: 2, valueSize: 50, epoch: 1}))
	}
	c.steps = append(c.steps,
		flush,
		appendStep("append e1 6", crashAppend{records: 2, valueSize: 50, epoch: 1}),
		crashStep{"truncate to 6", func(r *crashRun) error { return r.truncateTo(6) }},
		appendStep("append e2 idempotent", crashAppend{records: 2, valueSize: 50, epoch: 2, pid: 5}),
		appendStep("append e2", crashAppend{records: 3, valueSize: 50, epoch: 2}),
		appendStep("append e2 idempotent 2", crashAppend{records: 2, valueSize: 50, epoch: 2, pid: 5}),
		flush,
		appendStep("append e2 unflushed", crashAppend{records: 2, valueSize: 50, epoch: 2}),
		crashStep{"truncate fully at 100", func(r *crashRun) error {
			clear(r.seqs)
			return r.truncateFully(100)
		}},
		appendStep("append e3", crashAppend{records: 2, valueSize: 50, epoch: 3, pid: 5, pepoch: 1}),
		appendStep("append e3 2", crashAppend{records: 2, valueSize: 50, epoch: 3}),
		flush,
		appendStep("append e3 unflushed", crashAppend{records: 1, valueSize: 50, epoch: 3}),
	)
	ws = append(ws, c)

	// (d) Retention by size, DeleteRecords and retention by log start and
	// by time, with delayed file removal.
	d := &crashWorkload{name: "retention", cfg: func(c *LogConfig) {
		c.SegmentBytes, c.IndexIntervalBytes, c.FlushMessages = 500, 0, 1
		c.RetentionBytes, c.RetentionMs, c.FileDeleteDelayMs = 1200, 60_000, 1000
	}}
	d.steps = []crashStep{open}
	for i := range 8 {
		d.steps = append(d.steps, withHW(appendStep(fmt.Sprintf("append %d", i), crashAppend{records: 2, valueSize: 50, epoch: 1 + int32(i/4)})))
	}
	d.steps = append(d.steps,
		retention,
		crashStep{"delete records", func(r *crashRun) error {
			_, err := r.log.MaybeIncrementLogStartOffset(r.log.LogEndOffset() - 3)
			return err
		}},
		retention,
		crashStep{"remove deleted", func(r *crashRun) error {
			r.clock.Advance(2 * time.Second)
			return r.log.RemoveDeletedSegments()
		}},
		withHW(appendStep("append 8", crashAppend{records: 2, valueSize: 50, epoch: 3})),
		crashStep{"retention by time", func(r *crashRun) error {
			r.clock.Advance(2 * time.Minute)
			_, err := r.log.DeleteOldSegments()
			return err
		}},
		withHW(appendStep("append 9", crashAppend{records: 2, valueSize: 50, epoch: 3})),
	)
	ws = append(ws, d)

	// (e) Close and clean reopen: the final flush, the producer snapshot at
	// the log end and the time index entries Close writes.
	e := &crashWorkload{name: "close-reopen", cfg: func(c *LogConfig) {
		c.SegmentBytes, c.IndexIntervalBytes = 700, 100
	}}
	e.steps = []crashStep{
		open,
		appendStep("idempotent pid 1", crashAppend{records: 2, valueSize: 50, epoch: 1, pid: 1}),
		appendStep("txn pid 2", crashAppend{records: 2, valueSize: 50, epoch: 1, pid: 2, txn: true}),
		appendStep("plain", crashAppend{records: 3, valueSize: 50, epoch: 1}),
		{"roll", func(r *crashRun) error {
			if err := r.log.Roll(); err != nil {
				return err
			}
			r.durable = max(r.durable, r.log.LogEndOffset())
			return nil
		}},
		appendStep("idempotent pid 1 again", crashAppend{records: 2, valueSize: 50, epoch: 1, pid: 1}),
		closeStep,
		openClean,
		appendStep("idempotent pid 1 after reopen", crashAppend{records: 1, valueSize: 50, epoch: 2, pid: 1}),
		{"commit pid 2", func(r *crashRun) error { return r.marker(2, 0, true, 2) }},
		appendStep("txn pid 3", crashAppend{records: 2, valueSize: 50, epoch: 2, pid: 3, txn: true}),
		{"abort pid 3", func(r *crashRun) error { return r.marker(3, 0, false, 2) }},
		closeStep,
		openClean,
		appendStep("plain unflushed", crashAppend{records: 2, valueSize: 50, epoch: 2}),
	}
	ws = append(ws, e)
	return ws
}

func crashBaseSeed(t *testing.T) uint64 {
	if s := os.Getenv("STRAIT_CRASH_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("STRAIT_CRASH_SEED: %v", err)
		}
		return n
	}
	return rand.Uint64()
}

// crashOnly parses STRAIT_CRASH_ONLY=<workload>:<n>.
func crashOnly(t *testing.T, workload string) (int, bool) {
	s := os.Getenv("STRAIT_CRASH_ONLY")
	if s == "" {
		return 0, false
	}
	name, n, ok := strings.Cut(s, ":")
	if !ok {
		t.Fatalf("STRAIT_CRASH_ONLY=%q: want <workload>:<n>", s)
	}
	if name != workload {
		t.Skipf("STRAIT_CRASH_ONLY selects %s", name)
	}
	i, err := strconv.Atoi(n)
	if err != nil {
		t.Fatalf("STRAIT_CRASH_ONLY=%q: %v", s, err)
	}
	return i, true
}

func TestCrashAtEveryStep(t *testing.T) { crashAtEveryStep(t, crashTornSeeds) }

func crashAtEveryStep(t *testing.T, tornSeeds int) {
	base := crashBaseSeed(t)
	t.Logf("torn-tail base seed %d (replay with STRAIT_CRASH_SEED=%d)", base, base)
	var points, images atomic.Int64
	t.Run("workloads", func(t *testing.T) {
		for _, w := range crashWorkloads() {
			t.Run(w.name, func(t *testing.T) {
				t.Parallel()
				p, i := crashWorkloadAll(t, w, base, tornSeeds)
				points.Add(int64(p))
				images.Add(int64(i))
			})
		}
	})
	t.Logf("in total: %d crash points, %d reopened images checked", points.Load(), images.Load())
}

// crashStats counts the images where a Kafka-compatible allowance applied,
// so a change in how often they happen shows in the test log.
type crashStats struct {
	// gaps: the log end is an empty active segment's base offset above the
	// last surviving batch (a roll became durable before the old segment's
	// unsynced tail did, as in Kafka).
	gaps int
	// epochStartLag: the epoch cache was truncated from the start at a log
	// start offset the log start checkpoint had not caught up with.
	epochStartLag int
	// epochResidue: retention removed every batch and the cache keeps one
	// entry at the log start (= log end), as Kafka's truncateFromStart does.
	epochResidue int
}

// crashWorkloadAll runs w crashing at every operation and returns the
// number of crash points and of reopened images checked.
func crashWorkloadAll(t *testing.T, w *crashWorkload, base uint64, tornSeeds int) (int, int) {
	only, hasOnly := crashOnly(t, w.name)
	count := newCrashRun(w, -1, nil)
	models, err := count.runSteps(w)
	if err != nil {
		t.Fatalf("counting run: %v", err)
	}
	k := count.fs.n
	if os.Getenv("STRAIT_CRASH_OPS") != "" {
		start := 0
		for i, m := range models {
			t.Logf("step %d %q: ops %d..%d %v", i, w.steps[i].name, start, m.opsEnd, count.fs.ops[start:m.opsEnd])
			start = m.opsEnd
		}
	}
	from, to := 0, k
	if hasOnly {
		from, to = only, only
	}
	checked, failures := 0, 0
	var stats crashStats
	for n := from; n <= to; n++ {
		seeds := make([]uint64, tornSeeds)
		for i := range seeds {
			seeds[i] = base + uint64(n)*uint64(tornSeeds) + uint64(i)
		}
		r := newCrashRun(w, n, seeds)
		if _, err := r.runSteps(w); err != nil {
			t.Fatalf("crash run %d: %v", n, err)
		}
		if !r.fs.crashed {
			t.Fatalf("crash run %d never reached its crash point", n)
		}
		if !slices.Equal(r.fs.ops[:n], count.fs.ops[:n]) {
			t.Fatalf("crash run %d: the operations before the crash differ from the counting run: the workload is not deterministic", n)
		}
		s := r.crashedIn
		cur := models[min(s, len(models)-1)]
		prev := crashModel{versions: [][]crashBatch{nil}}
		if s > 0 {
			prev = models[s-1]
		}
		exp := crashExpect{
			versions:     cur.versions,
			floor:        crashFloor(cur.current(), min(prev.durable, cur.durable)),
			logStartCeil: max(prev.logStart, cur.logStart),
		}
		stepName := "after the last step"
		if s < len(w.steps) {
			stepName = w.steps[s].name
		}
		images := []*vfs.MemFS{r.fs.clean}
		labels := []string{"synced-only"}
		for i, img := range r.fs.torn {
			images = append(images, img)
			labels = append(labels, fmt.Sprintf("torn seed=%d", seeds[i]))
		}
		type variant struct {
			name  string
			clean bool
			rp    int64
			start int64
			hw    int64
		}
		variants := []variant{
			{name: "unclean, no checkpoints"},
			{name: "unclean, checkpoints at crash", rp: r.crashRP, start: r.crashLogStart, hw: r.crashHW},
		}
		if crashCleanMarkerAt(models, n, k) {
			variants = append(variants, variant{name: "clean, checkpoints at crash", clean: true, rp: r.crashRP, start: r.crashLogStart, hw: r.crashHW})
		}
		for i, img := range images {
			for _, v := range variants {
				// Each variant reopens its own copy: Open repairs the disk.
				disk := img.CrashClone(vfs.CrashOptions{})
				o := Options{FS: disk, Clock: clock.NewManual(r.clock.Now()), Scheduler: InlineScheduler{}, Config: r.cfg,
					HadCleanShutdown: v.clean, RecoveryPoint: v.rp, LogStartOffset: v.start, HighWatermark: v.hw}
				problems := crashCheck(disk, r.dir, o, exp, &stats)
				checked++
				if len(problems) > 0 {
					failures++
					if failures <= 10 {
						t.Errorf("%s: crash before op %s in step %d %q, %s image, %s (rp=%d log-start=%d):\n  %s\n  replay: STRAIT_CRASH_SEED=%d STRAIT_CRASH_ONLY=%s:%d",
							w.name, count.fs.opName(n), s, stepName, labels[i], v.name, v.rp, v.start,
							strings.Join(problems, "\n  "), base, w.name, n)
					}
				}
			}
		}
	}
	if failures > 10 {
		t.Errorf("%s: %d failing images in all (first 10 shown)", w.name, failures)
	}
	t.Logf("%s: %d operations, %d crash points, %d images checked; allowances: %d offset gaps, %d epoch caches ahead of the log start checkpoint, %d epoch residues",
		w.name, k, to-from+1, checked, stats.gaps, stats.epochStartLag, stats.epochResidue)
	return to - from + 1, checked
}

// crashCleanMarkerAt reports whether a broker would have the clean shutdown
// marker on disk when crashing before operation n: from the end of a
// completed Close until the following Open has finished (an Open of a
// cleanly closed log may do no durable operation at all, so the crash point
// right after Close is the only one that sees the marker then).
func crashCleanMarkerAt(models []crashModel, n, k int) bool {
	for i, m := range models {
		if !m.cleanMarker || (i > 0 && models[i-1].cleanMarker) {
			continue
		}
		end := k
		for _, later := range models[i+1:] {
			if !later.cleanMarker {
				end = later.opsEnd
				break
			}
		}
		if m.opsEnd <= n && n <= end {
			return true
		}
	}
	return false
}

// crashFloor is the batches of history with offsets below durable.
func crashFloor(history []crashBatch, durable int64) []crashBatch {
	var out []crashBatch
	for _, b := range history {
		if b.NextOffset() <= durable {
			out = append(out, b)
		}
	}
	return out
}

// crashExpect is what a recovered log must satisfy.
type crashExpect struct {
	versions     [][]crashBatch // a recovered log is a run of one of these
	floor        []crashBatch   // must survive (those at or above the log start)
	logStartCeil int64          // the log start may not pass this
}

// crashCheck opens the crash image and checks every invariant, returning
// the problems found.
func crashCheck(disk *vfs.MemFS, dir string, o Options, exp crashExpect, stats *crashStats) (problems []string) {
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	// The rebuild reference: the same image with every producer snapshot
	// removed, recovered from offset 0.
	scratch := disk.CrashClone(vfs.CrashOptions{})
	if names, err := scratch.List(dir); err == nil {
		for _, n := range names {
			if strings.HasSuffix(n, SnapshotFileSuffix) {
				scratch.Remove(filepath.Join(dir, n))
			}
		}
	}

	l, rep, err := crashOpen(dir, o)
	if err != nil {
		fail("open: %v", err)
		return problems
	}
	defer l.Close()
	l.UpdateHighWatermark(l.LogEndOffset())
	logStart, leo := l.LogStartOffset(), l.LogEndOffset()

	got, _, err := crashReadAll(l, logStart, FetchLogEnd)
	if err != nil {
		fail("read: %v", err)
		return problems
	}

	// Prefix: a contiguous run, from the log start, of one history.
	matched := false
	for _, v := range exp.versions {
		j := slices.IndexFunc(v, func(b crashBatch) bool { return b.LastOffset() >= logStart })
		if j < 0 {
			j = len(v)
		}
		if len(got) <= len(v)-j && crashSameBatches(got, v[j:j+len(got)]) {
			matched = true
			break
		}
	}
	if !matched {
		fail("recovered batches %s are not a run from the log start %d of any history written:\n    %s",
			crashDescribe(got), logStart, crashDescribeVersions(exp.versions))
	}

	// Durability.
	for _, f := range exp.floor {
		if f.LastOffset() < logStart {
			continue
		}
		i := slices.IndexFunc(got, func(b crashBatch) bool { return b.BaseOffset() == f.BaseOffset() })
		if i < 0 || !bytes.Equal(got[i], f) {
			fail("durable batch [%d,%d] is lost (recovered %s; report %v)", f.BaseOffset(), f.LastOffset(), crashDescribe(got), rep)
			break
		}
	}
	if logStart > exp.logStartCeil {
		fail("log start %d is past any log start the workload reached (%d)", logStart, exp.logStartCeil)
	}

	// The log end: right after the last batch, or (a roll whose old
	// segment lost its unsynced tail, as in Kafka) at an empty active
	// segment's base offset, which must be an offset that was written.
	lastNext := logStart
	if len(got) > 0 {
		lastNext = got[len(got)-1].NextOffset()
	}
	if leo != lastNext {
		stats.gaps++
		segs := l.Segments()
		active := l.activeSegment()
		maxNext := int64(0)
		for _, v := range exp.versions {
			if len(v) > 0 {
				maxNext = max(maxNext, v[len(v)-1].NextOffset())
			}
		}
		if leo < lastNext || active.Size() != 0 || active.baseOffset != leo || leo > maxNext {
			fail("log end offset %d, but the last batch ends at %d (segments %v, active size %d)", leo, lastNext, segs, active.Size())
		}
	}

	// Every offset reads the batch holding it (or the next one, in a gap).
	for off := logStart; off < leo; off++ {
		fd, err := l.Read(off, 1, FetchLogEnd, true)
		if err != nil {
			fail("read at %d: %v", off, err)
			break
		}
		want := slices.IndexFunc(got, func(b crashBatch) bool { return b.LastOffset() >= off })
		buf := make([]byte, fd.Records.Size)
		if err := fd.Records.ReadInto(buf); err != nil {
			fail("read at %d: %v", off, err)
			break
		}
		if want < 0 {
			if len(buf) != 0 {
				fail("read at %d in a gap returned %d bytes", off, len(buf))
			}
			continue
		}
		b, err := record.ReadBatch(buf)
		if err != nil || !bytes.Equal(b, got[want]) {
			fail("read at %d returned %d bytes, not batch [%d,%d] (%v)", off, len(buf), got[want].BaseOffset(), got[want].LastOffset(), err)
			break
		}
	}
	// Each segment knows its largest timestamp (from its time index when it
	// was not rescanned): retention.ms and ListOffsets depend on it.
	for _, s := range l.segs() {
		bs, err := crashSegmentBatches(disk, dir, []int64{s.baseOffset})
		if err != nil {
			fail("reading segment %d: %v", s.baseOffset, err)
			continue
		}
		wantTs, wantOff := record.NoTimestamp, s.baseOffset
		for _, b := range bs {
			if b.MaxTimestamp() > wantTs {
				wantTs, wantOff = b.MaxTimestamp(), b.LastOffset()
			}
		}
		if ts, off := s.MaxTimestamp(); ts != wantTs || (wantTs >= 0 && off != wantOff) {
			fail("segment %d reports max timestamp %d at offset %d, its batches %d at %d", s.baseOffset, ts, off, wantTs, wantOff)
		}
	}
	if v := crashVerifyIndexes(disk, dir); v != "" {
		fail("index check: %s", v)
	}

	// Epoch cache.
	physical, err := crashSegmentBatches(disk, dir, l.Segments())
	if err != nil {
		fail("reading segments: %v", err)
	}
	entries := l.EpochEntries()
	for _, e := range entries {
		if e.StartOffset >= leo && !(e.StartOffset == leo && leo == logStart) {
			fail("epoch entry %v is at or past the log end %d", e, leo)
		}
	}
	// In a gap the cache may keep the entries of epochs whose batches were
	// lost: they were checkpointed before the batches were written. Each
	// must be one the workload wrote.
	dataEntries := entries
	if leo != lastNext {
		i := slices.IndexFunc(entries, func(e epoch.Entry) bool { return e.StartOffset >= lastNext })
		if i >= 0 {
			dataEntries = entries[:i]
			for j, e := range entries[i:] {
				switch {
				case crashWroteEpochStart(exp.versions, e):
				case i+j == 0 && e.StartOffset == logStart:
					stats.epochResidue++ // moved to the log start by truncateFromStart
				default:
					fail("epoch entry %v in the gap [%d,%d) was never written", e, lastNext, leo)
				}
			}
		}
	}
	if !crashEpochsMatch(dataEntries, physical, logStart, lastNext, exp.logStartCeil, stats) {
		fail("epoch cache %v, but the surviving batches %s give %v", entries, crashDescribe(physical), crashDeriveEpochs(physical, logStart, lastNext))
	}

	// Producer state against a rebuild without snapshots.
	o2 := o
	o2.FS, o2.RecoveryPoint, o2.HadCleanShutdown = scratch, 0, false
	l2, _, err := crashOpen(dir, o2)
	if err != nil {
		fail("open without snapshots: %v", err)
		return problems
	}
	defer l2.Close()
	l2.UpdateHighWatermark(l2.LogEndOffset())
	if l2.LogEndOffset() != leo || l2.LogStartOffset() != logStart {
		fail("recovery from offset 0 gives log [%d,%d), recovery with the checkpoints [%d,%d)", l2.LogStartOffset(), l2.LogEndOffset(), logStart, leo)
	}
	if p1, p2 := l.producers.Producers(), l2.producers.Producers(); !slices.Equal(p1, p2) {
		fail("producer state %+v, rebuilt from the log without snapshots %+v", p1, p2)
	}
	if t1, t2 := l.producers.OngoingTxns(), l2.producers.OngoingTxns(); !slices.Equal(t1, t2) {
		fail("ongoing transactions %v, rebuilt %v", t1, t2)
	}
	if got2, _, err := crashReadAll(l2, logStart, FetchLogEnd); err != nil || !crashSameBatches(got, got2) {
		fail("recovery from offset 0 reads %s (%v), recovery with the checkpoints %s", crashDescribe(got2), err, crashDescribe(got))
	}
	// And against the producers the batches imply, computed here, since a
	// replay bug would show in both logs alike.
	if want, p1 := crashProducers(got), l.producers.Producers(); !slices.Equal(p1, want) {
		fail("producer state %+v, the surviving batches give %+v", p1, want)
	}

	// LSO and aborted transactions from the surviving markers.
	ongoing, aborted := crashTxns(got)
	wantLSO := leo
	for _, first := range ongoing {
		wantLSO = min(wantLSO, first)
	}
	if lso := l.LastStableOffset(); lso != wantLSO {
		fail("last stable offset %d, the surviving batches give %d (open transactions %v)", lso, wantLSO, ongoing)
	}
	committed, gotAborted, err := crashReadAll(l, logStart, FetchTxnCommitted)
	if err != nil {
		fail("read_committed: %v", err)
		return problems
	}
	if n := len(committed); n > 0 && committed[n-1].NextOffset() > wantLSO {
		fail("read_committed returned batch [%d,%d] past the LSO %d", committed[n-1].BaseOffset(), committed[n-1].LastOffset(), wantLSO)
	}
	var wantAborted []index.AbortedTxn
	for _, a := range aborted {
		if a.LastOffset >= logStart && a.FirstOffset < wantLSO {
			wantAborted = append(wantAborted, index.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
		}
	}
	var gotA []index.AbortedTxn
	for _, a := range gotAborted {
		a = index.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset}
		if !slices.Contains(gotA, a) {
			gotA = append(gotA, a)
		}
	}
	slices.SortFunc(gotA, func(a, b index.AbortedTxn) int { return int(a.FirstOffset - b.FirstOffset) })
	if !slices.Equal(gotA, wantAborted) {
		fail("read_committed aborted transactions %v, the surviving markers give %v", gotA, wantAborted)
	}

	// The recovered log is usable: a producer retrying its last batch gets
	// the original offsets back, and a new append lands at the log end.
	for _, p := range l.producers.Producers() {
		var last crashBatch
		for _, b := range got {
			if b.ProducerID() == p.ProducerID && !b.IsControl() && b.ProducerEpoch() == p.ProducerEpoch {
				last = b
			}
		}
		if last == nil || p.CurrentTxnStartOffset >= 0 {
			continue
		}
		retry := slices.Clone(last)
		retry.SetBaseOffset(0) // as the client sent it; the CRC does not cover it
		info, err := l.AppendAsLeader(retry, last.PartitionLeaderEpoch(), record.OriginClient)
		if err != nil || !info.Duplicate || info.FirstOffset != last.BaseOffset() {
			fail("retry of producer %d's last batch [%d,%d]: %+v, %v; want a duplicate", p.ProducerID, last.BaseOffset(), last.LastOffset(), info, err)
		}
	}
	ep := int32(0)
	if e, ok := l.LatestEpoch(); ok {
		ep = e
	}
	next, err := record.Build(record.BatchSpec{PartitionLeaderEpoch: ep, ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch,
		BaseSequence: record.NoSequence, BaseTimestamp: o.Clock.Now().UnixMilli()}, []record.Record{{KeyLen: -1, ValueLen: -1}}, nil)
	if err != nil {
		panic(err)
	}
	if info, err := l.AppendAsLeader(next, ep, record.OriginClient); err != nil || info.FirstOffset != leo {
		fail("append after recovery: %+v, %v; want offset %d", info, err, leo)
	} else if fd, err := l.Read(leo, 1<<20, FetchLogEnd, true); err != nil || fd.Records.Size != int32(len(next)) {
		fail("read of the append after recovery: %d bytes, %v", fd.Records.Size, err)
	}
	return problems
}

// crashOpen opens a log, turning a panic into an error.
func crashOpen(dir string, o Options) (l *Log, rep *RecoveryReport, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return Open(dir, o)
}

// crashReadAll reads every batch from `from` with the given isolation and
// the aborted transactions the reads returned.
func crashReadAll(l *Log, from int64, iso FetchIsolation) ([]crashBatch, []index.AbortedTxn, error) {
	var out []crashBatch
	var aborted []index.AbortedTxn
	off := from
	for {
		fd, err := l.Read(off, 1<<20, iso, true)
		if err != nil {
			return out, aborted, fmt.Errorf("read at %d: %w", off, err)
		}
		aborted = append(aborted, fd.AbortedTxns...)
		if fd.Records.Size == 0 {
			return out, aborted, nil
		}
		buf := make([]byte, fd.Records.Size)
		if err := fd.Records.ReadInto(buf); err != nil {
			return out, aborted, err
		}
		it := record.NewIter(buf)
		n := 0
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			if b.LastOffset() < off {
				continue
			}
			out = append(out, slices.Clone(b))
			off = b.NextOffset()
			n++
		}
		if n == 0 {
			return out, aborted, fmt.Errorf("read at %d returned %d bytes and no whole batch", off, fd.Records.Size)
		}
	}
}

func crashSameBatches(a, b []crashBatch) bool {
	return slices.EqualFunc(a, b, func(x, y crashBatch) bool { return bytes.Equal(x, y) })
}

func crashDescribe(bs []crashBatch) string {
	var parts []string
	for _, b := range bs {
		parts = append(parts, fmt.Sprintf("[%d,%d]e%d", b.BaseOffset(), b.LastOffset(), b.PartitionLeaderEpoch()))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func crashDescribeVersions(vs [][]crashBatch) string {
	var parts []string
	for i, v := range vs {
		parts = append(parts, fmt.Sprintf("history %d: %s", i, crashDescribe(v)))
	}
	return strings.Join(parts, "\n    ")
}

// crashSegmentBatches reads the batches physically in the live segments.
func crashSegmentBatches(fsys vfs.FS, dir string, bases []int64) ([]crashBatch, error) {
	var out []crashBatch
	for _, base := range bases {
		data, err := vfs.ReadFile(fsys, segmentPath(dir, base, LogFileSuffix))
		if err != nil {
			return out, err
		}
		it := record.NewIter(data)
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			out = append(out, slices.Clone(b))
		}
		if it.Pos() != len(data) {
			return out, fmt.Errorf("segment %d has %d bytes after its last whole batch", base, len(data)-it.Pos())
		}
	}
	return out, nil
}

// crashDeriveEpochs is the epoch cache the batches imply: each batch with a
// newer epoch starts that epoch, then the cache is truncated to the log end
// and from the log start as recovery does.
func crashDeriveEpochs(batches []crashBatch, logStart, leo int64) []epoch.Entry {
	var out []epoch.Entry
	for _, b := range batches {
		e := b.PartitionLeaderEpoch()
		if e >= 0 && (len(out) == 0 || e > out[len(out)-1].Epoch) {
			out = append(out, epoch.Entry{Epoch: e, StartOffset: b.BaseOffset()})
		}
	}
	for len(out) > 0 && out[len(out)-1].StartOffset >= leo {
		out = out[:len(out)-1]
	}
	n := 0
	for n < len(out) && out[n].StartOffset <= logStart {
		n++
	}
	if n > 0 && !(n == 1 && out[0].StartOffset == logStart) {
		out = append([]epoch.Entry{{Epoch: out[n-1].Epoch, StartOffset: logStart}}, out[n:]...)
	}
	return out
}

// crashEpochsMatch accepts the cache the batches imply, or the same cache
// truncated from the start at a log start the log reached before the crash
// (the epoch checkpoint is written when the log start moves, the log start
// checkpoint later, as in Kafka), or, when retention removed every batch,
// the single entry Kafka keeps at the log start so the latest epoch is not
// forgotten.
func crashEpochsMatch(entries []epoch.Entry, batches []crashBatch, logStart, leo, logStartCeil int64, stats *crashStats) bool {
	if slices.Equal(entries, crashDeriveEpochs(batches, logStart, leo)) {
		return true
	}
	if len(entries) > 0 {
		if s := entries[0].StartOffset; s > logStart && s <= logStartCeil && slices.Equal(entries, crashDeriveEpochs(batches, s, leo)) {
			stats.epochStartLag++
			return true
		}
	}
	live := slices.ContainsFunc(batches, func(b crashBatch) bool { return b.LastOffset() >= logStart })
	if !live && len(entries) == 1 && entries[0].StartOffset == logStart && logStart == leo {
		stats.epochResidue++
		return true
	}
	return false
}

// crashWroteEpochStart reports whether some history has a batch starting
// epoch e at its start offset.
func crashWroteEpochStart(versions [][]crashBatch, e epoch.Entry) bool {
	for _, v := range versions {
		for _, b := range v {
			if b.BaseOffset() == e.StartOffset && b.PartitionLeaderEpoch() == e.Epoch {
				return true
			}
		}
	}
	return false
}

var crashVerifyOK = regexp.MustCompile(`^\d{20}\.log: \d+ batches, \d+ index entries, \d+ time index entries$`)

// crashVerifyIndexes runs the DumpLogSegments checks and returns what they
// flagged.
func crashVerifyIndexes(fsys *vfs.MemFS, dir string) string {
	out := verifyLikeDumpLogSegments(nil, fsys, dir)
	var bad []string
	for _, line := range strings.Split(out, "\n") {
		if line != "" && !crashVerifyOK.MatchString(line) {
			bad = append(bad, line)
		}
	}
	return strings.Join(bad, "; ")
}

// crashTxns replays transaction markers over batches: the first offsets of
// transactions still open, and the aborted ones.
func crashTxns(batches []crashBatch) (ongoing map[int64]int64, aborted []index.AbortedTxn) {
	ongoing = map[int64]int64{}
	dec := record.NewDecompressor()
	for _, b := range batches {
		if !b.IsTransactional() || !b.HasProducerID() {
			continue
		}
		pid := b.ProducerID()
		if !b.IsControl() {
			if _, open := ongoing[pid]; !open {
				ongoing[pid] = b.BaseOffset()
			}
			continue
		}
		first, open := ongoing[pid]
		if !open {
			continue
		}
		typ, err := dec.ControlType(b)
		if err != nil {
			continue
		}
		delete(ongoing, pid)
		if typ == kmsg.ControlRecordKeyTypeAbort {
			aborted = append(aborted, index.AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: b.BaseOffset()})
		}
	}
	return ongoing, aborted
}

// crashProducers replays batches the way Kafka's ProducerStateManager
// does, for the fields DescribeProducers shows: the producer epoch, the
// last sequence of the newest batch of that epoch, the timestamp of the
// last batch or marker, the coordinator epoch of the last marker and the
// open transaction. MIRROR_PID_RESET forgets every producer without an open
// transaction.
func crashProducers(batches []crashBatch) []producer.ProducerView {
	byPID := map[int64]*producer.ProducerView{}
	dec := record.NewDecompressor()
	for _, b := range batches {
		var typ kmsg.ControlRecordKeyType = -1
		if b.IsControl() {
			t, err := dec.ControlType(b)
			if err != nil {
				continue
			}
			typ = t
		}
		if typ == record.ControlMirrorPidReset {
			for pid, p := range byPID {
				if p.CurrentTxnStartOffset < 0 {
					delete(byPID, pid)
				}
			}
			continue
		}
		if !b.HasProducerID() {
			continue
		}
		p, ok := byPID[b.ProducerID()]
		if !ok {
			p = &producer.ProducerView{ProducerID: b.ProducerID(), ProducerEpoch: record.NoProducerEpoch,
				LastSequence: record.NoSequence, LastTimestamp: record.NoTimestamp, CoordinatorEpoch: -1, CurrentTxnStartOffset: -1}
			byPID[b.ProducerID()] = p
		}
		if p.ProducerEpoch != b.ProducerEpoch() {
			p.ProducerEpoch, p.LastSequence = b.ProducerEpoch(), record.NoSequence
		}
		p.LastTimestamp = b.MaxTimestamp()
		if !b.IsControl() {
			p.LastSequence = b.LastSequence()
			if b.IsTransactional() && p.CurrentTxnStartOffset < 0 {
				p.CurrentTxnStartOffset = b.BaseOffset()
			}
			continue
		}
		p.CoordinatorEpoch = 0 // every marker the workloads write has coordinator epoch 0
		p.CurrentTxnStartOffset = -1
	}
	out := []producer.ProducerView{}
	for _, p := range byPID {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b producer.ProducerView) int { return int(a.ProducerID - b.ProducerID) })
	return out
}
