package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/index"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// TestLogDatadriven runs the scripts in testdata/log/. Each script drives one
// partition log on an in-memory filesystem; see logDriver.run for the
// commands. Regenerate expected output with -rewrite and read the diff.
func TestLogDatadriven(t *testing.T) {
	datadriven.Walk(t, "testdata/log", func(t *testing.T, path string) {
		d := &logDriver{env: newTestEnv(t)}
		defer d.closeQuietly()
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			d.env.t = t
			return d.run(t, td)
		})
	})
}

type logDriver struct {
	env  *testEnv
	log  *Log
	lfs  *vfs.LoggingFS
	seqs map[int64]int32 // next sequence per producer id
}

func (d *logDriver) closeQuietly() {
	if d.log != nil {
		d.log.Close()
	}
}

func (d *logDriver) mustLog(t *testing.T) *Log {
	if d.log == nil {
		t.Fatal("no open log: use open first")
	}
	return d.log
}

// needsLog lists commands that need an open log; run answers them with a
// message instead of failing so -rewrite shows the whole script.
var needsLog = map[string]bool{
	"close": true, "append": true, "append-follower": true, "marker": true, "pid-reset": true, "read": true,
	"hw": true, "truncate-to": true, "truncate-fully": true, "delete-records": true, "roll": true,
	"flush": true, "retention": true, "expire": true, "flush-if-due": true, "remove-deleted": true, "list-offsets": true, "epoch-end": true, "state": true,
}

func argInt(td *datadriven.TestData, key string, def int64) int64 {
	for _, a := range td.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			var n int64
			fmt.Sscan(a.Vals[0], &n)
			return n
		}
	}
	return def
}

func argStr(td *datadriven.TestData, key, def string) string {
	for _, a := range td.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0]
		}
	}
	return def
}

func errString(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return fmt.Sprintf("error [%s]: %v", ke.Message, err)
	}
	return fmt.Sprintf("error: %v", err)
}

