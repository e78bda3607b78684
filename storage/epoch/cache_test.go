package epoch

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/strait-io/strait/storage/vfs"
)

func openMem(t *testing.T, data string) (*Cache, error) {
	t.Helper()
	mem := vfs.NewMem()
	mustMkdir(t, mem, "p")
	if err := vfs.WriteFileAtomic(mem, "p", CheckpointFileName, []byte(data)); err != nil {
		t.Fatal(err)
	}
	return Open(mem, "p")
}

func TestOpenMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"bad version", "1\n0\n", `line 1: unrecognised version 1`},
		{"version not a number", "v0\n0\n", `line 1: malformed line: "v0"`},
		{"count not a number", "0\nx\n", `line 2: malformed line: "x"`},
		{"negative count", "0\n-3\n", `line 2: negative entry count`},
		{"too few entries", "0\n3\n1 0\n2 5\n", `line 2: expected 3 entries but found 2`},
		{"too many entries", "0\n0\n1 0\n", `line 2: expected 0 entries but found 1`},
		{"garbage line", "0\n2\n1 0\nhello world\n", `line 4: malformed line: "hello world"`},
		{"one field", "0\n1\n7\n", `line 3: malformed line: "7"`},
		{"three fields", "0\n1\n1 2 3\n", `line 3: malformed line: "1 2 3"`},
		{"epoch overflows int32", "0\n1\n4294967296 0\n", `line 3: malformed line`},
		{"negative epoch", "0\n1\n-2 0\n", `line 3: epoch: invalid leader epoch entry`},
		{"negative offset", "0\n1\n2 -7\n", `line 3: epoch: invalid leader epoch entry`},
		{"repeated epoch", "0\n3\n1 0\n2 5\n2 9\n", `line 5: epoch 2 does not follow epoch 2`},
		{"decreasing epoch", "0\n2\n5 0\n4 9\n", `line 4: epoch 4 does not follow epoch 5`},
		{"decreasing offset", "0\n2\n1 9\n2 3\n", `line 4: start offset 3 is below the previous start offset 9`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := openMem(t, tc.data)
			if err == nil {
				t.Fatalf("Open succeeded with %v", c)
			}
			if !errors.Is(err, ErrMalformedCheckpoint) {
				t.Fatalf("error %v is not ErrMalformedCheckpoint", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "p/"+CheckpointFileName+" ") || !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q does not name the file and contain %q", msg, tc.want)
			}
		})
	}
}

func TestOpenAcceptsKafkaFiles(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []Entry
	}{
		{"empty file", "", nil},
		{"version only", "0\n", nil},
		{"no entries", "0\n0\n", nil},
		{"entries", "0\n2\n0 0\n3 17\n", []Entry{{0, 0}, {3, 17}}},
		{"crlf and tabs", "0\r\n1\r\n4\t100\r\n", []Entry{{4, 100}}},
		{"same start offset folds", "0\n2\n1 5\n2 5\n", []Entry{{2, 5}}},
		{"largest values", "0\n1\n2147483647 9223372036854775807\n", []Entry{{2147483647, 9223372036854775807}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := openMem(t, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Entries(); !slices.Equal(got, tc.want) {
				t.Fatalf("entries %v, want %v", got, tc.want)
			}
		})
	}
}

// FuzzOpen checks that no checkpoint content makes Open panic, and that
// whatever it accepts is a valid cache that round-trips through the file.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{"", "0\n", "0\n2\n1 0\n2 5\n", "0\n1\n 1 0\n", "0\r1\r1\t0", "0\n2\n1 5\n2 5\n", "0\n-1\n", "\n\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := vfs.NewMem()
		mustMkdir(t, mem, "p")
		if err := vfs.WriteFileAtomic(mem, "p", CheckpointFileName, data); err != nil {
			t.Fatal(err)
		}
		c, err := Open(mem, "p")
		if err != nil {
			if !errors.Is(err, ErrMalformedCheckpoint) {
				t.Fatalf("error %v is not ErrMalformedCheckpoint", err)
			}
			return
		}
		entries := c.Entries()
		for i, e := range entries {
			if e.validate() != nil || (i > 0 && (e.Epoch <= entries[i-1].Epoch || e.StartOffset <= entries[i-1].StartOffset)) {
				t.Fatalf("accepted invalid entries %v", entries)
			}
		}
		got, _, err := decodeCheckpoint("x", encodeCheckpoint(entries))
		if err != nil || !slices.Equal(got, entries) {
			t.Fatalf("round trip of %v gave %v, %v", entries, got, err)
		}
	})
}

func TestOpenReadErrorIsNotMissing(t *testing.T) {
	mem := vfs.NewMem()
	mustMkdir(t, mem, "p")
	c, err := Open(mem, "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Assign(1, 0); err != nil {
		t.Fatal(err)
	}
	for _, op := range []vfs.Op{vfs.OpOpen, vfs.OpRead} {
		_, err := Open(vfs.WithErrors(mem, vfs.OnOp(op, 0)), "p")
		if !errors.Is(err, vfs.ErrInjected) || !strings.Contains(err.Error(), "p/"+CheckpointFileName) {
			t.Fatalf("%v: Open error %v, want the injected error naming the file", op, err)
		}
	}
}

