package raftmeta

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// catchUpAsync runs q.CatchUp and hands back its answer.
func catchUpAsync(q *Quorum) <-chan bool {
	done := make(chan bool, 1)
	go func() { done <- q.CatchUp(context.Background()) }()
	return done
}

func expectWaiting(t *testing.T, done <-chan bool, what string) {
	t.Helper()
	select {
	case got := <-done:
		t.Fatalf("CatchUp returned %v %s", got, what)
	case <-time.After(50 * time.Millisecond):
	}
}

func expectCaughtUp(t *testing.T, done <-chan bool) {
	t.Helper()
	select {
	case got := <-done:
		if !got {
			t.Fatal("CatchUp reported nothing to wait for")
		}
	case <-time.After(maxCatchUpWait / 2):
		t.Fatal("CatchUp still waits after the command was applied")
	}
}

// TestCatchUpWaitsForStoredCommands drives the store and the FSM by hand,
// as raft does on a node that has stored an entry and not yet learned it
// committed: CatchUp waits for the FSM to apply every stored command, and
// only for commands.
func TestCatchUpWaitsForStoredCommands(t *testing.T) {
	store, err := OpenStore(t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	q := &Quorum{store: store, fsm: NewFSM("", nil)}

	if q.CatchUp(context.Background()) {
		t.Fatal("CatchUp waited on an empty log")
	}
	topic := EncodeBatch([]Record{&TopicRecord{Name: "late", TopicID: Uuid{7}}})
	entries := []*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogNoop},
		{Index: 2, Term: 1, Type: raft.LogCommand, Data: topic},
		{Index: 3, Term: 1, Type: raft.LogBarrier},
	}
	if err := store.StoreLogs(entries); err != nil {
		t.Fatal(err)
	}
	done := catchUpAsync(q)
	expectWaiting(t, done, "before the stored command was applied")
	q.fsm.Apply(entries[1])
	expectCaughtUp(t, done)
	if _, ok := q.fsm.Image().Topics["late"]; !ok {
		t.Fatal("the image lacks the topic CatchUp waited for")
	}
	// The barrier after it is no command: nothing to wait for.
	if q.CatchUp(context.Background()) {
		t.Fatal("CatchUp waited with every stored command applied")
	}

	// A command raft deletes again (a conflicting suffix) is not waited
	// for; nor is one the FSM drops as undecodable, once it has seen it.
	if err := store.StoreLogs([]*raft.Log{{Index: 4, Term: 1, Type: raft.LogCommand, Data: topic}}); err != nil {
		t.Fatal(err)
	}
	if err := store.DeleteRange(4, 4); err != nil {
		t.Fatal(err)
	}
	if q.CatchUp(context.Background()) {
		t.Fatal("CatchUp waited for a deleted command")
	}
	bad := &raft.Log{Index: 4, Term: 2, Type: raft.LogCommand, Data: []byte{0xff}}
	if err := store.StoreLogs([]*raft.Log{bad}); err != nil {
		t.Fatal(err)
	}
	done = catchUpAsync(q)
	expectWaiting(t, done, "before the FSM saw the undecodable command")
	if q.fsm.Apply(bad) == nil {
		t.Fatal("the FSM accepted an undecodable batch")
	}
	expectCaughtUp(t, done)

	ctx, cancel := context.WithCancel(context.Background())
	if err := store.StoreLogs([]*raft.Log{{Index: 5, Term: 2, Type: raft.LogCommand, Data: topic}}); err != nil {
		t.Fatal(err)
	}
	cancel()
	start := time.Now()
	if !q.CatchUp(ctx) {
		t.Fatal("CatchUp reported nothing to wait for with a command stored")
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("CatchUp with an ended context took %v", el)
	}
}

// TestCatchUpOnANodeStillApplying holds a follower's FSM in the middle of
// applying a new topic, as a slow disk would: the node has the record,
// its image does not yet, and CatchUp returns only once it does.
func TestCatchUpOnANodeStillApplying(t *testing.T) {
	tc := newTestCluster(t, 3, nil)
	for id := int32(1); id <= 3; id++ {
		tc.start(id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	leader := tc.leader(5 * time.Second)
	tc.unfence(ctx, 1, 2, 3)
	follower := leader%3 + 1
	q := tc.nodes[follower]
	entered, release := make(chan struct{}), make(chan struct{})
	var hold sync.Once
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce) // before the cluster's own cleanup stops it
	q.Subscribe(func(d *Delta, img *Image) {
		if _, ok := img.Topics["held"]; ok {
			hold.Do(func() {
				close(entered)
				<-release
			})
		}
	})
	tc.createTopic(leader, "held", 1, 3)
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the follower never applied the topic")
	}
	done := catchUpAsync(q)
	expectWaiting(t, done, "while the FSM was still applying the topic")
	releaseOnce()
	expectCaughtUp(t, done)
}
