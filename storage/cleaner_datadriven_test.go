package storage

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
)

// TestCompactionDatadriven runs the scripts in testdata/compaction/: the
// log driver of TestLogDatadriven plus the commands below. They live
// outside testdata/log because TestLogDatadriven walks that directory and
// knows none of these commands.
//
//	open ... [delete-retention-ms=N] [min-lag-ms=N] [max-lag-ms=N] [min-ratio=F] [compact-delete]
//	append-kv [pid=P pepoch=E seq=S] [txn] [codec=C] [epoch=E]   one record per input line:
//	    key=value, or key=null for a tombstone
//	clean [buffer=BYTES]   Log.Clean, then the file operations it made
//	cleanable              Log.CleanableInfo
//	dump                   every live segment: batches, records, txn index
func TestCompactionDatadriven(t *testing.T) {
	datadriven.Walk(t, "testdata/compaction", func(t *testing.T, path string) {
		d := &compactionDriver{logDriver: &logDriver{env: newTestEnv(t)}}
		defer d.closeQuietly()
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			d.env.t = t
			return d.run(t, td)
		})
	})
}

type compactionDriver struct {
	*logDriver
}

func (d *compactionDriver) run(t *testing.T, td *datadriven.TestData) string {
	e := d.env
	switch td.Cmd {
	case "open":
		e.cfg.DeleteRetentionMs = argInt(td, "delete-retention-ms", e.cfg.DeleteRetentionMs)
		e.cfg.MinCompactionLagMs = argInt(td, "min-lag-ms", e.cfg.MinCompactionLagMs)
		e.cfg.MaxCompactionLagMs = argInt(td, "max-lag-ms", e.cfg.MaxCompactionLagMs)
		if r := argStr(td, "min-ratio", ""); r != "" {
			f, err := strconv.ParseFloat(r, 64)
			if err != nil {
				t.Fatal(err)
			}
			e.cfg.MinCleanableRatio = f
		}
		if td.HasArg("compact-delete") {
			e.cfg.CleanupPolicy = CleanupPolicy{Compact: true, Delete: true}
		}
		return d.logDriver.run(t, td)
	case "append-kv", "clean", "cleanable", "dump":
		if d.log == nil {
			return "no open log"
		}
	default:
		return d.logDriver.run(t, td)
	}
	switch td.Cmd {
	case "append-kv":
		return d.appendKV(t, td)
	case "clean":
		d.fsLog()
		res, err := d.log.Clean(context.Background(), CleanOptions{DedupeBufferSize: argInt(td, "buffer", 0)})
		if err != nil {
			return errString(err)
		}
		out := fmt.Sprintf("cleaned [%d,%d) aborted=%t segments %d -> %d, bytes %d -> %d, records %d -> %d, mapped %d; checkpoint=%d",
			res.FirstDirtyOffset, res.EndOffset, res.Aborted, res.SegmentsCleaned, res.SegmentsWritten,
			res.BytesRead, res.BytesWritten, res.RecordsRead, res.RecordsRetained, res.MapRecords, d.log.CleanerCheckpoint())
		if fl := d.fsLog(); fl != "" {
			out += "\n" + fl
		}
		return out
	case "cleanable":
		c := d.log.CleanableInfo()
		return fmt.Sprintf("first-dirty=%d first-uncleanable=%d clean-bytes=%d cleanable-bytes=%d ratio=%.3f need-now=%t",
			c.FirstDirtyOffset, c.FirstUncleanableOffset, c.CleanBytes, c.CleanableBytes, c.DirtyRatio(), c.NeedCompactionNow)
	default:
		return dumpLog(t, d.log)
	}
}

