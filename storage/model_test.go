package storage

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/epoch"
	"github.com/strait-io/strait/storage/index"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// The model-based property test drives a real Log and a naive reference
// model of a partition log with the same random operations and compares
// them after every step. The model is a list of segments holding decoded
// batches, plus the offsets, the leader epoch entries (Kafka's
// LeaderEpochCache rules) and the transactions Kafka's
// ProducerStateManager tracks. It keeps just enough of each segment's time
// index to know the max timestamp the Log derives from it (Kafka's
// maxTimestampSoFar, which truncation makes stale), because retention.ms
// and ListOffsets answer from that value, and rolls are by size only, so
// the model predicts segment boundaries exactly.
//
// Durability is modelled per segment: each flush (Flush, a roll's flush of
// the old segment, Close) records what the segment's files hold, and a
// crash (vfs.MemFS.CrashClone keeping synced bytes only) leaves exactly
// that. So a crash loses what was appended after the last flush, and can
// bring back batches a truncation removed if the truncated segment was not
// flushed since, as Kafka's log can.
//
// A few states have more than one right answer, because a producer state
// rebuild (after truncation, reopen or crash) starts from whichever
// snapshot is on disk, or from the log start: which ended transactions are
// still unreplicated, and the first offset of a transaction that began
// below the log start. The generator steers around them rather than
// weakening the checks: it raises the high watermark over ended
// transactions before a rebuild (ensureRebuildable), never moves the log
// start past an open transaction's first offset (txnBound), and reopens
// cleanly instead of crashing when a crash would leave a transaction across
// the log start.
//
// Timestamps rise with offsets and never repeat, so every ListOffsets
// question has one answer. Replay one seed with STRAIT_SEED=N or
// -model.seed=N; -model.steps overrides the steps per seed; -v prints how
// often each path ran.

var (
	modelSeedFlag  = flag.Uint64("model.seed", 0, "replay one seed of the Log model test (0 runs the default seed range; env STRAIT_SEED does the same)")
	modelStepsFlag = flag.Int("model.steps", 0, "steps per seed of the Log model test (0 keeps the test's default)")
)

func TestLogModel(t *testing.T) {
	runLogModel(t, 1, 300, 60)
}

// runLogModel runs n seeds starting at first, each for steps operations,
// unless a seed to replay was given.
func runLogModel(t *testing.T, first uint64, n, steps int) {
	seeds := make([]uint64, 0, n)
	switch s := os.Getenv("STRAIT_SEED"); {
	case *modelSeedFlag != 0:
		seeds = append(seeds, *modelSeedFlag)
	case s != "":
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("STRAIT_SEED=%q: %v", s, err)
		}
		seeds = append(seeds, v)
	default:
		for i := range n {
			seeds = append(seeds, first+uint64(i))
		}
	}
	if *modelStepsFlag > 0 {
		steps = *modelStepsFlag
	}
	enc := newModelEncoders(t)
	stats := map[string]int{}
	defer func() { t.Logf("%d seeds x %d steps: %v", len(seeds), steps, stats) }()
	failures := 0
	for _, seed := range seeds {
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			h := newModelHarness(t, seed, enc, stats)
			for i := range steps {
				h.step(i)
			}
			h.closeLog()
		})
		// A broken engine fails most seeds the same way; a few are enough.
		if !ok {
			if failures++; failures == 3 {
				t.Fatalf("stopping after %d failed seeds", failures)
			}
		}
	}
}

// ---------------------------------------------------------------------------
// The model.

// mBatch is one batch as the log must hold it.
type mBatch struct {
	data      []byte // the exact bytes the log must return
	base      int64
	last      int64
	epoch     int32
	pid       int64
	pepoch    int16
	lastSeq   int32
	txn       bool
	control   bool
	commit    bool    // for markers
	ts        []int64 // record timestamps, by offset delta
	maxTs     int64
	completes *mTxn  // the transaction this marker ended, if any
	client    []byte // what the client sent, for a retry; nil for other batches
}

func (b *mBatch) size() int64 { return int64(len(b.data)) }

// mTxn is a transaction ended by a marker.
type mTxn struct {
	pid           int64
	first, marker int64
	aborted       bool
}

type tsOff struct{ ts, off int64 }

// mSeg is a segment: its batches and time index entries, what its files
// held at their last fsync (what a crash leaves), and the max timestamp
// state.
type mSeg struct {
	base       int64
	batches    []*mBatch
	synced     []*mBatch
	createdMs  int64
	bytesSince int64
	tidx       []tsOff
	tidxSynced []tsOff
	maxTs      int64
	maxOff     int64
	maxKnown   bool
}

func newMSeg(base, nowMs int64) *mSeg {
	return &mSeg{base: base, createdMs: nowMs, maxTs: record.NoTimestamp, maxOff: base, maxKnown: true}
}

func (s *mSeg) clone() *mSeg {
	c := *s
	c.batches = slices.Clone(s.batches)
	c.synced = slices.Clone(s.synced)
	c.tidx = slices.Clone(s.tidx)
	c.tidxSynced = slices.Clone(s.tidxSynced)
	return &c
}

// sync is LogSegment.flush: the files now hold what the segment holds.
func (s *mSeg) sync() {
	s.synced = slices.Clone(s.batches)
	s.tidxSynced = slices.Clone(s.tidx)
}

func (s *mSeg) size() int64 {
	var n int64
	for _, b := range s.batches {
		n += b.size()
	}
	return n
}

func (s *mSeg) nextOffset() int64 {
	if len(s.batches) == 0 {
		return s.base
	}
	return s.batches[len(s.batches)-1].last + 1
}

// loadMax reads the max timestamp from the time index's last entry, as a
// segment opened from disk does on first use.
func (s *mSeg) loadMax() {
	if s.maxKnown {
		return
	}
	s.maxTs, s.maxOff = record.NoTimestamp, s.base
	if n := len(s.tidx); n > 0 {
		s.maxTs, s.maxOff = s.tidx[n-1].ts, s.tidx[n-1].off
	}
	s.maxKnown = true
}

// tidxAppend is TimeIndex.MaybeAppend: only a timestamp above the last
// entry's is added.
func (s *mSeg) tidxAppend(ts, off int64) {
	last := int64(record.NoTimestamp)
	if n := len(s.tidx); n > 0 {
		last = s.tidx[n-1].ts
	}
	if ts > last {
		s.tidx = append(s.tidx, tsOff{ts, off})
	}
}

func (s *mSeg) indexBatch(b *mBatch, interval int64) {
	if b.maxTs > s.maxTs {
		s.maxTs, s.maxOff = b.maxTs, b.last
	}
	if s.bytesSince > interval {
		s.tidxAppend(s.maxTs, s.maxOff)
		s.bytesSince = 0
	}
	s.bytesSince += b.size()
}

func (s *mSeg) appendBatches(bs []*mBatch, interval int64) {
	s.loadMax()
	for _, b := range bs {
		s.indexBatch(b, interval)
	}
	s.batches = append(s.batches, bs...)
}

// largestTimestamp is what retention.ms and ListOffsets compare: the max
// timestamp, or the creation time when no batch carried one.
func (s *mSeg) largestTimestamp() int64 {
	s.loadMax()
	if s.maxTs >= 0 {
		return s.maxTs
	}
	return s.createdMs
}

// truncateTo drops the batches whose last offset is >= target. When none
// is, the segment is left exactly as it was (the Log finds nothing to cut).
func (s *mSeg) truncateTo(target int64) {
	j := slices.IndexFunc(s.batches, func(b *mBatch) bool { return b.last >= target })
	if j < 0 {
		return
	}
	s.batches = slices.Clone(s.batches[:j])
	k := slices.IndexFunc(s.tidx, func(e tsOff) bool { return e.off >= target })
	if k >= 0 {
		s.tidx = slices.Clone(s.tidx[:k])
	}
	s.bytesSince = 0
	s.maxKnown = false
	s.loadMax()
}

// recover rebuilds the segment's time index from its batches, as crash
// recovery does.
func (s *mSeg) recover(interval int64) {
	s.tidx = nil
	s.maxTs, s.maxOff, s.maxKnown = record.NoTimestamp, s.base, true
	s.bytesSince = 0
	for _, b := range s.batches {
		s.indexBatch(b, interval)
	}
	s.tidxAppend(s.maxTs, s.maxOff)
}

// logModel is the reference partition log.
type logModel struct {
	cfg      LogConfig
	segs     []*mSeg
	leo      int64
	logStart int64
	hw       int64
	rp       int64
	epochs   []epoch.Entry
	// epochsOnDisk is the epoch checkpoint file: an append's new epoch
	// (AssignDeferred) reaches it with the next flush or the next other
	// change of the cache, which are written at once.
	epochsOnDisk []epoch.Entry
	// ongoing maps a producer id to the first offset of its open
	// transaction; unrepl holds ended transactions whose marker the high
	// watermark has not passed (Kafka prunes it only when the high
	// watermark or log start moves).
	ongoing map[int64]int64
	unrepl  []mTxn
}

