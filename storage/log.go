package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/epoch"
	"github.com/strait-io/strait/storage/producer"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/validator"
	"github.com/strait-io/strait/storage/vfs"
)

// Scheduler runs background work a Log hands off, such as flushing a segment
// that was just rolled. Tests pass one that runs work inline.
type Scheduler interface {
	Go(f func())
}

// GoScheduler runs each task on its own goroutine.
type GoScheduler struct{}

// Go implements Scheduler.
func (GoScheduler) Go(f func()) { go f() }

// InlineScheduler runs each task before returning; deterministic tests use it.
type InlineScheduler struct{}

// Go implements Scheduler.
func (InlineScheduler) Go(f func()) { f() }

// Options are a Log's dependencies and the offsets its owner checkpointed.
type Options struct {
	FS        vfs.FS
	Clock     clock.Clock
	Logger    *slog.Logger
	Scheduler Scheduler
	Config    LogConfig
	// Decompressor is shared by every log of a broker; nil makes one.
	Decompressor *record.Decompressor
	// Compressor recompresses the batches the cleaner rewrites; shared by
	// every log of a broker, nil makes one.
	Compressor *record.Compressor
	// TopicID is written to partition.metadata when the log is created;
	// zero leaves an existing file alone.
	TopicID TopicID

	// RecoveryPoint is the offset below which the log was known flushed
	// (recovery-point-offset-checkpoint). Recovery rescans from it.
	RecoveryPoint int64
	// LogStartOffset is the checkpointed log start offset
	// (log-start-offset-checkpoint).
	LogStartOffset int64
	// HighWatermark is the checkpointed high watermark
	// (replication-offset-checkpoint); it is clamped into the log.
	HighWatermark int64
	// HadCleanShutdown skips recovery: the previous process closed the log.
	HadCleanShutdown bool
	// CleanerCheckpoint is the log's cleaner-offset-checkpoint entry: the
	// first offset compaction has not cleaned yet (0 when none).
	CleanerCheckpoint int64
	// OnFailure, when set, hears once that the log failed, with the
	// StorageError it answers from then on (Kafka's
	// LogDirFailureChannel.maybeAddOfflineLogDir). It runs with the log's
	// lock held, so it must not block or call the log.
	OnFailure func(*StorageError)
	// SyncsDeferred, when set and true, makes Close leave the .log
	// files' data to a sync of the whole file system by the owner
	// (LogManager.closeLogs); the other files it writes go through an FS
	// whose syncs are deferred too (vfs.WithDeferredSyncs).
	SyncsDeferred func() bool
}

// Log is one partition's log: UnifiedLog over LocalLog in Kafka's terms. All
// mutations are serialised by mu; reads use atomically published state and
// never take mu, so a fetch never waits for an append's IO.
type Log struct {
	dir       string
	fsys      vfs.FS
	clock     clock.Clock
	logger    *slog.Logger
	scheduler Scheduler
	decomp    *record.Decompressor
	comp      *record.Compressor
	validator *validator.Validator
	topicID   TopicID

	mu                sync.Mutex // serialises mutations; guards the fields below
	config            LogConfig
	epochs            *epoch.Cache
	producers         *producer.Manager
	unflushedMessages int64
	lastFlushMs       int64
	pendingDeletes    []pendingDelete
	// truncations counts TruncateTo and TruncateFullyAndStartAt calls that
	// changed the log, so a cleaning that started before one gives up.
	truncations uint64

	// cleanMu serialises cleanings of the log; they hold mu only to swap.
	cleanMu sync.Mutex
	// cleanerCheckpoint is the first offset not yet compacted.
	cleanerCheckpoint atomic.Int64

	segments       atomic.Pointer[[]*LogSegment] // sorted by base offset, never empty
	logStartOffset atomic.Int64
	highWatermark  atomic.Int64
	// firstUnstable caches producers.FirstUnstableOffset (-1 when none) so
	// LastStableOffset needs no lock.
	firstUnstable atomic.Int64
	hwPos         atomic.Pointer[offsetPosition]
	lsoPos        atomic.Pointer[offsetPosition]
	// positionsGen counts the changes that move batches within a segment
	// (truncation, a cleaner swap); a cached position from an earlier
	// count is stale (forgetPositionsLocked).
	positionsGen atomic.Uint64
	failed       atomic.Pointer[StorageError]
	// syncsDeferred is Options.SyncsDeferred.
	syncsDeferred func() bool
	onFailure     func(*StorageError)
	closed        atomic.Bool
	// logEnd is the log end offset with the segment and byte position
	// where it lies (Kafka's nextOffsetMetadata); Read bounds its data by
	// it. setLogEndOffsetLocked publishes it, logEndOffset reads it.
	logEnd atomic.Pointer[logEndPosition]

	flush flusher
	// newDir is what a partition directory this process created still
	// owes before it is durable (new_dir.go).
	newDir newDirState
}