func (d *logDriver) run(t *testing.T, td *datadriven.TestData) string {
	e := d.env
	if needsLog[td.Cmd] && d.log == nil {
		return "no open log"
	}
	switch td.Cmd {
	case "open":
		// open [clean] [recovery-point=N] [log-start=N] [hw=N] [segment-bytes=N]
		//      [index-interval=N] [retention-ms=N] [retention-bytes=N]
		//      [flush-messages=N] [log-append-time] [compact] [delete-delay-ms=N]
		e.cfg.SegmentBytes = int32(argInt(td, "segment-bytes", int64(e.cfg.SegmentBytes)))
		e.cfg.IndexIntervalBytes = int32(argInt(td, "index-interval", int64(e.cfg.IndexIntervalBytes)))
		e.cfg.RetentionMs = argInt(td, "retention-ms", e.cfg.RetentionMs)
		e.cfg.RetentionBytes = argInt(td, "retention-bytes", e.cfg.RetentionBytes)
		e.cfg.FlushMessages = argInt(td, "flush-messages", e.cfg.FlushMessages)
		e.cfg.FileDeleteDelayMs = argInt(td, "delete-delay-ms", e.cfg.FileDeleteDelayMs)
		e.cfg.SegmentMs = argInt(td, "segment-ms", e.cfg.SegmentMs)
		e.cfg.FlushMs = argInt(td, "flush-ms", e.cfg.FlushMs)
		if td.HasArg("log-append-time") {
			e.cfg.TimestampType = record.LogAppendTime
		}
		if td.HasArg("compact") {
			e.cfg.CleanupPolicy = CleanupPolicy{Compact: true}
		}
		o := e.options(td.HasArg("clean"))
		o.RecoveryPoint = argInt(td, "recovery-point", 0)
		o.LogStartOffset = argInt(td, "log-start", 0)
		o.HighWatermark = argInt(td, "hw", 0)
		d.lfs = vfs.WithLogging(e.fs, e.dir)
		o.FS = d.lfs
		l, rep, err := Open(e.dir, o)
		if err != nil {
			return errString(err)
		}
		d.log = l
		d.lfs.Take()
		return rep.String()

	case "close":
		err := d.mustLog(t).Close()
		d.log = nil
		if err != nil {
			return errString(err)
		}
		return "ok"

	case "crash":
		// crash [seed=N]: the process dies; the disk keeps synced bytes (and
		// with a seed, a random prefix of each unsynced tail).
		opts := vfs.CrashOptions{}
		if s := argInt(td, "seed", -1); s >= 0 {
			opts.Rand = rand.New(rand.NewPCG(uint64(s), 0))
		}
		e.fs = e.fs.CrashClone(opts)
		d.log = nil
		return "crashed"

	case "advance":
		e.clock.Advance(time.Duration(argInt(td, "ms", 0)) * time.Millisecond)
		return fmt.Sprintf("now=%d", e.clock.Now().UnixMilli())

	case "append":
		return d.append(t, td)

	case "append-follower":
		// append-follower base=B epoch=E [records=N] [pid=P pepoch=E seq=S] [txn]
		spec := d.spec(td)
		spec.BaseOffset = argInt(td, "base", 0)
		buf := e.batch(spec, int(argInt(td, "records", 1)), int(argInt(td, "value-size", 0)))
		info, err := d.mustLog(t).AppendAsFollower(buf)
		if err != nil {
			return errString(err)
		}
		return fmt.Sprintf("appended [%d,%d]", info.FirstOffset, info.LastOffset)

	case "marker":
		// marker pid=P pepoch=E (commit|abort) [coord-epoch=N] [epoch=E]
		b := record.EndTxnMarkerBatch(record.ControlBatchSpec{
			ProducerID:    argInt(td, "pid", 0),
			ProducerEpoch: int16(argInt(td, "pepoch", 0)),
			Timestamp:     e.clock.Now().UnixMilli(),
		}, td.HasArg("commit"), int32(argInt(td, "coord-epoch", 0)))
		info, err := d.mustLog(t).AppendAsLeader(b, int32(argInt(td, "epoch", 0)), record.OriginCoordinator)
		if err != nil {
			return errString(err)
		}
		return fmt.Sprintf("appended [%d,%d]", info.FirstOffset, info.LastOffset)

	case "pid-reset":
		// pid-reset epoch=E [follower base=B]
		b := record.MirrorPidResetBatch(record.ControlBatchSpec{
			ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, Timestamp: e.clock.Now().UnixMilli(),
			PartitionLeaderEpoch: int32(argInt(td, "epoch", 0)),
		})
		var info AppendInfo
		var err error
		if td.HasArg("follower") {
			b.SetBaseOffset(argInt(td, "base", 0))
			info, err = d.mustLog(t).AppendAsFollower(b)
		} else {
			info, err = d.mustLog(t).AppendAsLeader(b, int32(argInt(td, "epoch", 0)), record.OriginCoordinator)
		}
		if err != nil {
			return errString(err)
		}
		return fmt.Sprintf("appended [%d,%d]", info.FirstOffset, info.LastOffset)

	case "read":
		// read offset=O [max-bytes=N] [iso=leo|hw|lso] [no-min-one]
		iso := map[string]FetchIsolation{"leo": FetchLogEnd, "hw": FetchHighWatermark, "lso": FetchTxnCommitted}[argStr(td, "iso", "leo")]
		fd, err := d.mustLog(t).Read(argInt(td, "offset", 0), int32(argInt(td, "max-bytes", 1<<20)), iso, !td.HasArg("no-min-one"))
		if err != nil {
			return errString(err)
		}
		return describeFetch(t, fd)

	case "hw":
		return fmt.Sprintf("hw=%d", d.mustLog(t).UpdateHighWatermark(argInt(td, "offset", 0)))

	case "truncate-to":
		changed, err := d.mustLog(t).TruncateTo(argInt(td, "offset", 0))
		if err != nil {
			return errString(err)
		}
		return fmt.Sprintf("truncated=%t\n%s", changed, d.fsLog())

	case "truncate-fully":
		if err := d.mustLog(t).TruncateFullyAndStartAt(argInt(td, "offset", 0)); err != nil {
			return errString(err)
		}
		return "ok\n" + d.fsLog()

	case "delete-records":
		moved, err := d.mustLog(t).MaybeIncrementLogStartOffset(argInt(td, "offset", 0))
		if err != nil {
			return errString(err)
		}
		return fmt.Sprintf("moved=%t log-start=%d", moved, d.log.LogStartOffset())

	case "roll":
		if err := d.mustLog(t).Roll(); err != nil {
			return errString(err)
		}
		return d.fsLog()

	case "flush":
		if err := d.mustLog(t).Flush(); err != nil {
			return errString(err)
		}
		return fmt.Sprintf("recovery-point=%d\n%s", d.log.RecoveryPoint(), d.fsLog())

	case "retention":
		res, err := d.mustLog(t).DeleteOldSegments()
		if err != nil {
			return errString(err)
		}
		return fmt.Sprintf("deleted segments=%d bytes=%d (log-start %d, size %d, time %d) log-start=%d\n%s",
			res.Segments, res.Bytes, res.ByLogStart, res.BySize, res.ByTime, d.log.LogStartOffset(), d.fsLog())

	case "flush-if-due":
		if err := d.mustLog(t).FlushIfDue(); err != nil {
			return errString(err)
		}
		return fmt.Sprintf("recovery-point=%d\n%s", d.log.RecoveryPoint(), d.fsLog())

	case "expire":
		if err := d.mustLog(t).RemoveExpiredProducers(); err != nil {
			return errString(err)
		}
		return d.state(t)

	case "remove-deleted":
		if err := d.mustLog(t).RemoveDeletedSegments(); err != nil {
			return errString(err)
		}
		return d.fsLog()

	case "list-offsets":
		to, ok, err := d.mustLog(t).FetchOffsetByTimestamp(argInt(td, "ts", 0))
		if err != nil {
			return errString(err)
		}
		if !ok {
			return "not found"
		}
		return fmt.Sprintf("offset=%d timestamp=%d epoch=%d", to.Offset, to.Timestamp, to.LeaderEpoch)

	case "epoch-end":
		ep, off, ok := d.mustLog(t).EndOffsetForEpoch(int32(argInt(td, "epoch", 0)))
		return fmt.Sprintf("epoch=%d end-offset=%d found=%t", ep, off, ok)

	case "state":
		return d.state(t)

	case "files":
		return listFiles(t, e.fs, e.dir)

	case "corrupt":
		// corrupt file=NAME at=N [byte=X]: flip a byte of a file on disk.
		path := filepath.Join(e.dir, argStr(td, "file", ""))
		f, err := e.fs.OpenReadWrite(path)
		if err != nil {
			return errString(err)
		}
		defer f.Close()
		at := argInt(td, "at", 0)
		if at < 0 {
			size, _ := f.Size()
			at += size
		}
		var b [1]byte
		f.ReadAt(b[:], at)
		b[0] ^= byte(argInt(td, "byte", 0xff))
		f.WriteAt(b[:], at)
		f.Sync()
		return fmt.Sprintf("flipped byte %d of %s", at, filepath.Base(path))

	case "remove-file":
		if err := e.fs.Remove(filepath.Join(e.dir, argStr(td, "file", ""))); err != nil {
			return errString(err)
		}
		return "removed"

	case "append-garbage":
		// append-garbage file=NAME bytes=N: a torn write at the end of a file.
		path := filepath.Join(e.dir, argStr(td, "file", ""))
		f, err := e.fs.OpenReadWrite(path)
		if err != nil {
			return errString(err)
		}
		defer f.Close()
		size, _ := f.Size()
		junk := make([]byte, argInt(td, "bytes", 10))
		for i := range junk {
			junk[i] = byte(i*7 + 1)
		}
		f.WriteAt(junk, size)
		f.Sync()
		return fmt.Sprintf("%s: %d -> %d bytes", filepath.Base(path), size, size+int64(len(junk)))

	case "verify":
		// Kafka's kafka-dump-log --verify-index-only checks, ported.
		return verifyLikeDumpLogSegments(t, e.fs, e.dir)
	}
	t.Fatalf("unknown command %q", td.Cmd)
	return ""
}