func newLogModel(cfg LogConfig, nowMs int64) *logModel {
	return &logModel{cfg: cfg, segs: []*mSeg{newMSeg(0, nowMs)}, ongoing: map[int64]int64{}}
}

func (m *logModel) clone() *logModel {
	c := *m
	c.segs = make([]*mSeg, len(m.segs))
	for i, s := range m.segs {
		c.segs[i] = s.clone()
	}
	c.epochs = slices.Clone(m.epochs)
	c.epochsOnDisk = slices.Clone(m.epochsOnDisk)
	c.ongoing = make(map[int64]int64, len(m.ongoing))
	for k, v := range m.ongoing {
		c.ongoing[k] = v
	}
	c.unrepl = slices.Clone(m.unrepl)
	return &c
}

func (m *logModel) interval() int64 { return int64(m.cfg.IndexIntervalBytes) }

func (m *logModel) active() *mSeg { return m.segs[len(m.segs)-1] }

func (m *logModel) size() int64 {
	var n int64
	for _, s := range m.segs {
		n += s.size()
	}
	return n
}

func (m *logModel) bases() []int64 {
	out := make([]int64, len(m.segs))
	for i, s := range m.segs {
		out[i] = s.base
	}
	return out
}

// floorSeg is the index of the last segment whose base is <= off, or -1.
func (m *logModel) floorSeg(off int64) int {
	i := -1
	for j, s := range m.segs {
		if s.base <= off {
			i = j
		}
	}
	return i
}

func (m *logModel) allBatches() []*mBatch {
	var out []*mBatch
	for _, s := range m.segs {
		out = append(out, s.batches...)
	}
	return out
}

// visible are the batches a reader from the log start gets: every batch
// holding an offset >= the log start.
func (m *logModel) visible() []*mBatch {
	var out []*mBatch
	for _, b := range m.allBatches() {
		if b.last >= m.logStart {
			out = append(out, b)
		}
	}
	return out
}

// --- leader epochs (Kafka's LeaderEpochFileCache) ---

func (m *logModel) latestEpoch() (int32, bool) {
	if len(m.epochs) == 0 {
		return 0, false
	}
	return m.epochs[len(m.epochs)-1].Epoch, true
}

func (m *logModel) assignEpoch(e int32, off int64) {
	if n := len(m.epochs); n > 0 && m.epochs[n-1].Epoch == e && off >= m.epochs[n-1].StartOffset {
		return
	}
	for n := len(m.epochs); n > 0 && (m.epochs[n-1].Epoch >= e || m.epochs[n-1].StartOffset >= off); n = len(m.epochs) {
		m.epochs = m.epochs[:n-1]
	}
	m.epochs = append(m.epochs, epoch.Entry{Epoch: e, StartOffset: off})
}

// wroteEpochs is a change of the epoch cache other than an append's: the
// checkpoint is written with it, the append's new epochs included, if it
// changed anything.
func (m *logModel) wroteEpochs(before []epoch.Entry) {
	if !slices.Equal(before, m.epochs) {
		m.epochsOnDisk = slices.Clone(m.epochs)
	}
}

func (m *logModel) epochsFromEnd(off int64) {
	defer m.wroteEpochs(slices.Clone(m.epochs))
	for n := len(m.epochs); n > 0 && m.epochs[n-1].StartOffset >= off; n = len(m.epochs) {
		m.epochs = m.epochs[:n-1]
	}
}

func (m *logModel) epochsFromStart(off int64) {
	defer m.wroteEpochs(slices.Clone(m.epochs))
	n := 0
	for n < len(m.epochs) && m.epochs[n].StartOffset <= off {
		n++
	}
	if n == 0 {
		return
	}
	first := epoch.Entry{Epoch: m.epochs[n-1].Epoch, StartOffset: off}
	m.epochs = append([]epoch.Entry{first}, m.epochs[n:]...)
}

// endOffsetFor is Kafka's LeaderEpochFileCache.endOffsetFor.
func (m *logModel) endOffsetFor(req int32) (int32, int64) {
	if req == epoch.UndefinedEpoch {
		return epoch.UndefinedEpoch, epoch.UndefinedOffset
	}
	if e, ok := m.latestEpoch(); ok && e == req {
		return req, m.leo
	}
	higher := slices.IndexFunc(m.epochs, func(e epoch.Entry) bool { return e.Epoch > req })
	if higher < 0 {
		return epoch.UndefinedEpoch, epoch.UndefinedOffset
	}
	if higher == 0 {
		return req, m.epochs[0].StartOffset
	}
	return m.epochs[higher-1].Epoch, m.epochs[higher].StartOffset
}

// recoverEpoch is what crash recovery does with a rescanned batch's epoch.
// The checkpoint is synced at once but a truncation of the log is not, so
// batches a truncation removed can come back under a newer epoch's entry:
// an entry claiming the batch's offset for a higher epoch is dropped with
// every later one. Then the batch's epoch is assigned if it is new.
func (m *logModel) recoverEpoch(b *mBatch) {
	cur := -1
	for i, e := range m.epochs {
		if e.StartOffset <= b.base {
			cur = i
		}
	}
	if cur >= 0 && m.epochs[cur].Epoch > b.epoch {
		next := slices.IndexFunc(m.epochs, func(e epoch.Entry) bool { return e.Epoch > b.epoch })
		m.epochsFromEnd(m.epochs[next].StartOffset)
	}
	if e, ok := m.latestEpoch(); !ok || b.epoch > e {
		before := slices.Clone(m.epochs)
		m.assignEpoch(b.epoch, b.base)
		m.wroteEpochs(before)
	}
}

// --- transactions ---

func (m *logModel) applyTxn(b *mBatch) {
	if b.pid < 0 {
		return
	}
	if b.control {
		if first, ok := m.ongoing[b.pid]; ok {
			b.completes = &mTxn{pid: b.pid, first: first, marker: b.base, aborted: !b.commit}
			delete(m.ongoing, b.pid)
			m.unrepl = append(m.unrepl, *b.completes)
		}
		return
	}
	if _, ok := m.ongoing[b.pid]; b.txn && !ok {
		m.ongoing[b.pid] = b.base
	}
}

// deriveOngoing recomputes the open transactions from the batches, as a
// producer state rebuild does.
func (m *logModel) deriveOngoing() map[int64]int64 {
	out := map[int64]int64{}
	for _, b := range m.allBatches() {
		if b.pid < 0 {
			continue
		}
		if b.control {
			delete(out, b.pid)
		} else if _, ok := out[b.pid]; b.txn && !ok {
			out[b.pid] = b.base
		}
	}
	return out
}

// completed lists the transactions ended by markers in the log.
func (m *logModel) completed() []mTxn {
	var out []mTxn
	for _, b := range m.allBatches() {
		if b.completes != nil {
			out = append(out, *b.completes)
		}
	}
	return out
}

func (m *logModel) pruneUnrepl(below int64) {
	m.unrepl = slices.DeleteFunc(m.unrepl, func(t mTxn) bool { return t.marker < below })
}

// lso is Kafka's last stable offset: the first offset of an undecided or
// unreplicated transaction, raised to the log start, bounded by the high
// watermark.
func (m *logModel) lso() int64 {
	fu, ok := int64(math.MaxInt64), false
	for _, first := range m.ongoing {
		fu, ok = min(fu, first), true
	}
	for _, t := range m.unrepl {
		fu, ok = min(fu, t.first), true
	}
	if ok && fu < m.hw {
		return max(fu, m.logStart)
	}
	return m.hw
}

// --- flushing ---

func (m *logModel) syncRange(from, to int64) {
	for i, s := range m.segs {
		end := int64(math.MaxInt64)
		if i+1 < len(m.segs) {
			end = m.segs[i+1].base
		}
		if s.base >= to || end <= from {
			continue
		}
		s.sync()
	}
}

func (m *logModel) flushUpTo(target int64) {
	if m.rp >= target {
		return
	}
	m.epochsOnDisk = slices.Clone(m.epochs)
	m.syncRange(m.rp, m.leo)
	m.rp = max(m.rp, m.leo)
}

func (m *logModel) roll(newBase, nowMs int64) (*mSeg, error) {
	old := m.active()
	if old.base == newBase && old.size() == 0 {
		return old, nil
	}
	if newBase <= old.base {
		return nil, fmt.Errorf("model: roll to %d at or below the active segment %d", newBase, old.base)
	}
	old.loadMax()
	old.tidxAppend(old.maxTs, old.maxOff)
	s := newMSeg(newBase, nowMs)
	m.segs = append(m.segs, s)
	old.sync()
	m.flushUpTo(newBase)
	return s, nil
}