// pendingDelete is a segment renamed to .deleted, whose files are removed
// once file.delete.delay.ms has passed so in-flight reads finish first.
type pendingDelete struct {
	seg   *LogSegment
	dueMs int64
}

// logEndPosition is the log end offset and where it lies: the segment
// holding the data below it and that segment's size when it was published.
type logEndPosition struct {
	offset int64
	seg    *LogSegment
	pos    int64
}

// setLogEndOffsetLocked publishes the log end offset, whose data ends at
// seg's current size. The segment and its bytes are published first, then
// the log end offset with its position (Kafka's LocalLog.updateLogEndOffset
// sets nextOffsetMetadata the same way, a LogOffsetMetadata carrying the
// segment position). mu is held, or the log is still opening.
func (l *Log) setLogEndOffsetLocked(offset int64, seg *LogSegment) {
	l.logEnd.Store(&logEndPosition{offset: offset, seg: seg, pos: seg.Size()})
}

// logEndOffset is the published log end offset.
func (l *Log) logEndOffset() int64 { return l.logEnd.Load().offset }

// offsetPosition caches where an offset (the high watermark or LSO) sits.
// gen is Log.positionsGen when the search for it began.
type offsetPosition struct {
	offset  int64
	segBase int64
	pos     int64
	gen     uint64
}

// forgetPositionsLocked ends every cached high watermark and LSO position,
// and every one a read is computing now: a truncation or a cleaner swap
// moved batches. Clearing the caches alone was not enough, since a read
// that scanned the old layout stored its position after the clear.
// Called after the batches moved; mu is held.
func (l *Log) forgetPositionsLocked() {
	l.positionsGen.Add(1)
	l.hwPos.Store(nil)
	l.lsoPos.Store(nil)
}

// Open opens the partition log in dir, creating dir and an empty log when
// there is none, and recovers it when the previous process did not close it
// cleanly. The report says what recovery found and dropped.
func Open(dir string, o Options) (*Log, *RecoveryReport, error) {
	if o.FS == nil || o.Clock == nil {
		return nil, nil, errors.New("storage: Options.FS and Options.Clock are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Scheduler == nil {
		o.Scheduler = GoScheduler{}
	}
	if o.Decompressor == nil {
		o.Decompressor = record.NewDecompressor()
	}
	if o.Compressor == nil {
		o.Compressor = record.NewCompressor()
	}
	l := &Log{
		dir:       dir,
		fsys:      o.FS,
		clock:     o.Clock,
		logger:    o.Logger.With("dir", dir),
		scheduler: o.Scheduler,
		decomp:    o.Decompressor,
		comp:      o.Compressor,
		validator: validator.New(o.Decompressor),
		config:    o.Config,
		topicID:   o.TopicID,
		onFailure: o.OnFailure,

		syncsDeferred: o.SyncsDeferred,
	}
	l.logEnd.Store(&logEndPosition{}) // until load publishes the real one
	l.flush.init()
	l.flush.groupCommit.Store(o.Config.FlushMessages < math.MaxInt64)
	l.firstUnstable.Store(-1)
	l.cleanerCheckpoint.Store(max(o.CleanerCheckpoint, 0))
	rep, err := l.load(o)
	if err != nil {
		l.closeFiles(false)
		return nil, nil, fmt.Errorf("storage: opening log %s: %w", dir, err)
	}
	return l, rep, nil
}

// Dir is the partition directory.
func (l *Log) Dir() string { return l.dir }

// TopicID is the topic id recorded in partition.metadata.
func (l *Log) TopicID() TopicID { return l.topicID }

// Config returns the log's configuration.
func (l *Log) Config() LogConfig {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.config
}

// SetConfig changes the configuration (a topic config update); it applies
// to the next append, roll and retention pass.
func (l *Log) SetConfig(c LogConfig) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.config = c
	l.flush.groupCommit.Store(c.FlushMessages < math.MaxInt64)
}