// spec reads producer and codec arguments.
func (d *logDriver) spec(td *datadriven.TestData) record.BatchSpec {
	spec := record.BatchSpec{
		PartitionLeaderEpoch: int32(argInt(td, "epoch", 0)),
		ProducerID:           record.NoProducerID,
		ProducerEpoch:        record.NoProducerEpoch,
		BaseSequence:         record.NoSequence,
		Transactional:        td.HasArg("txn"),
		BaseTimestamp:        argInt(td, "ts", d.env.clock.Now().UnixMilli()),
	}
	if c, ok := record.ParseCodec(argStr(td, "codec", "none")); ok {
		spec.Codec = c
	}
	if pid := argInt(td, "pid", -1); pid >= 0 {
		spec.ProducerID = pid
		spec.ProducerEpoch = int16(argInt(td, "pepoch", 0))
		if d.seqs == nil {
			d.seqs = map[int64]int32{}
		}
		spec.BaseSequence = int32(argInt(td, "seq", int64(d.seqs[pid])))
		d.seqs[pid] = spec.BaseSequence + int32(argInt(td, "records", 1))
	}
	return spec
}

func (d *logDriver) append(t *testing.T, td *datadriven.TestData) string {
	spec := d.spec(td)
	origin := record.OriginClient
	if argStr(td, "origin", "client") == "coordinator" {
		origin = record.OriginCoordinator
	}
	buf := d.env.batch(spec, int(argInt(td, "records", 1)), int(argInt(td, "value-size", 0)))
	info, err := d.mustLog(t).AppendAsLeader(buf, spec.PartitionLeaderEpoch, origin)
	if err != nil {
		return errString(err)
	}
	out := fmt.Sprintf("appended [%d,%d]", info.FirstOffset, info.LastOffset)
	if info.Duplicate {
		out = fmt.Sprintf("duplicate of [%d,%d]", info.FirstOffset, info.LastOffset)
	}
	if info.LogAppendTime >= 0 {
		out += fmt.Sprintf(" log-append-time=%d", info.LogAppendTime)
	}
	if fl := d.fsLog(); fl != "" {
		out += "\n" + fl
	}
	return out
}