// --- operations ---

// appendBatches applies an accepted append whose batches carry their final
// offsets; size is the whole append's, which decides the roll.
func (m *logModel) appendBatches(bs []*mBatch, size int64, nowMs int64) error {
	for _, b := range bs {
		if b.epoch < 0 {
			continue
		}
		if e, ok := m.latestEpoch(); !ok || b.epoch > e {
			m.assignEpoch(b.epoch, b.base)
		}
	}
	seg := m.active()
	if seg.size() > int64(m.cfg.SegmentBytes)-size {
		var err error
		if seg, err = m.roll(max(bs[0].base, m.leo), nowMs); err != nil {
			return err
		}
	}
	seg.appendBatches(bs, m.interval())
	for _, b := range bs {
		m.applyTxn(b)
	}
	m.leo = bs[len(bs)-1].last + 1
	return nil
}

func (m *logModel) truncateFully(off, nowMs int64) {
	m.segs = []*mSeg{newMSeg(off, nowMs)}
	m.epochs, m.epochsOnDisk = nil, nil // Clear writes the empty file
	m.ongoing = map[int64]int64{}
	m.unrepl = nil
	m.leo, m.logStart, m.hw, m.rp = off, off, off, off
}

func (m *logModel) truncateTo(target, nowMs int64) bool {
	if target >= m.leo {
		return false
	}
	if target < m.logStart {
		m.truncateFully(target, nowMs)
		return true
	}
	k := m.floorSeg(target)
	m.segs = m.segs[:k+1]
	m.segs[k].truncateTo(target)
	m.leo = target
	m.epochsFromEnd(target)
	if m.hw > target {
		m.hw = target
	}
	m.rp = min(m.rp, target)
	m.rebuildTxns(false)
	return true
}

// rebuildTxns is what a producer state rebuild leaves: open transactions
// from the log, and, after a crash, the replayed ended ones the high
// watermark has not passed. The generator only rebuilds when which ended
// transactions the Log replays cannot matter (see ensureRebuildable).
func (m *logModel) rebuildTxns(keepUnreplicated bool) {
	m.ongoing = m.deriveOngoing()
	m.unrepl = nil
	if keepUnreplicated {
		for _, t := range m.completed() {
			if t.marker >= m.hw {
				m.unrepl = append(m.unrepl, t)
			}
		}
	}
}

func (m *logModel) updateHW(hw int64) int64 {
	m.hw = min(max(hw, m.logStart), m.leo)
	m.pruneUnrepl(m.hw)
	return m.hw
}

func (m *logModel) incLogStart(off int64) {
	if off <= m.logStart {
		return
	}
	m.logStart = off
	m.epochsFromStart(off)
	m.pruneUnrepl(off)
}

func (m *logModel) flush() { m.flushUpTo(m.leo) }

// deleteOldSegments mirrors Kafka's deleteOldSegments passes.
func (m *logModel) deleteOldSegments(nowMs int64) (RetentionResult, error) {
	var res RetentionResult
	n, err := m.deleteWhile(&res, nowMs, func(s, next *mSeg) bool { return next != nil && next.base <= m.logStart })
	res.ByLogStart = n
	if err != nil || !m.cfg.CleanupPolicy.Delete {
		return res, err
	}
	if m.cfg.RetentionBytes >= 0 {
		excess := m.size() - m.cfg.RetentionBytes
		n, err = m.deleteWhile(&res, nowMs, func(s, _ *mSeg) bool {
			if excess-s.size() < 0 {
				return false
			}
			excess -= s.size()
			return true
		})
		res.BySize = n
		if err != nil {
			return res, err
		}
	}
	if m.cfg.RetentionMs >= 0 {
		n, err = m.deleteWhile(&res, nowMs, func(s, _ *mSeg) bool { return nowMs-s.largestTimestamp() > m.cfg.RetentionMs })
		res.ByTime = n
	}
	return res, err
}

func (m *logModel) deleteWhile(res *RetentionResult, nowMs int64, pred func(s, next *mSeg) bool) (int, error) {
	doomed := 0
	var bytes int64
	for i, s := range m.segs {
		var next *mSeg
		end := m.leo
		if i+1 < len(m.segs) {
			next, end = m.segs[i+1], m.segs[i+1].base
		}
		if (next == nil && s.size() == 0) || end > m.hw || !pred(s, next) {
			break
		}
		doomed++
		bytes += s.size()
	}
	if doomed == 0 {
		return 0, nil
	}
	if doomed == len(m.segs) {
		if _, err := m.roll(m.leo, nowMs); err != nil {
			return 0, err
		}
	}
	m.segs = slices.Clone(m.segs[doomed:])
	m.incLogStart(m.segs[0].base)
	res.Segments += doomed
	res.Bytes += bytes
	res.NewLogStart = m.logStart
	return doomed, nil
}

func (m *logModel) close() {
	// The active segment's final time index entry is written before the
	// flush, the others' (no-ops: their roll wrote them) after it.
	act := m.active()
	act.loadMax()
	act.tidxAppend(act.maxTs, act.maxOff)
	for _, s := range m.segs {
		s.sync()
	}
	m.epochsOnDisk = slices.Clone(m.epochs)
	m.rp = max(m.rp, m.leo)
	for _, s := range m.segs {
		s.loadMax()
		if s.maxTs >= 0 {
			s.tidxAppend(s.maxTs, s.maxOff)
		}
	}
}

// reopenOpts are the checkpointed offsets a reopen is given.
type reopenOpts struct {
	clean                   bool
	rp, logStart, hw, nowMs int64
}

// reopen is Log.Open on the files the model holds: after a crash each
// segment keeps what its last fsync wrote, and segments from the one
// holding the recovery point on are rescanned.
func (m *logModel) reopen(o reopenOpts) (dropped []int64, err error) {
	start := max(m.floorSeg(o.rp), 0)
	rescanFrom := m.segs[start].base
	if !o.clean {
		m.epochs = slices.Clone(m.epochsOnDisk)
		for i, s := range m.segs {
			if i < start && !slices.Equal(s.synced, s.batches) {
				return nil, fmt.Errorf("model: segment %d below the recovery point %d was not synced", s.base, o.rp)
			}
			s.batches = slices.Clone(s.synced)
			s.tidx = slices.Clone(s.tidxSynced)
		}
		if start > 0 {
			// Recovery re-adds the final time index entry of the segment
			// before the first one it rescans, from its batches after the
			// last entry (timestamps rise with offsets, so that is the last
			// batch's).
			if s := m.segs[start-1]; len(s.batches) > 0 {
				b := s.batches[len(s.batches)-1]
				s.tidxAppend(b.maxTs, b.last)
			}
		}
		for _, s := range m.segs[start:] {
			s.recover(m.interval())
			s.sync() // recovery flushes what it rebuilt
			for _, b := range s.batches {
				if b.epoch >= 0 {
					m.recoverEpoch(b)
				}
			}
		}
	}
	for _, s := range m.segs {
		s.createdMs = o.nowMs
		if o.clean || s.base < rescanFrom {
			// Opened from disk: nothing indexed since the last entry, and
			// the max timestamp comes from the time index. A rescanned
			// segment keeps what the rescan computed.
			s.bytesSince = 0
			s.maxKnown = false
		}
	}
	leo := m.active().nextOffset()
	if leo < o.logStart {
		dropped = m.bases()
		m.segs = []*mSeg{newMSeg(o.logStart, o.nowMs)}
		leo = o.logStart
	}
	m.leo = leo
	m.logStart = min(max(o.logStart, m.segs[0].base), leo)
	// A clean shutdown flushed everything, and recovery flushes every
	// segment it rescans: the whole log is durable either way.
	m.rp = leo
	m.epochsFromEnd(leo)
	m.epochsFromStart(m.logStart)
	m.hw = min(max(o.hw, m.logStart), leo)
	m.rebuildTxns(!o.clean)
	return dropped, nil
}

// expectedRead is what Log.Read must return.
type expectedRead struct {
	outOfRange      bool
	data            []byte
	firstIncomplete bool
	whole           []*mBatch // the whole batches in data
}

