package storage

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/index"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// TestCloneCopyOnWrite: every in-place write to a segment file a drill
// clone shares with its source (a hard link on MemFS, as on the OS) goes
// to a private copy, so neither log's bytes change through the other:
// a truncation of the source below the clone point (failback, unclean
// election), one of the clone, a clone whose point falls on a segment
// boundary then takes appends, and the clone's recovery cutting a torn
// tail. Each case compares every .log file of the log that must not
// change, byte for byte, and checks the sharing was real (links > 1).
func TestCloneCopyOnWrite(t *testing.T) {
	tpC, idC := TopicPartition{"orders-drill", 0}, TopicID{9}
	for _, tc := range []struct {
		name string
		// point picks the clone point from the source's segments.
		point func(src *Log) int64
		// before runs between the source's writes and the clone.
		before func(t *testing.T, e *managerEnv, src *Log)
		// act changes one log; keep says which must stay byte for byte.
		act  func(t *testing.T, e *managerEnv, src, c *Log)
		keep string
	}{{
		name:  "source truncated below the point",
		point: func(src *Log) int64 { return src.segs()[3].BaseOffset() },
		act: func(t *testing.T, e *managerEnv, src, c *Log) {
			truncateInto(t, src, src.segs()[1])
			e.clock.Advance(time.Second) // new records, not the ones cut again
			e.produce(src, 1)            // the failback's new records, into the cut segment
		},
		keep: "clone",
	}, {
		name:  "clone truncated below the point",
		point: func(src *Log) int64 { return src.segs()[3].BaseOffset() + 2 },
		act: func(t *testing.T, e *managerEnv, src, c *Log) {
			truncateInto(t, c, c.segs()[1])
			e.clock.Advance(time.Second)
			e.produce(c, 1)
		},
		keep: "source",
	}, {
		name:  "clone truncated to a shared segment's base",
		point: func(src *Log) int64 { return src.segs()[3].BaseOffset() + 2 },
		act: func(t *testing.T, e *managerEnv, src, c *Log) {
			if _, err := c.TruncateTo(c.segs()[2].BaseOffset()); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(time.Second)
			e.produce(c, 1)
		},
		keep: "source",
	}, {
		name:  "clone point on a segment boundary, then appends",
		point: func(src *Log) int64 { return src.segs()[2].BaseOffset() },
		act: func(t *testing.T, e *managerEnv, src, c *Log) {
			e.produce(c, 1)
		},
		keep: "source",
	}, {
		name:  "clone recovery cuts a torn tail",
		point: func(src *Log) int64 { return src.segs()[3].BaseOffset() },
		before: func(t *testing.T, e *managerEnv, src *Log) {
			// A torn batch header at the end of a closed segment: the
			// source (no recovery) never looks at it.
			f, err := e.fs.OpenReadWrite(src.segs()[1].path(LogFileSuffix))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			size, _ := f.Size()
			if _, err := f.WriteAt([]byte{0, 0, 0, 0, 0, 0, 0, 9, 0, 0}, size); err != nil {
				t.Fatal(err)
			}
		},
		act: func(t *testing.T, e *managerEnv, src, c *Log) {
			// The clone's recovery of that segment (after a crash, from a
			// recovery point below it) cuts the torn tail.
			c.mu.Lock()
			defer c.mu.Unlock()
			rep, err := c.segs()[1].recover(func(record.Batch) ([]index.AbortedTxn, error) { return nil, nil })
			if err != nil || rep.truncatedBytes == 0 {
				t.Fatalf("recovery of the clone's segment: %+v, %v; want the torn tail cut", rep, err)
			}
		},
		keep: "source",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newManagerEnv(t)
			m := e.open()
			defer m.Close()
			src, err := m.GetOrCreateLog(tpA, idA, e.cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Segments of 2 batches that roll before they are full (as
			// segment.ms rolls a mirror topic's), so a clone's last
			// segment has room for appends.
			for range 6 {
				e.produce(src, 2)
				if err := src.Roll(); err != nil {
					t.Fatal(err)
				}
			}
			e.produce(src, 2)
			point := tc.point(src)
			if tc.before != nil {
				tc.before(t, e, src)
			}
			// The source's files must not change from before the clone
			// (its recovery included), the clone's from its creation.
			was := logFileBytes(t, e.fs, src.dir)
			c, err := m.CreateCloneLog(tpC, idC, e.cfg, CloneSource{TP: tpA, ID: idA, UpTo: point})
			if err != nil {
				t.Fatal(err)
			}
			if linkedLogFiles(t, e.fs, c.dir) == 0 {
				t.Fatal("the clone shares no segment file with the source")
			}
			kept := map[string]*Log{"source": src, "clone": c}[tc.keep]
			if kept == c {
				was = logFileBytes(t, e.fs, c.dir)
			}
			tc.act(t, e, src, c)
			now := logFileBytes(t, e.fs, kept.dir)
			for name, b := range was {
				if !bytes.Equal(now[name], b) {
					t.Errorf("the %s's %s changed: %d bytes, was %d", tc.keep, name, len(now[name]), len(b))
				}
			}
		})
	}
}

// truncateInto truncates l to the middle of segment s (a batch boundary).
func truncateInto(t *testing.T, l *Log, s *LogSegment) {
	t.Helper()
	next, err := s.nextOffset()
	if err != nil {
		t.Fatal(err)
	}
	mid := s.BaseOffset() + (next-s.BaseOffset())/4*2
	if ok, err := l.TruncateTo(mid); err != nil || !ok {
		t.Fatalf("truncate to %d: %v, %v", mid, ok, err)
	}
}

// logFileBytes reads every .log file in dir.
func logFileBytes(t *testing.T, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	names, err := fsys.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		if strings.HasSuffix(n, LogFileSuffix) {
			if out[n], err = vfs.ReadFile(fsys, filepath.Join(dir, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// linkedLogFiles counts the .log files in dir with more than one name.
func linkedLogFiles(t *testing.T, fsys vfs.FS, dir string) int {
	t.Helper()
	n := 0
	for name := range logFileBytes(t, fsys, dir) {
		st, err := fsys.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Links > 1 {
			n++
		}
	}
	return n
}