func (l *Log) segs() []*LogSegment { return *l.segments.Load() }

func (l *Log) setSegments(s []*LogSegment) {
	sort.Slice(s, func(i, j int) bool { return s[i].baseOffset < s[j].baseOffset })
	l.segments.Store(&s)
}

func (l *Log) activeSegment() *LogSegment {
	s := l.segs()
	return s[len(s)-1]
}

// floorSegment returns the index of the last segment whose base offset is
// <= offset, or -1.
func floorSegment(segs []*LogSegment, offset int64) int {
	return sort.Search(len(segs), func(i int) bool { return segs[i].baseOffset > offset }) - 1
}

// Segments returns the base offsets of the live segments (for tests and
// DescribeLogDirs).
func (l *Log) Segments() []int64 {
	segs := l.segs()
	out := make([]int64, len(segs))
	for i, s := range segs {
		out[i] = s.baseOffset
	}
	return out
}

// Size is the total bytes of the log's segments.
func (l *Log) Size() int64 {
	var n int64
	for _, s := range l.segs() {
		n += s.Size()
	}
	return n
}

// check returns the error a failed or closed log answers with.
func (l *Log) check() error {
	if f := l.failed.Load(); f != nil {
		return f
	}
	if l.closed.Load() {
		return ErrLogClosed
	}
	return nil
}

// fail marks the log failed with err (an IO error) and returns the
// StorageError every later call will get.
func (l *Log) fail(op string, err error) error {
	if l.closed.Load() {
		// Close (topic deletion, a replica removed) closed the files
		// under a call that was already past its check: the error is the
		// close's doing, not the disk's. markClosed runs before the
		// files close, so such an error always sees the flag. Kafka
		// leaves a deleted log's files open for file.delete.delay.ms
		// instead; either way a reader of a deleted topic must not take
		// the log directory offline (it halts the broker).
		return ErrLogClosed
	}
	se := &StorageError{Dir: l.dir, Op: op, Err: err}
	if l.failed.CompareAndSwap(nil, se) {
		l.logger.Error("log failed: it answers every call with this error from now on", "op", op, "err", err)
		if l.onFailure != nil {
			l.onFailure(se)
		}
		return se
	}
	return l.failed.Load()
}

// Close flushes the log, snapshots producer state at the log end offset and
// closes every file. A closed log answers ErrLogClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return nil
	}
	if f := l.failed.Load(); f != nil {
		l.markClosed()
		l.closeFiles(false)
		return f
	}
	var errs []error
	// The active segment's final time index entry is written before the
	// flush so that it is durable: a clean open trusts the time index for
	// the segment's max timestamp.
	if err := l.activeSegment().onBecomeInactive(); err != nil {
		errs = append(errs, l.fail("close", err))
	}
	if err := l.flushAllLocked(); err != nil {
		errs = append(errs, err)
	}
	if err := l.producers.TakeSnapshot(); err != nil {
		errs = append(errs, err)
	}
	l.markClosed()
	errs = append(errs, l.closeFiles(len(errs) == 0))
	return errors.Join(errs...)
}

// closeFiles closes every segment, removing those pending deletion.
func (l *Log) closeFiles(clean bool) error {
	var errs []error
	if p := l.segments.Load(); p != nil {
		for _, s := range *p {
			errs = append(errs, s.close(clean))
		}
	}
	for _, pd := range l.pendingDeletes {
		errs = append(errs, pd.seg.deleteFiles())
	}
	l.pendingDeletes = nil
	return errors.Join(errs...)
}

// abandon makes the log refuse every later call with ErrLogClosed without
// flushing or closing anything (LogManager.Abandon). Taking the lock waits
// for the write under way.
func (l *Log) abandon() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.markClosed()
}