func (m *logModel) read(offset int64, maxBytes int32, iso FetchIsolation, minOne bool) expectedRead {
	if offset < m.logStart || offset > m.leo {
		return expectedRead{outOfRange: true}
	}
	maxOffset := m.leo
	switch iso {
	case FetchHighWatermark:
		maxOffset = m.hw
	case FetchTxnCommitted:
		maxOffset = m.lso()
	}
	if offset >= maxOffset {
		return expectedRead{}
	}
	limSeg := -1
	if maxOffset < m.leo {
		limSeg = max(m.floorSeg(maxOffset), 0)
	}
	for i := max(m.floorSeg(offset), 0); i < len(m.segs); i++ {
		s := m.segs[i]
		if s.base >= maxOffset && i != limSeg {
			break
		}
		// pos is where the first batch holding an offset >= offset starts;
		// limit is where the isolation bound cuts the segment: at the first
		// batch reaching maxOffset in the segment that holds maxOffset.
		var pos, limit int64
		j := -1
		for k, b := range s.batches {
			if j < 0 && b.last >= offset {
				j = k
			}
			if j < 0 {
				pos += b.size()
			}
		}
		for _, b := range s.batches {
			if i == limSeg && b.last >= maxOffset {
				break
			}
			limit += b.size()
		}
		if j < 0 {
			continue
		}
		first := s.batches[j]
		adjusted := int64(maxBytes)
		if minOne && first.size() > adjusted {
			adjusted = first.size()
		}
		n := max(min(limit-pos, adjusted), 0)
		var all []byte
		for _, b := range s.batches {
			all = append(all, b.data...)
		}
		out := expectedRead{data: all[pos : pos+n], firstIncomplete: n > 0 && n < first.size()}
		used := int64(0)
		for _, b := range s.batches[j:] {
			if used+b.size() > n {
				break
			}
			used += b.size()
			out.whole = append(out.whole, b)
		}
		return out
	}
	return expectedRead{}
}

// offsetForTimestamp is what FetchOffsetByTimestamp must answer.
func (m *logModel) offsetForTimestamp(ts int64) (TimestampOffset, bool) {
	switch ts {
	case EarliestTimestamp, EarliestLocalTimestamp:
		out := TimestampOffset{Timestamp: record.NoTimestamp, Offset: m.logStart, LeaderEpoch: -1}
		if len(m.epochs) > 0 && m.epochs[0].StartOffset <= m.logStart {
			out.LeaderEpoch = m.epochs[0].Epoch
		}
		return out, true
	case LatestTimestamp:
		out := TimestampOffset{Timestamp: record.NoTimestamp, Offset: m.leo, LeaderEpoch: -1}
		if e, ok := m.latestEpoch(); ok {
			out.LeaderEpoch = e
		}
		return out, true
	case MaxTimestamp:
		var best *mSeg
		bestTs := int64(math.MinInt64)
		for _, s := range m.segs {
			s.loadMax()
			if s.maxTs > bestTs {
				best, bestTs = s, s.maxTs
			}
		}
		if best == nil || bestTs < 0 {
			return TimestampOffset{}, false
		}
		for _, b := range best.batches {
			if b.maxTs != bestTs {
				continue
			}
			for i, rts := range b.ts {
				if rts == bestTs {
					return TimestampOffset{Timestamp: rts, Offset: b.base + int64(i), LeaderEpoch: max(b.epoch, -1)}, true
				}
			}
		}
		return TimestampOffset{}, false
	}
	if ts < 0 {
		return TimestampOffset{}, false
	}
	for _, s := range m.segs {
		if s.largestTimestamp() < ts {
			continue
		}
		for _, b := range s.batches {
			for i, rts := range b.ts {
				if off := b.base + int64(i); rts >= ts && off >= m.logStart {
					return TimestampOffset{Timestamp: rts, Offset: off, LeaderEpoch: max(b.epoch, -1)}, true
				}
			}
		}
		return TimestampOffset{}, false
	}
	return TimestampOffset{}, false
}

// ---------------------------------------------------------------------------
// The harness: generates operations, applies them to both, compares.

type modelProducer struct {
	pid   int64
	epoch int16
	seq   int32
	txnal bool
	// last is the newest data batch appended as leader, for a retry.
	last *mBatch
}

type modelHarness struct {
	t      *testing.T
	rng    *rand.Rand
	fs     *vfs.MemFS
	clk    *clock.Manual
	cfg    LogConfig
	dir    string
	enc    *modelEncoders
	stats  map[string]int // how often each path ran, for the -v summary
	decomp *record.Decompressor
	log    *Log
	m      *logModel
	trace  []string
	// epoch is the leader epoch appends use; it never decreases.
	epoch int32
	// lastTs is below every future record timestamp: timestamps rise with
	// offsets and never repeat, so each ListOffsets question has one answer.
	lastTs int64
	prods  []*modelProducer
}

// modelEncoders build compressed batches as a Kafka producer would. They
// are made once per test and reused: record.Compressor makes a gzip writer
// per call and pools zstd encoders, which -race keeps dropping, and its
// LZ4 frames use 4 MiB blocks (Kafka's producer uses 64 KiB), so under
// -race every batch allocated and cleared megabytes.
type modelEncoders struct {
	comp *record.Compressor // snappy
	gz   *gzip.Writer
	lz   *lz4.Writer
	zstd *zstd.Encoder
}

func newModelEncoders(t *testing.T) *modelEncoders {
	e := &modelEncoders{comp: record.NewCompressor(), gz: gzip.NewWriter(nil), lz: lz4.NewWriter(nil)}
	if err := e.lz.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.zstd, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<16)); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *modelEncoders) compress(codec record.Codec, src []byte) ([]byte, error) {
	var buf bytes.Buffer
	switch codec {
	case record.CodecGzip:
		e.gz.Reset(&buf)
		_, err := e.gz.Write(src)
		err = errors.Join(err, e.gz.Close())
		return buf.Bytes(), err
	case record.CodecLZ4:
		e.lz.Reset(&buf)
		_, err := e.lz.Write(src)
		err = errors.Join(err, e.lz.Close())
		return buf.Bytes(), err
	case record.CodecZstd:
		return e.zstd.EncodeAll(src, nil), nil
	}
	return e.comp.Compress(codec, nil, src)
}

func newModelHarness(t *testing.T, seed uint64, enc *modelEncoders, stats map[string]int) *modelHarness {
	rng := rand.New(rand.NewPCG(seed, 0x6d6f64656c))
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = int32(300 + rng.IntN(1700))
	cfg.IndexIntervalBytes = []int32{0, 50, 150, 400}[rng.IntN(4)]
	cfg.SegmentMs = 1 << 62 // rolls come from size only, which the model predicts
	cfg.RetentionMs = []int64{-1, 120_000, 300_000, 900_000}[rng.IntN(4)]
	cfg.RetentionBytes = []int64{-1, 1000, 2500, 5000}[rng.IntN(4)]
	cfg.FileDeleteDelayMs = []int64{0, 60_000}[rng.IntN(2)]
	h := &modelHarness{
		t:      t,
		rng:    rng,
		fs:     vfs.NewMem(),
		clk:    clock.NewManual(time.UnixMilli(1_700_000_000_000)),
		cfg:    cfg,
		dir:    "/data/topic-0",
		enc:    enc,
		stats:  stats,
		decomp: record.NewDecompressor(),
		epoch:  int32(rng.IntN(3)),
	}
	h.lastTs = h.now() - 3_600_000
	for i := range 3 {
		h.prods = append(h.prods, &modelProducer{pid: 1000 + int64(i)})
	}
	for i := range 2 {
		h.prods = append(h.prods, &modelProducer{pid: 2000 + int64(i), txnal: true})
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d: replay with STRAIT_SEED=%d or -model.seed=%d", seed, seed, seed)
			t.Logf("config: segment.bytes=%d index.interval.bytes=%d retention.ms=%d retention.bytes=%d file.delete.delay.ms=%d\ntrace:\n%s",
				cfg.SegmentBytes, cfg.IndexIntervalBytes, cfg.RetentionMs, cfg.RetentionBytes, cfg.FileDeleteDelayMs, strings.Join(h.trace, "\n"))
		}
	})
	l, _, err := Open(h.dir, h.options(reopenOpts{clean: true}))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	h.log = l
	h.m = newLogModel(cfg, h.now())
	h.check("open")
	return h
}

func (h *modelHarness) now() int64 { return h.clk.Now().UnixMilli() }

func (h *modelHarness) count(what string, n int) { h.stats[what] += n }

func (h *modelHarness) options(o reopenOpts) Options {
	return Options{
		FS:               h.fs,
		Clock:            h.clk,
		Scheduler:        InlineScheduler{},
		Config:           h.cfg,
		Decompressor:     h.decomp,
		RecoveryPoint:    o.rp,
		LogStartOffset:   o.logStart,
		HighWatermark:    o.hw,
		HadCleanShutdown: o.clean,
	}
}

func (h *modelHarness) logf(format string, args ...any) {
	h.trace = append(h.trace, fmt.Sprintf(format, args...))
}

func (h *modelHarness) fatalf(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf(format, args...)
}

func (h *modelHarness) closeLog() {
	if h.log != nil {
		if err := h.log.Close(); err != nil {
			h.fatalf("close: %v", err)
		}
		h.log = nil
	}
}

func (h *modelHarness) nextTs() int64 {
	ts := max(h.lastTs+1+h.rng.Int64N(20), h.now()-h.rng.Int64N(90_000))
	h.lastTs = ts
	return ts
}

