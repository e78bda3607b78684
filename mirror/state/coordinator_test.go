package state

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestWireRoundTrip: what WriteMirrorStates stores, ReadMirrorStates
// returns field for field, and RecordFromRead gives the record back.
func TestWireRoundTrip(t *testing.T) {
	w := newWorld(t)
	w.electAll(1)
	steps := []partition.Record{
		{State: partition.StatePreparing, LeaderEpoch: 5, LastMirrorEpoch: -1, LastMirrorOffset: -1},
		{State: partition.StateFailed, LeaderEpoch: 5, LastMirrorEpoch: -1, LastMirrorOffset: -1, ErrorMessage: "corrupt batch at 42", RetryAttempt: 2},
		{State: partition.StateStopping, LeaderEpoch: 5, LastMirrorEpoch: -1, LastMirrorOffset: -1},
		{State: partition.StateStopping, LeaderEpoch: 5, LastMirrorEpoch: 9, LastMirrorOffset: 1234},
		{State: partition.StateStopped, LeaderEpoch: 5, LastMirrorEpoch: 9, LastMirrorOffset: 1234},
	}
	wantPrev := []partition.State{partition.StateUnknown, partition.StatePreparing, partition.StatePreparing, partition.StatePreparing, partition.StateStopping}
	for i, r := range steps {
		res := w.wireWrite("m1", "orders", 3, r, int32(i))
		if res.ErrorCode != 0 || res.StateEpoch != int32(i+1) || res.PartitionIndex != 3 {
			t.Fatalf("step %d: %+v", i, res)
		}
		got := w.wireRead("m1", "orders", 3)
		if got.ErrorCode != 0 || got.State != int8(r.State) || got.StateEpoch != int32(i+1) || got.LeaderEpoch != 5 ||
			got.LastMirrorEpoch != r.LastMirrorEpoch || got.LastMirrorOffset != r.LastMirrorOffset || got.RetryAttempt != r.RetryAttempt ||
			got.PrevState != int8(wantPrev[i]) {
			t.Fatalf("step %d: read %+v", i, got)
		}
		back := RecordFromRead(got)
		want := r
		want.StateEpoch = int32(i + 1)
		want.PrevState = wantPrev[i] // derived by the coordinator, read back through tag 6
		if back != want {
			t.Fatalf("step %d: RecordFromRead = %s, want %s", i, back, want)
		}
		// The coordinator derived PrevState as the machine would.
		if stored, _, _ := w.c.ReadState(key(ordersID, 3)); stored.PrevState != wantPrev[i] {
			t.Fatalf("step %d: stored PrevState %s, want %s", i, stored.PrevState, wantPrev[i])
		}
	}
	// A non-retryable failure travels as NonRetryable and comes back as −1.
	w2 := newWorld(t)
	w2.electAll(1)
	w2.wireWrite("m1", "payments", 1, rec(partition.StatePreparing, 3), 0)
	f := rec(partition.StateFailed, 3)
	f.RetryAttempt, f.ErrorMessage = -1, "source topic id changed"
	if res := w2.wireWrite("m1", "payments", 1, f, 1); res.ErrorCode != 0 {
		t.Fatalf("%+v", res)
	}
	got := w2.wireRead("m1", "payments", 1)
	if !got.NonRetryable || got.RetryAttempt != -1 || got.ErrorMessage == nil || *got.ErrorMessage != "source topic id changed" {
		t.Fatalf("read %+v", got)
	}
	if r := RecordFromRead(got); r.RetryAttempt != -1 || r.State != partition.StateFailed {
		t.Fatalf("RecordFromRead = %s", r)
	}
}

