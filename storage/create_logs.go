package storage

import "path/filepath"

// createThreads is how many new logs GetOrCreateLogs creates at once.
// Creating an empty log is file-system work (a directory, the segment's
// .log, .index and .timeindex, each an inode the kernel allocates under
// the journal) rather than CPU work of ours, and with a few in flight the
// kernel's inode allocation and the journal's commits overlap: a topic
// delta of thousands of partitions applied one log after another took
// tens of seconds here.
const createThreads = 8

// NewLog is one log GetOrCreateLogs is asked for.
type NewLog struct {
	TP     TopicPartition
	ID     TopicID
	Config LogConfig
}

// GetOrCreateLogs is GetOrCreateLog for many partitions at once, as a
// broker needs when it applies a metadata delta that created topics (Kafka's
// ReplicaManager.applyDelta makes every new local replica of the delta):
// the logs that exist are returned, the others are created createThreads at
// a time, each in the log directory holding the fewest logs. The i-th log
// and error answer reqs[i].
//
// What is durable when it returns is what GetOrCreateLog makes durable: the
// directory and files exist (a killed process loses none of them, the kernel
// has them), and each new log's background task (settleNewDir) writes its
// partition.metadata and syncs the directory entries; a flush of the log does
// that first if it comes before.
func (m *LogManager) GetOrCreateLogs(reqs []NewLog) ([]*Log, []error) {
	// One batch at a time: two creations of a partition must not open its
	// directory at once, and a deletion waits for the batch (DeleteLog).
	m.createMu.Lock()
	defer m.createMu.Unlock()
	logs, errs := make([]*Log, len(reqs)), make([]error, len(reqs))
	type creation struct {
		dir string
		o   Options
		of  []int // indexes of reqs asking for this partition
		l   *Log
		rep *RecoveryReport
	}
	var todo []*creation
	byTP := map[TopicPartition]*creation{}
	m.mu.Lock()
	counts := m.logCountsLocked()
	for i, r := range reqs {
		if c, ok := byTP[r.TP]; ok {
			c.of = append(c.of, i)
			continue
		}
		if l, ok, err := m.existingLogLocked(r.TP, r.ID); ok || err != nil {
			logs[i], errs[i] = l, err
			continue
		}
		parent := m.fewestLogs(counts)
		counts[parent]++
		o := m.logOptions(r.TP.Topic, r.ID, Options{HadCleanShutdown: true})
		o.Config = r.Config
		c := &creation{dir: filepath.Join(parent, r.TP.String()), o: o, of: []int{i}}
		byTP[r.TP] = c
		todo = append(todo, c)
	}
	m.mu.Unlock()

	openErrs := inParallel(createThreads, len(todo), func(j int) error {
		var err error
		todo[j].l, todo[j].rep, err = Open(todo[j].dir, todo[j].o)
		return err
	})

	m.mu.Lock()
	defer m.mu.Unlock()
	for j, c := range todo {
		err := openErrs[j]
		if err == nil && m.closed {
			// Close ran while the batch was opening: it did not see this
			// log, so it would stay open.
			c.l.Close()
			c.l, err = nil, ErrLogClosed
		}
		if err == nil {
			tp := reqs[c.of[0]].TP
			m.logs[tp], m.reports[tp] = c.l, c.rep
		}
		for _, i := range c.of {
			logs[i], errs[i] = c.l, err
		}
	}
	return logs, errs
}

// logCountsLocked counts the logs, future logs included, of each log
// directory (Kafka's LogManager.nextLogDirs counts the logs by parent
// directory). m.mu is held.
func (m *LogManager) logCountsLocked() map[string]int {
	counts := make(map[string]int, len(m.dirs))
	if len(m.dirs) == 1 {
		return counts // the only choice: nothing to count
	}
	for _, l := range m.logs {
		counts[filepath.Dir(l.Dir())]++
	}
	for _, l := range m.futures {
		counts[filepath.Dir(l.Dir())]++
	}
	return counts
}

// fewestLogs is the directory of counts holding the fewest logs, the first
// in log.dirs on a tie.
func (m *LogManager) fewestLogs(counts map[string]int) string {
	best := m.dirs[0]
	for _, d := range m.dirs[1:] {
		if counts[d] < counts[best] {
			best = d
		}
	}
	return best
}