// step runs one random operation and compares the Log with the model.
func (h *modelHarness) step(i int) {
	ops := []struct {
		weight int
		name   string
		run    func()
	}{
		{30, "append", h.opAppendLeader},
		{10, "append-follower", h.opAppendFollower},
		{3, "retry", h.opRetry},
		{7, "truncate-to", h.opTruncateTo},
		{2, "truncate-fully", h.opTruncateFully},
		{6, "log-start", h.opIncLogStart},
		{10, "hw", h.opUpdateHW},
		{6, "retention", h.opRetention},
		{4, "roll", h.opRoll},
		{4, "reopen", h.opReopen},
		{4, "crash", h.opCrash},
		{7, "advance", h.opAdvance},
		{3, "flush", h.opFlush},
	}
	total := 0
	for _, op := range ops {
		total += op.weight
	}
	r := h.rng.IntN(total)
	for _, op := range ops {
		if r -= op.weight; r < 0 {
			op.run()
			h.check(fmt.Sprintf("step %d (%s)", i, op.name))
			return
		}
	}
}

// --- batch building ---

func (h *modelHarness) records(n, maxValue int) ([]record.Record, []int64, int64) {
	recs := make([]record.Record, n)
	ts := make([]int64, n)
	for i := range recs {
		ts[i] = h.nextTs()
		v := make([]byte, h.rng.IntN(maxValue+1))
		for j := range v {
			v[j] = byte('a' + (i+j)%26) // compressible, so codecs shrink it
		}
		recs[i] = record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v)), TimestampDelta: ts[i] - ts[0]}
		if h.rng.IntN(3) == 0 {
			k := []byte(fmt.Sprintf("k%d", h.rng.IntN(10)))
			recs[i].Key, recs[i].KeyLen = k, int32(len(k))
		}
	}
	return recs, ts, ts[0]
}

// dataBatch builds a client batch; p is nil for a plain producer.
func (h *modelHarness) dataBatch(p *modelProducer, base int64, leaderEpoch int32) ([]byte, []int64) {
	n := 1 + h.rng.IntN(6)
	maxValue := int(h.cfg.SegmentBytes) / 8
	if h.rng.IntN(25) == 0 {
		maxValue = int(h.cfg.SegmentBytes) // sometimes too big for a segment
	}
	recs, ts, baseTs := h.records(n, maxValue)
	spec := record.BatchSpec{
		BaseOffset:           base,
		PartitionLeaderEpoch: leaderEpoch,
		ProducerID:           record.NoProducerID,
		ProducerEpoch:        record.NoProducerEpoch,
		BaseSequence:         record.NoSequence,
		BaseTimestamp:        baseTs,
	}
	if h.rng.IntN(3) == 0 {
		spec.Codec = record.Codec(1 + h.rng.IntN(4))
	}
	if p != nil {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = p.pid, p.epoch, p.seq
		spec.Transactional = p.txnal
	}
	if spec.Codec != record.CodecNone {
		return h.compressedBatch(spec, recs), ts
	}
	b, err := record.Build(spec, recs, nil)
	if err != nil {
		h.fatalf("build: %v", err)
	}
	return b, ts
}

// compressedBatch builds a compressed batch (see modelEncoders).
func (h *modelHarness) compressedBatch(spec record.BatchSpec, recs []record.Record) []byte {
	codec := spec.Codec
	spec.Codec = record.CodecNone
	plain, err := record.Build(spec, recs, nil)
	if err != nil {
		h.fatalf("build: %v", err)
	}
	body, err := h.enc.compress(codec, plain[record.HeaderSize:])
	if err != nil {
		h.fatalf("compress %s: %v", codec, err)
	}
	b := append(bytes.Clone(plain[:record.HeaderSize]), body...)
	// The v2 batch header: batchLength at byte 8 counts the bytes after the
	// log overhead; attributes at byte 21 carry the codec in bits 0-2.
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-record.LogOverhead))
	binary.BigEndian.PutUint16(b[21:], binary.BigEndian.Uint16(b[21:])|uint16(codec))
	record.Batch(b).SetCRC()
	return b
}

func (h *modelHarness) markerBatch(p *modelProducer, commit bool, base int64, leaderEpoch int32) ([]byte, []int64) {
	ts := h.nextTs()
	b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: p.pid, ProducerEpoch: p.epoch, Timestamp: ts}, commit, 0)
	b.SetBaseOffset(base)
	b.SetPartitionLeaderEpoch(leaderEpoch)
	return b, []int64{ts}
}

// mbatchOf decodes a batch the model expects the log to hold.
func mbatchOf(data []byte, ts []int64, commit bool) *mBatch {
	b := record.Batch(data)
	return &mBatch{
		data:    data,
		base:    b.BaseOffset(),
		last:    b.LastOffset(),
		epoch:   b.PartitionLeaderEpoch(),
		pid:     b.ProducerID(),
		pepoch:  b.ProducerEpoch(),
		lastSeq: b.LastSequence(),
		txn:     b.IsTransactional(),
		control: b.IsControl(),
		commit:  commit,
		ts:      ts,
		maxTs:   b.MaxTimestamp(),
	}
}

func (h *modelHarness) pickProducer(txnal bool) *modelProducer {
	var c []*modelProducer
	for _, p := range h.prods {
		if p.txnal == txnal {
			c = append(c, p)
		}
	}
	return c[h.rng.IntN(len(c))]
}

func (h *modelHarness) maybeBumpEpoch() {
	if h.rng.IntN(10) == 0 {
		h.epoch += 1 + int32(h.rng.IntN(2))
	}
}

// --- operations ---

func (h *modelHarness) opAppendLeader() {
	h.maybeBumpEpoch()
	var (
		p      *modelProducer
		buf    []byte
		ts     []int64
		origin = record.OriginClient
		commit bool
		kind   = "plain"
	)
	switch r := h.rng.IntN(20); {
	case r < 10:
		buf, ts = h.dataBatch(nil, 0, 0)
	case r < 14:
		p, kind = h.pickProducer(false), "idempotent"
		buf, ts = h.dataBatch(p, 0, 0)
	case r < 16:
		p, kind = h.pickProducer(true), "txn"
		buf, ts = h.dataBatch(p, 0, 0)
	default:
		p = h.pickProducer(true)
		for _, q := range h.prods {
			if _, ok := h.m.ongoing[q.pid]; ok && h.rng.IntN(4) != 0 {
				p = q
			}
		}
		commit, origin = h.rng.IntN(2) == 0, record.OriginCoordinator
		kind = map[bool]string{true: "commit", false: "abort"}[commit]
		buf, ts = h.markerBatch(p, commit, 0, 0)
	}
	client := bytes.Clone(buf)
	info, err := h.log.AppendAsLeader(buf, h.epoch, origin)
	h.logf("append %s pid=%d bytes=%d epoch=%d -> [%d,%d] dup=%t err=%v", kind, pidOf(p), len(client), h.epoch, info.FirstOffset, info.LastOffset, info.Duplicate, err)
	if int64(len(client)) > int64(h.cfg.SegmentBytes) {
		if !errors.Is(err, kerr.RecordListTooLarge) {
			h.fatalf("append of %d bytes into %d-byte segments: want RECORD_LIST_TOO_LARGE, got %v", len(client), h.cfg.SegmentBytes, err)
		}
		h.count("append-too-large", 1)
		return
	}
	if err != nil {
		h.fatalf("append %s: %v", kind, err)
	}
	want := bytes.Clone(client)
	record.Batch(want).SetBaseOffset(h.m.leo)
	record.Batch(want).SetPartitionLeaderEpoch(h.epoch)
	mb := mbatchOf(want, ts, commit)
	if info.Duplicate || info.FirstOffset != mb.base || info.LastOffset != mb.last {
		h.fatalf("append %s: got %+v, want offsets [%d,%d]", kind, info, mb.base, mb.last)
	}
	if err := h.m.appendBatches([]*mBatch{mb}, int64(len(want)), h.now()); err != nil {
		h.fatalf("%v", err)
	}
	if info.LogStartOffset != h.m.logStart {
		h.fatalf("append: info log start %d, model %d", info.LogStartOffset, h.m.logStart)
	}
	if p != nil && !mb.control {
		p.seq += int32(mb.last - mb.base + 1)
		mb.client = client
		p.last = mb
	}
	h.count("append-"+kind, 1)
	if mb.completes != nil {
		h.count("txn-ended", 1)
	}
	if record.Batch(want).Compression() != record.CodecNone {
		h.count("append-compressed", 1)
	}
}

func pidOf(p *modelProducer) int64 {
	if p == nil {
		return -1
	}
	return p.pid
}