func TestReadMissingAndUnknown(t *testing.T) {
	w := newWorld(t)
	w.electAll(1)
	w.mustWrite(key(ordersID, 0), rec(partition.StatePreparing, 5), 0)
	// No record: no error, UNKNOWN, every field at its default.
	for _, c := range []struct {
		mirror, topic string
		p             int32
	}{{"m1", "orders", 1}, {"other", "orders", 0}, {"", "payments", 0}} {
		got := w.wireRead(c.mirror, c.topic, c.p)
		want := mirrormsg.NewReadMirrorStatesResponsePartitionResult()
		want.PartitionIndex, want.State = c.p, -1
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v: %+v, want %+v", c, got, want)
		}
		if r := RecordFromRead(got); r != partition.EmptyRecord() {
			t.Errorf("%v: RecordFromRead = %s, want EmptyRecord", c, r)
		}
	}
	if r, found, err := w.c.ReadState(key(ordersID, 1)); err != nil || found || r != partition.EmptyRecord() {
		t.Errorf("ReadState(no record) = %s, %v, %v", r, found, err)
	}
	for _, c := range []struct {
		topic string
		p     int32
	}{{"nope", 0}, {"orders", 4}, {"orders", -1}} {
		if got := w.wireRead("m1", c.topic, c.p); got.ErrorCode != codeUnknownTopicOrPartition || got.State != -1 {
			t.Errorf("%v: %+v", c, got)
		}
	}
	// Several topics and partitions in one request keep their order.
	req := mirrormsg.NewPtrReadMirrorStatesRequest()
	req.MirrorName = "m1"
	for _, name := range []string{"payments", "orders"} {
		td := mirrormsg.NewReadMirrorStatesRequestTopicData()
		td.Name = name
		for _, p := range []int32{1, 0} {
			td.Partitions = append(td.Partitions, mirrormsg.ReadMirrorStatesRequestPartitionData{PartitionIndex: p})
		}
		req.Topics = append(req.Topics, td)
	}
	resp := w.c.ReadMirrorStates(t.Context(), req)
	var got []string
	for _, tr := range resp.Topics {
		for _, pr := range tr.Partitions {
			got = append(got, fmt.Sprintf("%s-%d:%d", tr.Name, pr.PartitionIndex, pr.State))
		}
	}
	if fmt.Sprint(got) != "[payments-1:-1 payments-0:-1 orders-1:-1 orders-0:0]" {
		t.Errorf("got %v", got)
	}
}

// TestCrashReload: a coordinator rebuilt from the log (a broker restart,
// or another broker elected) has exactly the view the old one had, with
// tombstoned records gone.
func TestCrashReload(t *testing.T) {
	w := newWorld(t)
	w.electAll(1)
	written := 0
	for _, mirror := range []string{"m1", "m2"} {
		for _, id := range [][16]byte{ordersID, paymentsID} {
			for p := int32(0); p < 2; p++ {
				k := Key{Mirror: mirror, TopicID: id, Partition: p}
				le := int32(5)
				if id == paymentsID {
					le = 3
				}
				w.mustWrite(k, rec(partition.StatePreparing, le), 0)
				w.mustWrite(k, rec(partition.StateMirroring, le), 1)
				written += 2
				if p == 1 {
					f := rec(partition.StateFailed, le)
					f.ErrorMessage, f.RetryAttempt, f.PrevState = "boom", 1, partition.StateMirroring
					w.mustWrite(k, f, 2)
					written++
				}
			}
		}
	}
	n, err := w.c.DeleteMirror(t.Context(), "m2")
	if err != nil || n != 4 {
		t.Fatalf("DeleteMirror = %d, %v; want 4 records", n, err)
	}
	before := w.view()
	if len(before) != 4 {
		t.Fatalf("%d records before the crash, want 4", len(before))
	}
	logRecords, tombstones := 0, 0
	for p := int32(0); p < testMirrorStatePartitions; p++ {
		for _, r := range w.log.records(p) {
			logRecords++
			if r.value == nil {
				tombstones++
			}
		}
	}
	if logRecords != written+4 || tombstones != 4 {
		t.Fatalf("log holds %d records (%d tombstones), want %d (4)", logRecords, tombstones, written+4)
	}

	w.restart()
	after := w.view()
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("view after reload differs:\nbefore %v\nafter  %v", before, after)
	}
	// And the reloaded coordinator fences as the old one did.
	k := key(ordersID, 1)
	if _, err := w.c.WriteState(t.Context(), Write{Key: k, Record: rec(partition.StatePreparing, 5), ExpectedStateEpoch: 2}); !isCode(err, codeInvalidClusterMirrorStates) {
		t.Fatalf("stale write after reload: %v", err)
	}
	if se := w.mustWrite(k, rec(partition.StatePreparing, 5), 3); se != 4 {
		t.Fatalf("state epoch %d, want 4", se)
	}
	// A deleted record starts over at state epoch 0.
	km2 := Key{Mirror: "m2", TopicID: ordersID, Partition: 0}
	if se := w.mustWrite(km2, rec(partition.StatePreparing, 5), 0); se != 1 {
		t.Fatalf("state epoch %d after a tombstone, want 1", se)
	}
}

