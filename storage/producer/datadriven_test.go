package producer

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

const ddDir = "/p"

// ddEnv is the state a datadriven file works on.
type ddEnv struct {
	fs  *vfs.MemFS
	cfg Config
	m   *Manager
}

func (e *ddEnv) open(t *testing.T) {
	t.Helper()
	m, err := NewManager(e.fs, ddDir, e.cfg, clock.NewManual(time.UnixMilli(0)))
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
}

func newDDEnv(t *testing.T) *ddEnv {
	e := &ddEnv{fs: vfs.NewMem(), cfg: DefaultConfig()}
	if err := e.fs.MkdirAll(ddDir); err != nil {
		t.Fatal(err)
	}
	if err := e.fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	e.open(t)
	return e
}

// TestProducerStateDataDriven runs testdata/producer_state/*. Commands:
//
//	init [expiration-ms=N]                    fresh filesystem and manager
//	append pid= epoch= seq= count= offset= [txn] [origin=] [ts=]
//	marker pid= epoch= commit|abort offset= coord-epoch= [origin=] [ts=]
//	pid-reset offset= [origin=]
//	plain count= offset=                      a batch without producer id
//	update [origin=]                          one Update over the input lines
//	dup pid= epoch= seq= count=
//	hw offset= | first-unstable | expire now= | state | files
//	snapshot | reload start= end= [now=] | truncate-fully offset=
//	log-start offset= | map-end offset= | delete-snapshots-before offset=
//	restart                                   new manager on the same files
//	crash                                     restart on a crash clone
//	corrupt offset=                           flip a byte of that snapshot
//
// A single append/marker/pid-reset/plain line is an Update of its own,
// committed at once. ts defaults to 1000; origin to client for data batches
// and coordinator for control batches.
func TestProducerStateDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/producer_state", func(t *testing.T, path string) {
		e := newDDEnv(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return e.run(t, d)
		})
	})
}

func (e *ddEnv) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "init":
		e.fs = vfs.NewMem()
		e.cfg = DefaultConfig()
		var ms int64
		if d.MaybeScanArgs(t, "expiration-ms", &ms) {
			e.cfg.ProducerIDExpiration = time.Duration(ms) * time.Millisecond
		}
		if err := e.fs.MkdirAll(ddDir); err != nil {
			t.Fatal(err)
		}
		if err := e.fs.SyncDir("/"); err != nil {
			t.Fatal(err)
		}
		e.open(t)
		return "ok"
	case "append", "marker", "pid-reset", "plain":
		return e.runUpdate(t, "", []*datadriven.TestData{d})
	case "update":
		origin := ""
		d.MaybeScanArgs(t, "origin", &origin)
		var lines []*datadriven.TestData
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			cmd, args, err := datadriven.ParseLine(line)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			lines = append(lines, &datadriven.TestData{Pos: d.Pos, Cmd: cmd, CmdArgs: args})
		}
		return e.runUpdate(t, origin, lines)
	case "dup":
		b := dataBatch(t, scanPID(t, d), scanEpoch(t, d), scanSeq(t, d), scanInt(t, d, "count"), 999_999, false, 0)
		if m, ok := e.m.FindDuplicate(b); ok {
			return "duplicate of " + m.String()
		}
		return "no duplicate"
	case "hw":
		e.m.OnHighWatermarkUpdated(int64(scanInt(t, d, "offset")))
		return e.firstUnstable()
	case "first-unstable":
		return e.firstUnstable()
	case "expire":
		e.m.RemoveExpiredProducers(time.UnixMilli(int64(scanInt(t, d, "now"))))
		return e.state()
	case "state":
		return e.state()
	case "files":
		return e.files(t)
	case "snapshot":
		if err := e.m.TakeSnapshot(); err != nil {
			return "error: " + err.Error()
		}
		return e.files(t)
	case "reload":
		now := int64(1000)
		d.MaybeScanArgs(t, "now", &now)
		err := e.m.TruncateAndReload(int64(scanInt(t, d, "start")), int64(scanInt(t, d, "end")), time.UnixMilli(now))
		if err != nil {
			return "error: " + err.Error()
		}
		return e.state() + e.files(t)
	case "truncate-fully":
		if err := e.m.TruncateFullyAndStartAt(int64(scanInt(t, d, "offset"))); err != nil {
			return "error: " + err.Error()
		}
		return e.state() + e.files(t)
	case "log-start":
		e.m.OnLogStartOffsetIncremented(int64(scanInt(t, d, "offset")))
		return e.state()
	case "map-end":
		e.m.UpdateMapEndOffset(int64(scanInt(t, d, "offset")))
		return fmt.Sprintf("map-end=%d", e.m.MapEndOffset())
	case "delete-snapshots-before":
		if err := e.m.DeleteSnapshotsBefore(int64(scanInt(t, d, "offset"))); err != nil {
			return "error: " + err.Error()
		}
		return e.files(t)
	case "restart":
		e.open(t)
		return e.state() + e.files(t)
	case "crash":
		e.fs = e.fs.CrashClone(vfs.CrashOptions{})
		e.open(t)
		return e.state() + e.files(t)
	case "corrupt":
		path := filepath.Join(ddDir, SnapshotFileName(int64(scanInt(t, d, "offset"))))
		flipByte(t, e.fs, path, -1)
		return "ok"
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// runUpdate applies batch commands as one Update. The Update's origin is
// origin if set, else that of the first batch.
func (e *ddEnv) runUpdate(t *testing.T, origin string, lines []*datadriven.TestData) string {
	var out strings.Builder
	var u *Update
	var next int64
	for _, ld := range lines {
		cmd := ld.Cmd
		b, lineOrigin := e.batchFor(t, ld)
		if u == nil {
			o := lineOrigin
			if origin != "" {
				o = parseOrigin(t, origin)
			}
			u = e.m.NewUpdate(o)
		}
		c, err := u.Append(b, controlInfo(t, b))
		switch {
		case err != nil:
			var re *record.Error
			if !errors.As(err, &re) {
				fmt.Fprintf(&out, "%s: error: %v\n", cmd, err)
			} else {
				fmt.Fprintf(&out, "%s: error: %s: %s\n", cmd, re.Code.Message, re.Msg)
			}
			out.WriteString("rejected: nothing committed\n")
			return out.String()
		case c != nil:
			fmt.Fprintf(&out, "%s: ok, completes %s\n", cmd, c)
		default:
			fmt.Fprintf(&out, "%s: ok\n", cmd)
		}
		next = b.NextOffset()
	}
	committed := u.Commit(next)
	fmt.Fprintf(&out, "committed, map-end=%d\n", e.m.MapEndOffset())
	for _, c := range committed {
		fmt.Fprintf(&out, "  txn %s lso=%d\n", c.Txn, c.LastStableOffset)
	}
	return out.String()
}