func (h *modelHarness) opAppendFollower() {
	h.maybeBumpEpoch()
	leo := h.m.leo
	if leo > 0 && h.rng.IntN(20) == 0 {
		// A follower that did not truncate first must be refused.
		base := leo - 1 - h.rng.Int64N(min(leo, 3))
		buf, _ := h.dataBatch(nil, base, h.epoch)
		_, err := h.log.AppendAsFollower(buf)
		h.logf("append-follower below the log end at %d -> %v", base, err)
		if len(buf) > int(h.cfg.SegmentBytes) {
			// Validation comes first.
			if !errors.Is(err, kerr.RecordListTooLarge) {
				h.fatalf("follower append of %d bytes into %d-byte segments: want RECORD_LIST_TOO_LARGE, got %v", len(buf), h.cfg.SegmentBytes, err)
			}
			return
		}
		var ue *UnexpectedAppendOffsetError
		if !errors.As(err, &ue) || ue.FirstOffset != base || ue.LogEndOffset != leo {
			h.fatalf("follower append at %d below log end %d: got %v", base, leo, err)
		}
		h.count("follower-below-log-end", 1)
		return
	}
	next := leo
	if h.rng.IntN(5) == 0 {
		next += 1 + h.rng.Int64N(5) // a gap, as compaction leaves
	}
	var (
		buf  []byte
		bs   []*mBatch
		seqs = map[*modelProducer]int32{} // sequences before this append
	)
	ep := h.epoch
	for range 1 + h.rng.IntN(3) {
		var (
			data   []byte
			ts     []int64
			commit bool
		)
		switch r := h.rng.IntN(10); {
		case r < 6:
			data, ts = h.dataBatch(nil, next, ep)
		case r < 9:
			// Sequences continue across the batches of one append; they are
			// kept only if the append is accepted.
			p := h.pickProducer(r == 8)
			if _, ok := seqs[p]; !ok {
				seqs[p] = p.seq
			}
			data, ts = h.dataBatch(p, next, ep)
			p.seq += int32(record.Batch(data).LastOffsetDelta() + 1)
		default:
			commit = h.rng.IntN(2) == 0
			data, ts = h.markerBatch(h.pickProducer(true), commit, next, ep)
		}
		buf = append(buf, data...)
		bs = append(bs, mbatchOf(bytes.Clone(data), ts, commit))
		next = record.Batch(data).LastOffset() + 1
		if h.rng.IntN(4) == 0 {
			ep++
			h.epoch = max(h.epoch, ep)
		}
	}
	info, err := h.log.AppendAsFollower(bytes.Clone(buf))
	var descs []string
	for _, b := range bs {
		descs = append(descs, fmt.Sprintf("[%d,%d] e%d pid=%d/%d seq..%d", b.base, b.last, b.epoch, b.pid, b.pepoch, b.lastSeq))
	}
	h.logf("append-follower %s bytes=%d -> [%d,%d] err=%v", strings.Join(descs, " "), len(buf), info.FirstOffset, info.LastOffset, err)
	// Only a batch larger than a segment is refused; a larger set is
	// appended over several segments (appendRunsLocked).
	if slices.ContainsFunc(bs, func(b *mBatch) bool { return int64(len(b.data)) > int64(h.cfg.SegmentBytes) }) {
		if !errors.Is(err, kerr.RecordListTooLarge) {
			h.fatalf("follower append of a batch over %d-byte segments: want RECORD_LIST_TOO_LARGE, got %v", h.cfg.SegmentBytes, err)
		}
		for p, seq := range seqs {
			p.seq = seq
		}
		return
	}
	for p := range seqs {
		p.last = nil // a retry needs a batch the leader path stored
	}
	if err != nil {
		h.fatalf("follower append: %v", err)
	}
	if info.FirstOffset != bs[0].base || info.LastOffset != bs[len(bs)-1].last {
		h.fatalf("follower append: got %+v, want [%d,%d]", info, bs[0].base, bs[len(bs)-1].last)
	}
	// The Log appends the set in runs of whole batches that each fit in a
	// segment, rolling between them as a run needs.
	start, size := 0, int64(0)
	for i, b := range bs {
		if i > start && size+int64(len(b.data)) > int64(h.cfg.SegmentBytes) {
			if err := h.m.appendBatches(bs[start:i], size, h.now()); err != nil {
				h.fatalf("%v", err)
			}
			start, size = i, 0
			h.count("follower-append-over-segments", 1)
		}
		size += int64(len(b.data))
	}
	if err := h.m.appendBatches(bs[start:], size, h.now()); err != nil {
		h.fatalf("%v", err)
	}
	h.count("follower-append", 1)
	if bs[0].base > leo {
		h.count("follower-gap", 1)
	}
}