func TestDeleteMatchesOnlyItsRecords(t *testing.T) {
	w := newWorld(t)
	w.electAll(1)
	for p := int32(0); p < 4; p++ {
		w.mustWrite(key(ordersID, p), rec(partition.StatePreparing, 5), 0)
	}
	w.mustWrite(key(paymentsID, 0), rec(partition.StatePreparing, 3), 0)
	n, err := w.c.Delete(t.Context(), func(k Key) bool { return k.TopicID == ordersID && k.Partition%2 == 0 })
	if err != nil || n != 2 {
		t.Fatalf("Delete = %d, %v", n, err)
	}
	if n, err := w.c.DeleteMirror(t.Context(), "nope"); err != nil || n != 0 {
		t.Fatalf("DeleteMirror(nope) = %d, %v", n, err)
	}
	v := w.view()
	if len(v) != 3 {
		t.Fatalf("%d records left, want 3: %v", len(v), v)
	}
	for _, p := range []int32{0, 2} {
		if _, ok := v[key(ordersID, p)]; ok {
			t.Errorf("orders-%d survived", p)
		}
	}
}

// TestLoadInProgress: while a partition loads, its records answer
// COORDINATOR_LOAD_IN_PROGRESS to reads, writes and deletes; others are
// served.
func TestLoadInProgress(t *testing.T) {
	w := newWorld(t)
	w.electAll(1)
	k := key(ordersID, 0)
	w.mustWrite(k, rec(partition.StatePreparing, 5), 0)
	p := k.PartitionFor(testMirrorStatePartitions)

	gate := make(chan struct{})
	w.log.mu.Lock()
	w.log.readGate = gate
	w.log.mu.Unlock()
	w.c.OnElection(p, 2) // a new leader epoch: reload
	w.waitShard(p, shardLoading)

	if _, _, err := w.c.ReadState(k); !isCode(err, codeLoadInProgress) {
		t.Fatalf("ReadState while loading: %v", err)
	}
	if got := w.wireRead("m1", "orders", 0); got.ErrorCode != codeLoadInProgress {
		t.Fatalf("ReadMirrorStates while loading: %+v", got)
	}
	if res := w.wireWrite("m1", "orders", 0, rec(partition.StateMirroring, 5), 1); res.ErrorCode != codeLoadInProgress || res.StateEpoch != -1 {
		t.Fatalf("WriteMirrorStates while loading: %+v", res)
	}
	if _, err := w.c.DeleteMirror(t.Context(), "m1"); !isCode(err, codeLoadInProgress) {
		t.Fatalf("DeleteMirror while loading: %v", err)
	}
	// Another partition is served meanwhile.
	if got := w.wireRead("m1", "orders", 1); got.ErrorCode != 0 {
		t.Fatalf("other partition: %+v", got)
	}
	close(gate)
	w.waitShard(p, shardActive)
	if res := w.wireWrite("m1", "orders", 0, rec(partition.StateMirroring, 5), 1); res.ErrorCode != 0 || res.StateEpoch != 2 {
		t.Fatalf("after the load: %+v", res)
	}
}