// TestWriteErrorKeepsState fails each operation of the atomic write in turn.
// The change must be reported and dropped: the cache keeps its previous
// entries, which is exactly what survives a crash. Until the rename, the
// live file holds them too; a failure after it (sync-dir) leaves the new
// file visible but not durable, and the crash shows the old one.
func TestWriteErrorKeepsState(t *testing.T) {
	before := []Entry{{1, 0}, {2, 10}}
	for _, op := range []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpClose, vfs.OpRename, vfs.OpSyncDir} {
		for _, mutation := range []struct {
			name string
			f    func(c *Cache) error
		}{
			{"assign", func(c *Cache) error { return c.Assign(3, 20) }},
			{"assign-all", func(c *Cache) error { return c.AssignAll([]Entry{{3, 20}, {4, 30}}) }},
			{"truncate-from-end", func(c *Cache) error { return c.TruncateFromEnd(10) }},
			{"truncate-from-start", func(c *Cache) error { return c.TruncateFromStart(5) }},
			{"clear", func(c *Cache) error { return c.Clear() }},
		} {
			t.Run(op.String()+"/"+mutation.name, func(t *testing.T) {
				mem := vfs.NewMem()
				mustMkdir(t, mem, "p")
				efs := vfs.WithErrors(mem, nil)
				c, err := Open(efs, "p")
				if err != nil {
					t.Fatal(err)
				}
				if err := c.AssignAll(before); err != nil {
					t.Fatal(err)
				}
				efs.SetInjector(vfs.OnOp(op, 0))
				if err := mutation.f(c); !errors.Is(err, vfs.ErrInjected) {
					t.Fatalf("error %v, want the injected error", err)
				}
				efs.SetInjector(nil)
				if got := c.Entries(); !slices.Equal(got, before) {
					t.Fatalf("entries after failed write %v, want %v", got, before)
				}
				crashed, err := Open(mem.CrashClone(vfs.CrashOptions{}), "p")
				if err != nil {
					t.Fatal(err)
				}
				if got := crashed.Entries(); !slices.Equal(got, before) {
					t.Fatalf("entries after crash %v, want %v", got, before)
				}
				if op != vfs.OpSyncDir {
					live, err := Open(mem, "p")
					if err != nil {
						t.Fatal(err)
					}
					if got := live.Entries(); !slices.Equal(got, before) {
						t.Fatalf("entries on disk %v, want %v", got, before)
					}
				}
				// The cache still works once the disk does.
				if err := c.Assign(7, 70); err != nil {
					t.Fatal(err)
				}
				live, err := Open(mem, "p")
				if err != nil {
					t.Fatal(err)
				}
				if got, want := live.Entries(), append(slices.Clone(before), Entry{7, 70}); !slices.Equal(got, want) {
					t.Fatalf("entries after recovery %v, want %v", got, want)
				}
			})
		}
	}
}

// TestOSFileFormat writes through the real filesystem and checks the exact
// bytes Kafka's LeaderEpochCheckpointFile would write.
func TestOSFileFormat(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(vfs.OS{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Entry{{0, 0}, {5, 1234}, {7, 9223372036854775807}} {
		if err := c.Assign(e.Epoch, e.StartOffset); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "leader-epoch-checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0\n3\n0 0\n5 1234\n7 9223372036854775807\n"; string(data) != want {
		t.Fatalf("file %q, want %q", data, want)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 {
		t.Fatalf("directory holds %v, want only the checkpoint", names)
	}
	re, err := Open(vfs.OS{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := re.String(), "LeaderEpochCache[0@0 5@1234 7@9223372036854775807]"; got != want {
		t.Fatalf("reopened %s, want %s", got, want)
	}
}

func TestWithDir(t *testing.T) {
	mem := vfs.NewMem()
	mustMkdir(t, mem, "p")
	mustMkdir(t, mem, "q")
	c, err := Open(mem, "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AssignAll([]Entry{{1, 0}, {2, 10}}); err != nil {
		t.Fatal(err)
	}
	moved := c.WithDir("q")
	if got, want := moved.Path(), filepath.Join("q", CheckpointFileName); got != want {
		t.Fatalf("path %s, want %s", got, want)
	}
	if _, err := mem.Stat(moved.Path()); !vfs.IsNotExist(err) {
		t.Fatalf("WithDir wrote a file: %v", err)
	}
	if err := moved.Assign(3, 20); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{"p": "LeaderEpochCache[1@0 2@10]", "q": "LeaderEpochCache[1@0 2@10 3@20]"} {
		re, err := Open(mem, dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := re.String(); got != want {
			t.Fatalf("%s holds %s, want %s", dir, got, want)
		}
	}
	if got, want := c.String(), "LeaderEpochCache[1@0 2@10]"; got != want {
		t.Fatalf("original cache %s, want %s", got, want)
	}
}

// TestConcurrent runs writers and readers together under -race; readers
// must only ever see valid states.
func TestConcurrent(t *testing.T) {
	mem := vfs.NewMem()
	mustMkdir(t, mem, "p")
	c, err := Open(mem, "p")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 8)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				var err error
				switch i % 10 {
				case 7:
					err = c.TruncateFromEnd(int64(i * 5))
				case 9:
					err = c.TruncateFromStart(int64(i))
				default:
					err = c.Assign(int32(i+w), int64(i*10))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	var rg sync.WaitGroup
	for r := 0; r < 4; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				entries := c.Entries()
				for i := 1; i < len(entries); i++ {
					if entries[i].Epoch <= entries[i-1].Epoch || entries[i].StartOffset <= entries[i-1].StartOffset {
						errs <- errors.New("reader saw non-monotonic entries")
						return
					}
				}
				c.EndOffsetFor(5, 100)
				c.EpochForOffset(50)
				c.LatestEpoch()
				_ = c.String()
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	re, err := Open(mem, "p")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := re.Entries(), c.Entries(); !slices.Equal(a, b) {
		t.Fatalf("reopened %v, cache %v", a, b)
	}
}