// opRetry resends a producer's newest batch; the Log must recognise it and
// answer with the original offsets without writing anything.
func (h *modelHarness) opRetry() {
	var cands []*modelProducer
	for _, p := range h.prods {
		if p.last != nil && p.last.last >= h.m.logStart && h.m.holds(p.last) {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		h.opAppendLeader()
		return
	}
	p := cands[h.rng.IntN(len(cands))]
	info, err := h.log.AppendAsLeader(bytes.Clone(p.last.client), h.epoch, record.OriginClient)
	h.logf("retry pid=%d [%d,%d] -> %+v err=%v", p.pid, p.last.base, p.last.last, info, err)
	if err != nil || !info.Duplicate || info.FirstOffset != p.last.base || info.LastOffset != p.last.last {
		h.fatalf("retry of pid %d batch [%d,%d]: got %+v, %v; want a duplicate", p.pid, p.last.base, p.last.last, info, err)
	}
	h.count("duplicate", 1)
}

func (m *logModel) holds(b *mBatch) bool {
	return slices.Contains(m.allBatches(), b)
}

func (h *modelHarness) opTruncateTo() {
	m := h.m
	var target int64
	switch r := h.rng.IntN(20); {
	case r == 0:
		_, err := h.log.TruncateTo(-1)
		h.logf("truncate-to -1 -> %v", err)
		if err == nil {
			h.fatalf("truncate to -1: no error")
		}
		return
	case r < 3:
		target = m.leo + h.rng.Int64N(3)
	case r < 6 && m.logStart > 0:
		target = h.rng.Int64N(m.logStart)
	default:
		if m.leo == m.logStart {
			target = m.leo
		} else {
			target = m.logStart + h.rng.Int64N(m.leo-m.logStart)
		}
	}
	if target >= m.logStart && target < m.leo {
		// An ended transaction that began below the log start must keep
		// its marker: reopened, it would begin below the log start.
		for changed := true; changed; {
			changed = false
			for _, t := range m.completed() {
				if t.first < m.logStart && t.marker >= target {
					target, changed = t.marker+1, true
				}
			}
		}
	}
	if target >= m.logStart && target < m.leo {
		h.ensureRebuildable(func(c *logModel) { c.truncateTo(target, h.now()) })
	}
	changed, err := h.log.TruncateTo(target)
	h.logf("truncate-to %d -> %t %v", target, changed, err)
	if err != nil {
		h.fatalf("truncate to %d: %v", target, err)
	}
	midBatch := slices.ContainsFunc(m.allBatches(), func(b *mBatch) bool { return b.base < target && target <= b.last })
	below := target < m.logStart
	if want := h.m.truncateTo(target, h.now()); changed != want {
		h.fatalf("truncate to %d: changed=%t, want %t", target, changed, want)
	}
	switch {
	case !changed:
		h.count("truncate-past-end", 1)
	case below:
		h.count("truncate-below-log-start", 1)
	case midBatch:
		h.count("truncate-mid-batch", 1)
	default:
		h.count("truncate-at-batch", 1)
	}
	h.resyncProducers()
}

// ensureRebuildable raises the high watermark over every ended transaction
// that would survive op with its marker at or above the high watermark.
// Which of those a producer state rebuild remembers depends on which
// snapshot it starts from (Kafka's too), so the model avoids the question.
func (h *modelHarness) ensureRebuildable(op func(c *logModel)) {
	c := h.m.clone()
	op(c)
	for _, t := range c.completed() {
		if t.marker >= c.hw {
			hw := h.log.UpdateHighWatermark(h.m.leo)
			h.logf("hw %d (before a rebuild) -> %d", h.m.leo, hw)
			h.count("hw-raised-before-rebuild", 1)
			if want := h.m.updateHW(h.m.leo); hw != want {
				h.fatalf("update hw: got %d, want %d", hw, want)
			}
			return
		}
	}
}

// resyncProducers restarts each producer's sequence after a producer state
// rebuild: from its newest data batch when the Log certainly knows it,
// else with sequence 0 of a new producer epoch, which is in order whatever
// the Log remembers.
func (h *modelHarness) resyncProducers() {
	all := h.m.allBatches()
	for _, p := range h.prods {
		var last *mBatch
		for _, b := range all {
			if b.pid == p.pid && !b.control {
				last = b
			}
		}
		// A rebuild from a snapshot knows the newest data batch; one
		// from the log start does not if that batch lies below it, yet
		// may know the producer's epoch from later markers, and then
		// only sequence 0 of a new epoch is in order (as in Kafka).
		if last != nil && last.pepoch == p.epoch && last.last >= h.m.logStart {
			p.seq = last.lastSeq + 1
		} else {
			p.epoch++
			p.seq = 0
		}
		if p.last != nil && !slices.Contains(all, p.last) {
			p.last = nil
		}
	}
}

func (h *modelHarness) opTruncateFully() {
	off := max(h.m.leo-5, 0) + h.rng.Int64N(15)
	err := h.log.TruncateFullyAndStartAt(off)
	h.logf("truncate-fully %d -> %v", off, err)
	if err != nil {
		h.fatalf("truncate fully at %d: %v", off, err)
	}
	h.m.truncateFully(off, h.now())
	h.resyncProducers()
}

// txnBound is the highest log start offset up to off that does not pass
// the first offset of an open transaction (and, with ended, does not land
// inside an ended one either). A producer state rebuild from a snapshot
// knows such a transaction's first offset, one from the log start does
// not, and the last stable offset and the transaction index depend on it.
func (m *logModel) txnBound(off int64, ended bool) int64 {
	for changed := true; changed; {
		changed = false
		for _, first := range m.ongoing {
			if off > first {
				off, changed = first, true
			}
		}
		if !ended {
			continue
		}
		for _, t := range m.completed() {
			if off > t.first && off <= t.marker {
				off, changed = t.first, true
			}
		}
	}
	return off
}

func (h *modelHarness) opIncLogStart() {
	m := h.m
	off := m.logStart - 1 + h.rng.Int64N(m.hw-m.logStart+4)
	if off <= m.hw {
		off = m.txnBound(off, false)
	}
	moved, err := h.log.MaybeIncrementLogStartOffset(off)
	h.logf("log-start %d -> %t %v", off, moved, err)
	if off > m.hw {
		if !errors.Is(err, kerr.OffsetOutOfRange) || moved {
			h.fatalf("log start to %d past hw %d: got %t, %v; want OFFSET_OUT_OF_RANGE", off, m.hw, moved, err)
		}
		h.count("log-start-past-hw", 1)
		return
	}
	if moved {
		h.count("log-start-moved", 1)
	}
	if err != nil {
		h.fatalf("log start to %d: %v", off, err)
	}
	if want := off > m.logStart; moved != want {
		h.fatalf("log start to %d: moved=%t, want %t", off, moved, want)
	}
	m.incLogStart(off)
}

func (h *modelHarness) opUpdateHW() {
	m := h.m
	var hw int64
	switch r := h.rng.IntN(10); {
	case r < 4:
		hw = m.leo
	case r < 7:
		bs := m.allBatches()
		if len(bs) == 0 {
			hw = m.leo
		} else {
			hw = bs[h.rng.IntN(len(bs))].base
		}
	case r < 9:
		hw = m.logStart - 2 + h.rng.Int64N(m.leo-m.logStart+5)
	default:
		hw = m.hw - h.rng.Int64N(3)
	}
	got := h.log.UpdateHighWatermark(hw)
	h.logf("hw %d -> %d", hw, got)
	if want := m.updateHW(hw); got != want {
		h.fatalf("update hw to %d: got %d, want %d", hw, got, want)
	}
}

func (h *modelHarness) opRetention() {
	c := h.m.clone()
	if _, err := c.deleteOldSegments(h.now()); err != nil {
		h.fatalf("%v", err)
	}
	if c.txnBound(c.logStart, false) != c.logStart {
		h.logf("retention skipped: it would move the log start to %d inside a transaction", c.logStart)
		h.count("retention-skipped", 1)
		return
	}
	res, err := h.log.DeleteOldSegments()
	h.logf("retention -> %+v %v", res, err)
	if err != nil {
		h.fatalf("retention: %v", err)
	}
	want, err := h.m.deleteOldSegments(h.now())
	if err != nil {
		h.fatalf("%v", err)
	}
	if res != want {
		h.fatalf("retention: got %+v, want %+v", res, want)
	}
	h.count("retention-deleted-by-log-start", res.ByLogStart)
	h.count("retention-deleted-by-size", res.BySize)
	h.count("retention-deleted-by-time", res.ByTime)
}

func (h *modelHarness) opRoll() {
	err := h.log.Roll()
	h.logf("roll -> %v", err)
	if err != nil {
		h.fatalf("roll: %v", err)
	}
	if _, err := h.m.roll(h.m.leo, h.now()); err != nil {
		h.fatalf("%v", err)
	}
}

func (h *modelHarness) opFlush() {
	err := h.log.Flush()
	h.logf("flush -> %v", err)
	if err != nil {
		h.fatalf("flush: %v", err)
	}
	h.m.flush()
}

func (h *modelHarness) opAdvance() {
	d := 10_000 + h.rng.Int64N(290_000)
	h.clk.Advance(time.Duration(d) * time.Millisecond)
	h.logf("advance %dms -> now %d", d, h.now())
}

// opReopen closes the log cleanly and opens it again with the offsets a
// LogManager would have checkpointed.
func (h *modelHarness) opReopen() {
	h.reopen(true)
	h.count("reopen-clean", 1)
}

// opCrash copies what is durable, as after a power loss, and opens that
// copy; half the time the log is flushed first.
func (h *modelHarness) opCrash() {
	if h.rng.IntN(2) == 0 {
		h.opFlush()
	}
	// Recovery rebuilds producer state and the transaction indexes of the
	// segments it rescans from the log start or a snapshot: a transaction
	// across the log start (one a truncation removed can come back) would
	// be found or not depending on which. Reopen cleanly instead.
	// A lost marker reopens its transaction, which is such a case when it
	// began below the log start, even if retention deleted its start.
	c := h.m.clone()
	c.reopen(reopenOpts{rp: c.rp, logStart: c.logStart, hw: c.hw, nowMs: h.now()})
	split := c.txnBound(c.logStart, true) != c.logStart
	kept := c.completed()
	for _, t := range h.m.completed() {
		if t.first < c.logStart && !slices.Contains(kept, t) {
			split = true
		}
	}
	if split {
		h.logf("crash skipped: a transaction would begin below the log start %d", c.logStart)
		h.count("crash-skipped", 1)
		h.reopen(true)
		return
	}
	leo := h.m.leo
	h.reopen(false)
	switch {
	case h.m.leo < leo:
		h.count("crash-lost-data", 1)
	case h.m.leo > leo:
		h.count("crash-resurrected-truncated-data", 1)
	default:
		h.count("crash-lost-nothing", 1)
	}
}

func (h *modelHarness) reopen(clean bool) {
	o := reopenOpts{clean: clean}
	h.ensureRebuildable(func(c *logModel) {
		if clean {
			c.close()
		}
		o := reopenOpts{clean: clean, rp: c.rp, logStart: c.logStart, hw: c.hw, nowMs: h.now()}
		if _, err := c.reopen(o); err != nil {
			h.fatalf("%v", err)
		}
	})
	if clean {
		if err := h.log.Close(); err != nil {
			h.fatalf("close: %v", err)
		}
		h.m.close()
	}
	o.rp, o.logStart, o.hw, o.nowMs = h.log.RecoveryPoint(), h.log.LogStartOffset(), h.log.HighWatermark(), h.now()
	if o.rp != h.m.rp {
		h.fatalf("recovery point %d, model %d", o.rp, h.m.rp)
	}
	if !clean {
		h.fs = h.fs.CrashClone(vfs.CrashOptions{})
	}
	h.log = nil
	l, rep, err := Open(h.dir, h.options(o))
	h.logf("reopen clean=%t rp=%d log-start=%d hw=%d -> %v err=%v", clean, o.rp, o.logStart, o.hw, rep, err)
	if err != nil {
		h.fatalf("reopen: %v", err)
	}
	h.log = l
	dropped, err := h.m.reopen(o)
	if err != nil {
		h.fatalf("%v", err)
	}
	if rep.Clean != clean || rep.LogEndOffset != h.m.leo || rep.LogStartOffset != h.m.logStart ||
		rep.TruncatedBytes != 0 || !slices.Equal(rep.DroppedSegments, dropped) {
		h.fatalf("recovery report %v, want clean=%t log=[%d,%d) dropped=%v", rep, clean, h.m.logStart, h.m.leo, dropped)
	}
	h.resyncProducers()
}

// --- comparison ---

func (h *modelHarness) check(what string) {
	h.t.Helper()
	l, m := h.log, h.m
	fail := func(format string, args ...any) {
		h.t.Helper()
		h.fatalf("after %s: %s", what, fmt.Sprintf(format, args...))
	}
	if got, want := l.LogEndOffset(), m.leo; got != want {
		fail("log end offset %d, want %d", got, want)
	}
	if got, want := l.LogStartOffset(), m.logStart; got != want {
		fail("log start offset %d, want %d", got, want)
	}
	if got, want := l.HighWatermark(), m.hw; got != want {
		fail("high watermark %d, want %d", got, want)
	}
	if got, want := l.LastStableOffset(), m.lso(); got != want {
		fail("last stable offset %d, want %d (ongoing %v, unreplicated %v)", got, want, m.ongoing, m.unrepl)
	}
	if got, want := l.RecoveryPoint(), m.rp; got != want {
		fail("recovery point %d, want %d", got, want)
	}
	segs := l.Segments()
	if !slices.IsSorted(segs) || len(segs) == 0 || segs[0] > l.LogStartOffset() {
		fail("segments %v: not sorted, or the first is above the log start %d", segs, l.LogStartOffset())
	}
	if want := m.bases(); !slices.Equal(segs, want) {
		fail("segments %v, want %v", segs, want)
	}
	if got, want := l.EpochEntries(), m.epochs; !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		fail("epoch entries %v, want %v", got, want)
	}

	// Every batch from the log start, byte for byte.
	got := readAll(h.t, l, m.logStart, FetchLogEnd)
	want := m.visible()
	if len(got) != len(want) {
		fail("read %d batches from the log start, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i].data) {
			fail("batch %d [%d,%d] differs from the model's [%d,%d]", i, got[i].BaseOffset(), got[i].LastOffset(), want[i].base, want[i].last)
		}
	}

	// Reads at random offsets, sizes and isolation levels.
	for range 4 {
		off := m.logStart - 1 + h.rng.Int64N(m.leo-m.logStart+3)
		maxBytes := int32(1 << 20)
		if h.rng.IntN(2) == 0 {
			maxBytes = int32(h.rng.IntN(int(h.cfg.SegmentBytes)))
		}
		iso := FetchIsolation(h.rng.IntN(3))
		minOne := h.rng.IntN(4) != 0
		h.checkRead(fail, off, maxBytes, iso, minOne)
	}

	// OffsetsForLeaderEpoch for every epoch around the known ones.
	top := h.epoch
	for _, e := range m.epochs {
		top = max(top, e.Epoch)
	}
	for req := int32(-1); req <= top+1; req++ {
		ep, off, ok := l.EndOffsetForEpoch(req)
		wep, woff := m.endOffsetFor(req)
		if ep != wep || off != woff || ok != (woff != epoch.UndefinedOffset) {
			fail("end offset for epoch %d: got (%d, %d, %t), want (%d, %d) with entries %v and log end %d", req, ep, off, ok, wep, woff, m.epochs, m.leo)
		}
	}

	// ListOffsets.
	tss := []int64{EarliestTimestamp, LatestTimestamp, MaxTimestamp, h.lastTs + 1, 0}
	if all := m.allBatches(); len(all) > 0 {
		for range 3 {
			b := all[h.rng.IntN(len(all))]
			ts := b.ts[h.rng.IntN(len(b.ts))]
			tss = append(tss, ts, ts+1)
		}
	}
	for _, ts := range tss {
		got, ok, err := l.FetchOffsetByTimestamp(ts)
		if err != nil {
			fail("list offsets %d: %v", ts, err)
		}
		want, wok := m.offsetForTimestamp(ts)
		if ok != wok || (ok && got != want) {
			fail("list offsets %d: got %+v %t, want %+v %t\n%s", ts, got, ok, want, wok, h.dumpSegments())
		}
	}
}