func TestNotCoordinator(t *testing.T) {
	w := newWorld(t)
	k := key(ordersID, 0)
	p := k.PartitionFor(testMirrorStatePartitions)
	// Never elected.
	if _, _, err := w.c.ReadState(k); !isCode(err, codeNotCoordinator) {
		t.Fatalf("unelected read: %v", err)
	}
	if res := w.wireWrite("m1", "orders", 0, rec(partition.StatePreparing, 5), 0); res.ErrorCode != codeNotCoordinator {
		t.Fatalf("unelected write: %+v", res)
	}
	w.c.OnElection(p, 1)
	w.waitShard(p, shardActive)
	w.mustWrite(k, rec(partition.StatePreparing, 5), 0)
	// An election at an older or equal epoch changes nothing.
	w.c.OnElection(p, 0)
	w.c.OnElection(p, 1)
	if r, found, err := w.c.ReadState(k); err != nil || !found || r.StateEpoch != 1 {
		t.Fatalf("after stale elections: %s %v %v", r, found, err)
	}
	// Resigned.
	w.c.OnResignation(p)
	if got := w.wireRead("m1", "orders", 0); got.ErrorCode != codeNotCoordinator {
		t.Fatalf("resigned read: %+v", got)
	}
	if _, err := w.c.WriteState(t.Context(), Write{Key: k, Record: rec(partition.StateMirroring, 5), ExpectedStateEpoch: 1}); !isCode(err, codeNotCoordinator) {
		t.Fatalf("resigned write: %v", err)
	}
	// Only partitions it leads: another key on another partition is not
	// answered either, and a request mixing them is answered per partition.
	w.c.OnElection(p, 2)
	w.waitShard(p, shardActive)
	res := w.c.WriteStates(t.Context(), []Write{
		{Key: k, Record: rec(partition.StateMirroring, 5), ExpectedStateEpoch: 1},
		{Key: key(ordersID, 1), Record: rec(partition.StatePreparing, 5), ExpectedStateEpoch: 0}, // partition 31
	})
	if res[0].Err != nil || res[0].StateEpoch != 2 || !isCode(res[1].Err, codeNotCoordinator) {
		t.Fatalf("mixed request: %+v", res)
	}
	w.c.Close()
	if _, _, err := w.c.ReadState(k); !isCode(err, codeNotCoordinator) {
		t.Fatalf("closed: %v", err)
	}
	w.c.OnElection(p, 3) // ignored once closed
	if _, _, err := w.c.ReadState(k); !isCode(err, codeNotCoordinator) {
		t.Fatalf("elected after close: %v", err)
	}
}

// TestAppendFailure: a failed append fails its writes with the group
// coordinator's mapping, leaves memory as the log is, and the shard
// reloads: a batch that landed despite the error is then visible, one
// that did not is not.
func TestAppendFailure(t *testing.T) {
	for _, c := range []struct {
		name string
		land bool
		err  error
		code int16
	}{
		{"timed out but landed", true, kerr.RequestTimedOut, codeNotAvailable},
		{"not enough replicas, nothing appended", false, kerr.NotEnoughReplicas, codeNotAvailable},
		{"lost leadership", false, kerr.NotLeaderForPartition, codeNotCoordinator},
		{"storage error after landing", true, kerr.KafkaStorageError, codeNotCoordinator},
		{"too large", false, kerr.RecordListTooLarge, codeUnknownServerError},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.electAll(1)
			k := key(ordersID, 0)
			w.mustWrite(k, rec(partition.StatePreparing, 5), 0)
			readsBefore := w.log.reads
			w.log.mu.Lock()
			w.log.onAppend = func(int32) (bool, error) { return c.land, c.err }
			w.log.mu.Unlock()
			res := w.wireWrite("m1", "orders", 0, rec(partition.StateMirroring, 5), 1)
			if res.ErrorCode != c.code || res.StateEpoch != -1 {
				t.Fatalf("%+v, want code %d", res, c.code)
			}
			w.log.mu.Lock()
			w.log.onAppend = nil
			w.log.mu.Unlock()
			if w.log.reads != readsBefore+1 {
				t.Fatalf("%d reads, want a reload (1)", w.log.reads-readsBefore)
			}
			got, _, err := w.c.ReadState(k)
			if err != nil {
				t.Fatal(err)
			}
			want := partition.StatePreparing
			if c.land {
				want = partition.StateMirroring
			}
			if got.State != want {
				t.Fatalf("after the reload: %s, want %s", got, want)
			}
			// The writer re-reads and goes on from what is stored.
			if se, err := w.c.WriteState(t.Context(), Write{Key: k, Record: rec(partition.StatePausing, 5), ExpectedStateEpoch: got.StateEpoch}); err != nil || se != got.StateEpoch+1 {
				t.Fatalf("next write: %d, %v", se, err)
			}
		})
	}
}