func (d *logDriver) fsLog() string {
	if d.lfs == nil {
		return ""
	}
	return strings.TrimRight(d.lfs.Take(), "\n")
}

func describeFetch(t *testing.T, fd FetchDataInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "hw=%d lso=%d log-start=%d leo=%d bytes=%d", fd.HighWatermark, fd.LastStableOffset, fd.LogStartOffset, fd.LogEndOffset, fd.Records.Size)
	if fd.FirstEntryIncomplete {
		b.WriteString(" first-entry-incomplete")
	}
	b.WriteString("\n")
	buf := make([]byte, fd.Records.Size)
	if err := fd.Records.ReadInto(buf); err != nil {
		t.Fatal(err)
	}
	it := record.NewIter(buf)
	for bt, ok := it.Next(); ok; bt, ok = it.Next() {
		fmt.Fprintf(&b, "  %s\n", describeBatch(bt))
	}
	if it.Err() != nil {
		fmt.Fprintf(&b, "  (partial batch: %d bytes)\n", len(buf)-it.Pos())
	}
	for _, a := range fd.AbortedTxns {
		fmt.Fprintf(&b, "  aborted pid=%d first=%d\n", a.ProducerID, a.FirstOffset)
	}
	return strings.TrimRight(b.String(), "\n")
}

func describeBatch(b record.Batch) string {
	s := fmt.Sprintf("[%d,%d] epoch=%d", b.BaseOffset(), b.LastOffset(), b.PartitionLeaderEpoch())
	if b.HasProducerID() {
		s += fmt.Sprintf(" pid=%d/%d seq=%d", b.ProducerID(), b.ProducerEpoch(), b.BaseSequence())
	}
	if b.IsTransactional() {
		s += " txn"
	}
	if b.IsControl() {
		s += " control"
	}
	if b.Compression() != record.CodecNone {
		s += " " + b.Compression().String()
	}
	if b.TimestampType() == record.LogAppendTime {
		s += " log-append-time"
	}
	if !b.ValidCRC() {
		s += " BAD-CRC"
	}
	return s
}