func (h *modelHarness) checkRead(fail func(string, ...any), off int64, maxBytes int32, iso FetchIsolation, minOne bool) {
	h.t.Helper()
	l, m := h.log, h.m
	fd, err := l.Read(off, maxBytes, iso, minOne)
	want := m.read(off, maxBytes, iso, minOne)
	desc := fmt.Sprintf("read offset=%d max-bytes=%d iso=%d min-one=%t", off, maxBytes, iso, minOne)
	if fd.HighWatermark != m.hw || fd.LastStableOffset != m.lso() || fd.LogStartOffset != m.logStart || fd.LogEndOffset != m.leo {
		fail("%s: offsets hw=%d lso=%d start=%d leo=%d, want %d %d %d %d", desc,
			fd.HighWatermark, fd.LastStableOffset, fd.LogStartOffset, fd.LogEndOffset, m.hw, m.lso(), m.logStart, m.leo)
	}
	if want.outOfRange {
		if !errors.Is(err, kerr.OffsetOutOfRange) {
			fail("%s: want OFFSET_OUT_OF_RANGE, got %v", desc, err)
		}
		return
	}
	if err != nil {
		fail("%s: %v", desc, err)
	}
	data := make([]byte, fd.Records.Size)
	if err := fd.Records.ReadInto(data); err != nil {
		fail("%s: %v", desc, err)
	}
	if !bytes.Equal(data, want.data) || fd.FirstEntryIncomplete != want.firstIncomplete {
		fail("%s: got %d bytes (first incomplete %t), want %d bytes (%t); equal prefix %t", desc,
			len(data), fd.FirstEntryIncomplete, len(want.data), want.firstIncomplete, bytes.HasPrefix(want.data, data) || bytes.HasPrefix(data, want.data))
	}
	if iso != FetchTxnCommitted || len(data) == 0 {
		if len(fd.AbortedTxns) != 0 {
			fail("%s: aborted transactions %v without read_committed data", desc, fd.AbortedTxns)
		}
		return
	}
	// Every aborted transaction overlapping the whole batches returned must
	// be listed, and nothing that is not an aborted transaction ending at or
	// after the fetch offset.
	var dataLast int64 = -1
	if n := len(want.whole); n > 0 {
		dataLast = want.whole[n-1].last
	}
	seen := map[index.AbortedTxn]bool{}
	for _, a := range fd.AbortedTxns {
		k := index.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset, LastOffset: a.LastOffset}
		if seen[k] {
			fail("%s: aborted transaction %+v listed twice", desc, a)
		}
		seen[k] = true
	}
	for _, t := range m.completed() {
		if !t.aborted || t.marker < off {
			continue
		}
		k := index.AbortedTxn{ProducerID: t.pid, FirstOffset: t.first, LastOffset: t.marker}
		if t.first <= dataLast && !seen[k] {
			fail("%s: aborted transaction pid=%d [%d,%d] overlaps the data (to %d) but is missing from %v", desc, t.pid, t.first, t.marker, dataLast, fd.AbortedTxns)
		}
		delete(seen, k)
	}
	if len(seen) > 0 {
		fail("%s: listed %v, which are not aborted transactions ending at or after %d", desc, seen, off)
	}
	if len(fd.AbortedTxns) > 0 {
		h.count("read-committed-with-aborted-txns", 1)
	}
}

// dumpSegments describes the Log's and the model's segments: batches,
// index entries and max timestamps, for failure messages.
func (h *modelHarness) dumpSegments() string {
	var b strings.Builder
	b.WriteString("log segments:\n")
	for _, s := range h.log.segs() {
		ts, off := s.MaxTimestamp()
		fmt.Fprintf(&b, "  base=%d size=%d max=%d@%d created=%d\n    time index:", s.baseOffset, s.Size(), ts, off, s.createdMs)
		for i := range s.timeIndex.Entries() {
			t, o, _ := s.timeIndex.Entry(i)
			fmt.Fprintf(&b, " %d@%d", t, o)
		}
		b.WriteString("\n    offset index:")
		for i := range s.offsetIndex.Entries() {
			o, p, _ := s.offsetIndex.Entry(i)
			fmt.Fprintf(&b, " %d@%d", o, p)
		}
		b.WriteString("\n    batches:")
		data := make([]byte, s.Size())
		if _, err := s.f().ReadAt(data, 0); err == nil {
			it := record.NewIter(data)
			for bt, ok := it.Next(); ok; bt, ok = it.Next() {
				fmt.Fprintf(&b, " [%d,%d]ts%d", bt.BaseOffset(), bt.LastOffset(), bt.MaxTimestamp())
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("model segments:\n")
	for _, s := range h.m.segs {
		s.loadMax()
		fmt.Fprintf(&b, "  base=%d size=%d max=%d@%d created=%d\n    time index:", s.base, s.size(), s.maxTs, s.maxOff, s.createdMs)
		for _, e := range s.tidx {
			fmt.Fprintf(&b, " %d@%d", e.ts, e.off)
		}
		b.WriteString("\n    batches:")
		for _, bt := range s.batches {
			fmt.Fprintf(&b, " [%d,%d]ts%d", bt.base, bt.last, bt.maxTs)
		}
		b.WriteString("\n")
	}
	return b.String()
}
