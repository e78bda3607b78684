package epoch

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/strait-io/strait/storage/vfs"
)

// ddEnv is the state of one datadriven test file: a crashable MemFS seen
// through an ErrorFS that counts checkpoint writes and can fail one kind of
// operation, and the cache open on it.
type ddEnv struct {
	mem    *vfs.MemFS
	fsys   *vfs.ErrorFS
	cache  *Cache
	writes atomic.Int64 // renames onto the checkpoint: completed writes
	failOp atomic.Int64 // 1 + the vfs.Op to fail; 0 for none
}

const ddDir = "p"

func newDDEnv(t *testing.T, mem *vfs.MemFS) *ddEnv {
	t.Helper()
	env := &ddEnv{mem: mem}
	env.fsys = vfs.WithErrors(mem, func(op vfs.Op, path string) error {
		if f := env.failOp.Load(); f != 0 && vfs.Op(f-1) == op {
			return vfs.ErrInjected
		}
		if op == vfs.OpRename && filepath.Base(path) == CheckpointFileName+".tmp" {
			env.writes.Add(1)
		}
		return nil
	})
	return env
}

// mustMkdir makes the partition directory durably.
func mustMkdir(t *testing.T, fsys vfs.FS, dir string) {
	t.Helper()
	if err := fsys.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SyncDir(filepath.Dir(dir)); err != nil {
		t.Fatal(err)
	}
}

func (env *ddEnv) reopen() string {
	c, err := Open(env.fsys, ddDir)
	if err != nil {
		env.cache = nil
		return "error: " + err.Error()
	}
	env.cache = c
	return c.String()
}

// mutation runs f and reports the cache afterwards and whether the
// checkpoint was written.
func (env *ddEnv) mutation(f func() error) string {
	before := env.writes.Load()
	err := f()
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	b.WriteString(env.cache.String())
	if env.writes.Load() == before {
		b.WriteString(" (no write)")
	}
	return b.String()
}

func optional(v any, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprint(v)
}

func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var env *ddEnv
		reset := func() {
			mem := vfs.NewMem()
			mustMkdir(t, mem, ddDir)
			env = newDDEnv(t, mem)
			env.reopen()
		}
		reset()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var (
				epoch  int32
				offset int64
				leo    int64
			)
			if env.cache == nil && d.Cmd != "reset" && d.Cmd != "reopen" &&
				d.Cmd != "write-checkpoint" && d.Cmd != "checkpoint" && d.Cmd != "crash" {
				d.Fatalf(t, "no open cache")
			}
			switch d.Cmd {
			case "reset":
				reset()
				return env.cache.String()
			case "assign":
				d.ScanArgs(t, "epoch", &epoch)
				d.ScanArgs(t, "offset", &offset)
				return env.mutation(func() error { return env.cache.Assign(epoch, offset) })
			case "assign-all":
				var entries []Entry
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					var e Entry
					if _, err := fmt.Sscanf(line, "%d %d", &e.Epoch, &e.StartOffset); err != nil {
						d.Fatalf(t, "bad entry %q: %v", line, err)
					}
					entries = append(entries, e)
				}
				return env.mutation(func() error { return env.cache.AssignAll(entries) })
			case "truncate-from-end":
				d.ScanArgs(t, "offset", &offset)
				return env.mutation(func() error { return env.cache.TruncateFromEnd(offset) })
			case "truncate-from-start":
				d.ScanArgs(t, "offset", &offset)
				return env.mutation(func() error { return env.cache.TruncateFromStart(offset) })
			case "clear":
				return env.mutation(env.cache.Clear)
			case "end-offset-for":
				d.ScanArgs(t, "epoch", &epoch)
				d.ScanArgs(t, "leo", &leo)
				e, o := env.cache.EndOffsetFor(epoch, leo)
				return fmt.Sprintf("epoch=%d end-offset=%d", e, o)
			case "epoch-for-offset":
				d.ScanArgs(t, "offset", &offset)
				return optional(env.cache.EpochForOffset(offset))
			case "lookups":
				// The read accessors that take no argument.
				var b strings.Builder
				fmt.Fprintf(&b, "latest-epoch: %s\n", optional(env.cache.LatestEpoch()))
				fmt.Fprintf(&b, "latest-entry: %s\n", optional(env.cache.LatestEntry()))
				fmt.Fprintf(&b, "earliest-entry: %s\n", optional(env.cache.EarliestEntry()))
				fmt.Fprintf(&b, "previous-epoch: %s\n", optional(env.cache.PreviousEpoch()))
				fmt.Fprintf(&b, "non-empty: %v", env.cache.NonEmpty())
				return b.String()
			case "epoch-lookups":
				// The read accessors keyed by an epoch.
				d.ScanArgs(t, "epoch", &epoch)
				var b strings.Builder
				fmt.Fprintf(&b, "epoch-entry: %s\n", optional(env.cache.EpochEntry(epoch)))
				fmt.Fprintf(&b, "previous-entry: %s\n", optional(env.cache.PreviousEntry(epoch)))
				fmt.Fprintf(&b, "previous-epoch-of: %s\n", optional(env.cache.PreviousEpochOf(epoch)))
				fmt.Fprintf(&b, "next-epoch: %s", optional(env.cache.NextEpoch(epoch)))
				return b.String()
			case "entries-in-range":
				var start, end int64
				d.ScanArgs(t, "start", &start)
				d.ScanArgs(t, "end", &end)
				return fmt.Sprint(env.cache.EntriesInRange(start, end))
			case "reopen":
				return env.reopen()
			case "crash":
				// Power loss: only synced bytes and dir-synced names survive.
				env = newDDEnv(t, env.mem.CrashClone(vfs.CrashOptions{}))
				return env.reopen()
			case "checkpoint":
				data, err := vfs.ReadFile(env.mem, filepath.Join(ddDir, CheckpointFileName))
				if vfs.IsNotExist(err) {
					return "<missing>"
				}
				if err != nil {
					return "error: " + err.Error()
				}
				return fmt.Sprintf("%q", data)
			case "write-checkpoint":
				// Input is written verbatim plus a final "\n" unless
				// no-newline is given; \r and \t escapes are expanded.
				data := strings.NewReplacer(`\r`, "\r", `\t`, "\t").Replace(d.Input)
				if !d.HasArg("no-newline") && data != "" {
					data += "\n"
				}
				if err := vfs.WriteFileAtomic(env.mem, ddDir, CheckpointFileName, []byte(data)); err != nil {
					d.Fatalf(t, "%v", err)
				}
				return "ok"
			case "inject":
				// inject op=sync fails every later sync; inject op=none stops.
				var op string
				d.ScanArgs(t, "op", &op)
				env.failOp.Store(0)
				if op == "none" {
					return "ok"
				}
				for o := vfs.OpCreate; o <= vfs.OpSyncDir; o++ {
					if o.String() == op {
						env.failOp.Store(int64(o) + 1)
						return "ok"
					}
				}
				d.Fatalf(t, "unknown op %q", op)
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}
