package storage

import (
	"testing"

	"github.com/strait-io/strait/storage/vfs"
)

// TestGetOrCreateLogsCreatesTogether: the new logs of one request are
// created several at a time (two .log creations overlap), as a broker
// applying a delta of a thousand new topics needs, where each log was made
// after the one before; a partition asked for twice gets one log, an
// existing log is returned as it is, a log of another topic id is an error
// for that partition only, and every new log is there after a restart.
// Before, GetOrCreateLog made one log after the other under the manager's
// lock.
func TestGetOrCreateLogsCreatesTogether(t *testing.T) {
	e := newManagerEnv(t)
	efs := vfs.WithErrors(e.fs, nil)
	open := func() *LogManager {
		t.Helper()
		m, err := OpenManager("/kafka-logs", ManagerOptions{FS: efs, Clock: e.clock, Scheduler: InlineScheduler{}, DefaultConfig: e.cfg})
		if err != nil {
			t.Fatalf("open manager: %v", err)
		}
		return m
	}
	m := open()
	old, err := m.GetOrCreateLog(TopicPartition{"old", 0}, idA, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.produce(old, 1)

	const parts = 6
	reqs := []NewLog{{TP: TopicPartition{"old", 0}, ID: idA, Config: e.cfg}, {TP: TopicPartition{"old", 0}, ID: TopicID{9, 9, 9}, Config: e.cfg}}
	for i := range parts {
		reqs = append(reqs, NewLog{TP: TopicPartition{"many", int32(i)}, ID: idA, Config: e.cfg})
	}
	reqs = append(reqs, NewLog{TP: TopicPartition{"many", 0}, ID: idA, Config: e.cfg})
	creates := newOverlapProbe(vfs.OpCreate)
	efs.SetInjector(creates.inject)
	logs, errs := m.GetOrCreateLogs(reqs)
	efs.SetInjector(nil)
	if !creates.overlapped() {
		t.Error("the logs were created one after the other: no two .log creations overlapped")
	}
	if logs[0] != old || errs[0] != nil {
		t.Errorf("the existing log: got %v, %v; want it as it was", logs[0], errs[0])
	}
	if errs[1] == nil {
		t.Error("a partition whose log belongs to another topic id: no error")
	}
	for i := 2; i < len(reqs); i++ {
		if errs[i] != nil {
			t.Fatalf("%s: %v", reqs[i].TP, errs[i])
		}
		if l, ok := m.Log(reqs[i].TP); !ok || l != logs[i] {
			t.Errorf("%s: the manager holds %v, the answer %v", reqs[i].TP, l, logs[i])
		}
		if i < len(reqs)-1 { // the last asks for many-0 again
			e.produce(logs[i], 1)
		}
	}
	if logs[len(logs)-1] != logs[2] {
		t.Error("a partition asked for twice got two logs")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = open()
	defer m.Close()
	for i := range parts {
		tp := TopicPartition{"many", int32(i)}
		if l, ok := m.Log(tp); !ok || l.LogEndOffset() != 2 || l.TopicID() != idA {
			t.Errorf("%s after the restart: %v (present %v)", tp, l, ok)
		}
	}
}
