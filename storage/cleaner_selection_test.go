package storage

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/strait-io/strait/storage/record"
)

// TestCleanerSelectionDatadriven runs the scripts in
// testdata/cleaner_selection/: which log a cleaner thread takes
// (grabFilthiestCompactedLog) as dirty ratios, min.cleanable.dirty.ratio
// and the compaction lags change. Commands:
//
//	log name=N [delete] [min-ratio=F] [min-lag-ms=MS] [max-lag-ms=MS]
//	    creates partition N-0, compacted unless delete; or changes its config
//	append name=N        one batch per input line of key=value pairs, then
//	    the high watermark moves to the log end
//	roll name=N          closes the active segment
//	advance ms=MS        moves the clock
//	candidates           every log a thread may take now, with its ratio
//	clean                one thread step (CleanFilthiestLog)
func TestCleanerSelectionDatadriven(t *testing.T) {
	datadriven.Walk(t, "testdata/cleaner_selection", func(t *testing.T, path string) {
		e := newManagerEnv(t)
		e.cfg.SegmentBytes = 1 << 20
		m := e.open()
		defer m.Close()
		logs := map[string]*Log{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			name := argStr(td, "name", "")
			l := logs[name]
			if name != "" && l == nil && td.Cmd != "log" {
				return "no log " + name
			}
			switch td.Cmd {
			case "log":
				cfg := e.cfg
				if l != nil {
					cfg = l.Config()
				}
				cfg.CleanupPolicy = CleanupPolicy{Compact: !td.HasArg("delete"), Delete: td.HasArg("delete")}
				if r := argStr(td, "min-ratio", ""); r != "" {
					f, err := strconv.ParseFloat(r, 64)
					if err != nil {
						t.Fatal(err)
					}
					cfg.MinCleanableRatio = f
				}
				cfg.MinCompactionLagMs = argInt(td, "min-lag-ms", cfg.MinCompactionLagMs)
				cfg.MaxCompactionLagMs = argInt(td, "max-lag-ms", cfg.MaxCompactionLagMs)
				if l == nil {
					var err error
					if l, err = m.GetOrCreateLog(TopicPartition{name, 0}, idA, cfg); err != nil {
						t.Fatal(err)
					}
					logs[name] = l
				}
				l.SetConfig(cfg)
				return ""
			case "append":
				for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
					mustAppend(t, l, kvBatch(t, e.clock.Now().UnixMilli(), record.CodecNone, strings.Fields(line)...))
				}
				l.UpdateHighWatermark(l.LogEndOffset())
				return fmt.Sprintf("log end %d", l.LogEndOffset())
			case "roll":
				if err := l.Roll(); err != nil {
					t.Fatal(err)
				}
				return ""
			case "advance":
				e.clock.Advance(time.Duration(argInt(td, "ms", 0)) * time.Millisecond)
				return ""
			case "candidates":
				m.cleaner.mu.Lock()
				cands := m.cleanableLogs()
				m.cleaner.mu.Unlock()
				var out []string
				for _, c := range cands {
					out = append(out, fmt.Sprintf("%s ratio=%.3f dirty=[%d,%d) need-now=%t",
						c.tp, c.ratio, c.info.FirstDirtyOffset, c.info.FirstUncleanableOffset, c.info.NeedCompactionNow))
				}
				slices.Sort(out)
				if len(out) == 0 {
					return "none"
				}
				return strings.Join(out, "\n")
			case "clean":
				c, ok, err := m.CleanFilthiestLog(context.Background())
				if err != nil {
					return "error: " + err.Error()
				}
				if !ok {
					return "nothing to clean"
				}
				return fmt.Sprintf("cleaned %s ratio=%.3f [%d,%d) records %d -> %d",
					c.TopicPartition, c.DirtyRatio, c.FirstDirtyOffset, c.EndOffset, c.RecordsRead, c.RecordsRetained)
			}
			return "unknown command " + td.Cmd
		})
	})
}