// TestReadsSeeOnlyCommitted: while a write's append waits to be committed,
// reads return the previous state; the write's result comes after the
// commit.
func TestReadsSeeOnlyCommitted(t *testing.T) {
	w := newWorld(t)
	w.electAll(1)
	k := key(ordersID, 0)
	w.mustWrite(k, rec(partition.StatePreparing, 5), 0)
	gate := make(chan struct{})
	w.log.mu.Lock()
	w.log.appendGate = gate
	w.log.mu.Unlock()
	done := make(chan int32)
	go func() {
		se, _ := w.c.WriteState(context.Background(), Write{Key: k, Record: rec(partition.StateMirroring, 5), ExpectedStateEpoch: 1})
		done <- se
	}()
	// Wait until the batch is in the log, uncommitted.
	deadline := time.Now().Add(5 * time.Second)
	for len(w.log.records(k.PartitionFor(testMirrorStatePartitions))) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the append did not start")
		}
		time.Sleep(time.Millisecond)
	}
	for range 3 {
		if got, _, err := w.c.ReadState(k); err != nil || got.State != partition.StatePreparing || got.StateEpoch != 1 {
			t.Fatalf("read during the append: %s, %v", got, err)
		}
		select {
		case se := <-done:
			t.Fatalf("write answered (%d) before its commit", se)
		default:
		}
	}
	close(gate)
	if se := <-done; se != 2 {
		t.Fatalf("state epoch %d, want 2", se)
	}
	if got, _, _ := w.c.ReadState(k); got.State != partition.StateMirroring || got.StateEpoch != 2 {
		t.Fatalf("after the commit: %s", got)
	}
}

// TestResignDuringAppend: a shard resigned while its append waits answers
// NOT_COORDINATOR, and the new leader's load decides what is stored.
func TestResignDuringAppend(t *testing.T) {
	w := newWorld(t)
	w.electAll(1)
	k := key(ordersID, 0)
	p := k.PartitionFor(testMirrorStatePartitions)
	w.mustWrite(k, rec(partition.StatePreparing, 5), 0)
	gate := make(chan struct{})
	w.log.mu.Lock()
	w.log.appendGate = gate
	w.log.mu.Unlock()
	done := make(chan error)
	go func() {
		_, err := w.c.WriteState(context.Background(), Write{Key: k, Record: rec(partition.StateMirroring, 5), ExpectedStateEpoch: 1})
		done <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(w.log.records(p)) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the append did not start")
		}
		time.Sleep(time.Millisecond)
	}
	w.c.OnResignation(p)
	if err := <-done; !isCode(err, codeNotCoordinator) {
		t.Fatalf("write during resignation: %v", err)
	}
	close(gate)
}

func TestConfigValidate(t *testing.T) {
	good := Config{Log: newMemLog(), Image: newWorld(t).img.Load}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]Config{
		"no log":        {Image: good.Image},
		"no image":      {Log: good.Log},
		"partitions":    {Log: good.Log, Image: good.Image, NumPartitions: -1},
		"write timeout": {Log: good.Log, Image: good.Image, WriteTimeout: -1},
		"load buffer":   {Log: good.Log, Image: good.Image, LoadBufferSize: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}