func (e *ddEnv) batchFor(t *testing.T, d *datadriven.TestData) (record.Batch, record.AppendOrigin) {
	ts := int64(1000)
	d.MaybeScanArgs(t, "ts", &ts)
	originArg := func(def record.AppendOrigin) record.AppendOrigin {
		var s string
		if d.MaybeScanArgs(t, "origin", &s) {
			return parseOrigin(t, s)
		}
		return def
	}
	switch d.Cmd {
	case "append":
		b := dataBatch(t, scanPID(t, d), scanEpoch(t, d), scanSeq(t, d), scanInt(t, d, "count"),
			int64(scanInt(t, d, "offset")), d.HasArg("txn"), ts)
		return b, originArg(record.OriginClient)
	case "plain":
		return dataBatch(t, record.NoProducerID, 0, 0, scanInt(t, d, "count"), int64(scanInt(t, d, "offset")), false, ts),
			originArg(record.OriginClient)
	case "marker":
		if d.HasArg("commit") == d.HasArg("abort") {
			d.Fatalf(t, "marker needs exactly one of commit, abort")
		}
		var ce int32
		d.ScanArgs(t, "coord-epoch", &ce)
		b := markerBatch(scanPID(t, d), scanEpoch(t, d), d.HasArg("commit"), ce, int64(scanInt(t, d, "offset")), ts)
		return b, originArg(record.OriginCoordinator)
	case "pid-reset":
		return resetBatch(int64(scanInt(t, d, "offset")), ts), originArg(record.OriginCoordinator)
	}
	d.Fatalf(t, "not a batch command: %q", d.Cmd)
	return nil, 0
}

func (e *ddEnv) firstUnstable() string {
	if off, ok := e.m.FirstUnstableOffset(); ok {
		return fmt.Sprintf("first-unstable=%d", off)
	}
	return "first-unstable=none"
}

// state dumps the manager deterministically.
func (e *ddEnv) state() string {
	var out strings.Builder
	fmt.Fprintf(&out, "map-end=%d %s\n", e.m.MapEndOffset(), e.firstUnstable())
	for _, p := range e.m.Producers() {
		en, _ := e.m.Entry(p.ProducerID)
		txn := "none"
		if en.HasOngoingTxn() {
			txn = fmt.Sprint(en.CurrentTxnFirstOffset)
		}
		fmt.Fprintf(&out, "pid=%d epoch=%d coord-epoch=%d last-ts=%d txn=%s\n",
			en.ProducerID, en.ProducerEpoch, en.CoordinatorEpoch, en.LastTimestamp, txn)
		for _, b := range en.Batches {
			fmt.Fprintf(&out, "  %s\n", b)
		}
	}
	for _, tx := range e.m.OngoingTxns() {
		fmt.Fprintf(&out, "ongoing %s\n", tx)
	}
	for _, tx := range e.m.UnreplicatedTxns() {
		fmt.Fprintf(&out, "unreplicated %s\n", tx)
	}
	return out.String()
}

func (e *ddEnv) files(t *testing.T) string {
	names, err := e.fs.List(ddDir)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("files: %s\n", strings.Join(names, " "))
}

func parseOrigin(t *testing.T, s string) record.AppendOrigin {
	switch s {
	case "client":
		return record.OriginClient
	case "coordinator":
		return record.OriginCoordinator
	case "replication":
		return record.OriginReplication
	}
	t.Fatalf("unknown origin %q", s)
	return 0
}

func scanInt(t *testing.T, d *datadriven.TestData, key string) int {
	var v int
	d.ScanArgs(t, key, &v)
	return v
}

func scanPID(t *testing.T, d *datadriven.TestData) int64 {
	var v int64
	d.ScanArgs(t, "pid", &v)
	return v
}

func scanEpoch(t *testing.T, d *datadriven.TestData) int16 {
	var v int16
	d.ScanArgs(t, "epoch", &v)
	return v
}

func scanSeq(t *testing.T, d *datadriven.TestData) int32 {
	var v int32
	d.ScanArgs(t, "seq", &v)
	return v
}

// flipByte inverts one byte of a file in place (pos -1: the last byte) and
// syncs it, simulating silent corruption on disk.
func flipByte(t testing.TB, fsys vfs.FS, path string, pos int64) {
	t.Helper()
	f, err := fsys.OpenReadWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		t.Fatal(err)
	}
	if pos < 0 {
		pos = size + pos
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, pos); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}