func (d *compactionDriver) appendKV(t *testing.T, td *datadriven.TestData) string {
	e := d.env
	var recs []record.Record
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			t.Fatalf("append-kv: %q is not key=value", line)
		}
		r := record.Record{Key: []byte(k), KeyLen: int32(len(k)), Value: []byte(v), ValueLen: int32(len(v))}
		if v == "null" {
			r.Value, r.ValueLen = nil, -1
		}
		recs = append(recs, r)
	}
	spec := record.BatchSpec{
		PartitionLeaderEpoch: int32(argInt(td, "epoch", 0)),
		ProducerID:           record.NoProducerID,
		ProducerEpoch:        record.NoProducerEpoch,
		BaseSequence:         record.NoSequence,
		Transactional:        td.HasArg("txn"),
		BaseTimestamp:        e.clock.Now().UnixMilli(),
	}
	if c, ok := record.ParseCodec(argStr(td, "codec", "none")); ok {
		spec.Codec = c
	}
	if pid := argInt(td, "pid", -1); pid >= 0 {
		if d.seqs == nil {
			d.seqs = map[int64]int32{}
		}
		spec.ProducerID, spec.ProducerEpoch = pid, int16(argInt(td, "pepoch", 0))
		spec.BaseSequence = int32(argInt(td, "seq", int64(d.seqs[pid])))
		d.seqs[pid] = max(d.seqs[pid], spec.BaseSequence+int32(len(recs)))
	}
	b, err := record.Build(spec, recs, e.comp)
	if err != nil {
		t.Fatal(err)
	}
	info, err := d.log.AppendAsLeader(b, spec.PartitionLeaderEpoch, record.OriginClient)
	d.fsLog()
	if err != nil {
		return errString(err)
	}
	if info.Duplicate {
		return fmt.Sprintf("duplicate of [%d,%d]", info.FirstOffset, info.LastOffset)
	}
	return fmt.Sprintf("appended [%d,%d]", info.FirstOffset, info.LastOffset)
}

// testEpochMs is the test clock's start; dumps print times relative to it.
const testEpochMs = 1_700_000_000_000

// dumpLog shows every live segment's batches and records, as
// kafka-dump-log --print-data-log would, and its aborted transactions.
func dumpLog(t *testing.T, l *Log) string {
	var b strings.Builder
	fmt.Fprintf(&b, "log-start=%d leo=%d checkpoint=%d\n", l.LogStartOffset(), l.LogEndOffset(), l.CleanerCheckpoint())
	for _, s := range l.segs() {
		fmt.Fprintf(&b, "segment %d: %d bytes\n", s.baseOffset, s.Size())
		buf := make([]byte, s.Size())
		if _, err := s.f().ReadAt(buf, 0); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		it := record.NewIter(buf)
		for bt, ok := it.Next(); ok; bt, ok = it.Next() {
			fmt.Fprintf(&b, "  %s records=%d", describeBatch(bt), bt.RecordCount())
			if h, ok := bt.DeleteHorizonMs(); ok {
				fmt.Fprintf(&b, " delete-horizon=+%d", h-testEpochMs)
			}
			b.WriteString("\n")
			for _, r := range describeRecords(t, l, bt) {
				fmt.Fprintf(&b, "    %s\n", r)
			}
		}
		if it.Err() != nil {
			t.Fatalf("segment %d: %v", s.baseOffset, it.Err())
		}
		txns, err := s.txnIndex.All()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range txns {
			fmt.Fprintf(&b, "  txn-index: aborted pid=%d [%d,%d] lso=%d\n", a.ProducerID, a.FirstOffset, a.LastOffset, a.LastStableOffset)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// describeRecords lists a batch's records as "offset key=value", with
// "null" for a tombstone's value and the marker type for a control record.
func describeRecords(t *testing.T, l *Log, b record.Batch) []string {
	rr, done, err := l.decomp.OpenRecords(b, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	var out []string
	for {
		r, err := rr.Next(true)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		off := b.BaseOffset() + int64(r.OffsetDelta)
		ts := b.BaseTimestamp() + r.TimestampDelta
		if b.IsControl() {
			typ, _ := record.ParseControlKey(r.Key)
			name := map[kmsg.ControlRecordKeyType]string{kmsg.ControlRecordKeyTypeAbort: "ABORT", kmsg.ControlRecordKeyTypeCommit: "COMMIT"}[typ]
			out = append(out, fmt.Sprintf("%d %s", off, name))
			continue
		}
		v := string(r.Value)
		if r.ValueLen < 0 {
			v = "null"
		}
		out = append(out, fmt.Sprintf("%d %s=%s ts=+%d", off, r.Key, v, ts-testEpochMs))
	}
}