func (d *logDriver) state(t *testing.T) string {
	l := d.mustLog(t)
	var b strings.Builder
	fmt.Fprintf(&b, "log-start=%d leo=%d hw=%d lso=%d recovery-point=%d\n",
		l.LogStartOffset(), l.LogEndOffset(), l.HighWatermark(), l.LastStableOffset(), l.RecoveryPoint())
	fmt.Fprintf(&b, "segments=%v\n", l.Segments())
	var eps []string
	for _, en := range l.EpochEntries() {
		eps = append(eps, fmt.Sprintf("%d@%d", en.Epoch, en.StartOffset))
	}
	fmt.Fprintf(&b, "epochs=[%s]\n", strings.Join(eps, " "))
	for _, p := range l.producers.Producers() {
		fmt.Fprintf(&b, "producer %+v\n", p)
	}
	for _, tx := range l.producers.OngoingTxns() {
		fmt.Fprintf(&b, "ongoing txn pid=%d first=%d\n", tx.ProducerID, tx.FirstOffset)
	}
	return strings.TrimRight(b.String(), "\n")
}

func listFiles(t *testing.T, fsys vfs.FS, dir string) string {
	names, err := fsys.List(dir)
	if err != nil {
		return errString(err)
	}
	var b strings.Builder
	for _, n := range names {
		st, _ := fsys.Stat(filepath.Join(dir, n))
		fmt.Fprintf(&b, "%s %d\n", n, st.Size)
	}
	return strings.TrimRight(b.String(), "\n")
}

// verifyLikeDumpLogSegments applies the checks of Kafka's DumpLogSegments
// --verify-index-only to every segment: each offset index entry must point
// at a batch whose last offset is the entry's offset, and each time index
// entry must name a batch's last offset whose max record timestamp is the
// entry's timestamp, with timestamps strictly increasing.
func verifyLikeDumpLogSegments(t *testing.T, fsys vfs.FS, dir string) string {
	names, err := fsys.List(dir)
	if err != nil {
		return errString(err)
	}
	var out []string
	for _, n := range names {
		if !strings.HasSuffix(n, LogFileSuffix) {
			continue
		}
		base, _ := offsetFromFileName(n)
		data, err := vfs.ReadFile(fsys, filepath.Join(dir, n))
		if err != nil {
			return errString(err)
		}
		batchAt := map[int64]record.Batch{}
		byLast := map[int64]record.Batch{}
		it := record.NewIter(data)
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			batchAt[int64(it.Pos()-len(b))] = b
			byLast[b.LastOffset()] = b
		}
		oi, _ := index.OpenOffsetIndex(fsys, segmentPath(dir, base, IndexFileSuffix), base, 1<<20)
		entries := oi.Entries()
		for i := 0; i < entries; i++ {
			off, pos, err := oi.Entry(i)
			if err != nil {
				return errString(err)
			}
			if b, ok := batchAt[int64(pos)]; !ok || b.LastOffset() != off {
				out = append(out, fmt.Sprintf("%s: index entry %d (offset %d pos %d) does not point at its batch", n, i, off, pos))
			}
		}
		oi.Close()
		ti, _ := index.OpenTimeIndex(fsys, segmentPath(dir, base, TimeIndexFileSuffix), base, 1<<20)
		prev := int64(-1)
		tentries := ti.Entries()
		for i := 0; i < tentries; i++ {
			ts, off, err := ti.Entry(i)
			if err != nil {
				return errString(err)
			}
			b, ok := byLast[off]
			if !ok {
				out = append(out, fmt.Sprintf("%s: time index entry %d names offset %d, not a batch's last offset", n, i, off))
				continue
			}
			if b.MaxTimestamp() != ts {
				out = append(out, fmt.Sprintf("%s: time index entry %d timestamp %d, batch max %d", n, i, ts, b.MaxTimestamp()))
			}
			if ts <= prev {
				out = append(out, fmt.Sprintf("%s: time index entry %d timestamp %d not above %d", n, i, ts, prev))
			}
			prev = ts
		}
		ti.Close()
		out = append(out, fmt.Sprintf("%s: %d batches, %d index entries, %d time index entries", n, len(batchAt), entries, tentries))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
