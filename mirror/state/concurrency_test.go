package state

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/strait-io/strait/mirror/partition"
)

// TestConcurrentWriters: writers racing on one key with read-then-write
// (compare-and-set on the state epoch) while readers poll it, writers on
// other keys run alongside and the partition is re-elected under them.
// Every successful write gets a distinct state epoch, the final epoch
// counts exactly the successes, the log holds exactly those records, and
// no reader ever sees the epoch go backwards.
func TestConcurrentWriters(t *testing.T) {
	const (
		writers   = 8
		perWriter = 25
		others    = 4 // keys written sequentially by their own goroutine
		reelects  = 5
	)
	w := newWorld(t)
	w.electAll(1)
	hot := key(ordersID, 0)
	hotPart := hot.PartitionFor(testMirrorStatePartitions)
	w.mustWrite(hot, rec(partition.StateStopping, 5), 0) // STOPPING → STOPPING is a valid rewrite

	var (
		wg        sync.WaitGroup
		conflicts atomic.Int64
		routing   atomic.Int64
		mu        sync.Mutex
		epochs    = map[int32]int{}
	)
	retriable := func(err error) bool {
		if isCode(err, codeLoadInProgress) || isCode(err, codeNotCoordinator) {
			routing.Add(1)
			return true
		}
		return false
	}
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < perWriter; {
				cur, _, err := w.c.ReadState(hot)
				if err != nil {
					if retriable(err) {
						continue
					}
					t.Errorf("writer %d read: %v", i, err)
					return
				}
				r := rec(partition.StateStopping, 5)
				r.LastMirrorOffset = int64(i*1000 + done)
				se, err := w.c.WriteState(context.Background(), Write{Key: hot, Record: r, ExpectedStateEpoch: cur.StateEpoch})
				switch {
				case err == nil:
					mu.Lock()
					epochs[se]++
					mu.Unlock()
					done++
				case isCode(err, codeInvalidClusterMirrorStates) && errors.Is(err, partition.ErrFenced):
					conflicts.Add(1)
				case retriable(err):
				default:
					t.Errorf("writer %d: %v", i, err)
					return
				}
			}
		}()
	}
	for o := range others {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := Key{Mirror: fmt.Sprintf("other-%d", o), TopicID: paymentsID, Partition: 1}
			se := int32(0)
			for n := 0; n < perWriter; {
				st := partition.StateStopping
				if se == 0 {
					st = partition.StatePreparing
				}
				got, err := w.c.WriteState(context.Background(), Write{Key: k, Record: rec(st, 3), ExpectedStateEpoch: se})
				if err != nil {
					if retriable(err) {
						// The outcome of a write answered NOT_COORDINATOR
						// is unknown: re-read, as the machine does.
						for {
							cur, _, err := w.c.ReadState(k)
							if err == nil {
								se = cur.StateEpoch
								break
							}
						}
						continue
					}
					t.Errorf("other %d: %v", o, err)
					return
				}
				se = got
				n++
			}
		}()
	}
	stopReaders := make(chan struct{})
	var readers sync.WaitGroup
	var reads atomic.Int64
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			last := int32(0)
			for {
				select {
				case <-stopReaders:
					return
				default:
				}
				r, _, err := w.c.ReadState(hot)
				if err != nil {
					continue
				}
				reads.Add(1)
				if r.StateEpoch < last {
					t.Errorf("state epoch went back from %d to %d", last, r.StateEpoch)
					return
				}
				last = r.StateEpoch
			}
		}()
	}
	for e := int32(2); e < 2+reelects; e++ {
		w.c.OnElection(hotPart, e)
		w.waitShard(hotPart, shardActive)
	}
	wg.Wait()
	close(stopReaders)
	readers.Wait()

	final, _, err := w.c.ReadState(hot)
	if err != nil {
		t.Fatal(err)
	}
	const successes = writers * perWriter
	if final.StateEpoch != 1+successes {
		t.Fatalf("final state epoch %d, want %d", final.StateEpoch, 1+successes)
	}
	if len(epochs) != successes {
		t.Fatalf("%d distinct state epochs for %d successes", len(epochs), successes)
	}
	for se := int32(2); se <= 1+successes; se++ {
		if epochs[se] != 1 {
			t.Fatalf("state epoch %d returned %d times", se, epochs[se])
		}
	}
	hotRecords := 0
	for _, r := range w.log.records(hotPart) {
		if r.key == hot {
			hotRecords++
		}
	}
	if hotRecords != 1+successes {
		t.Fatalf("log holds %d records of the key, want %d", hotRecords, 1+successes)
	}
	for o := range others {
		k := Key{Mirror: fmt.Sprintf("other-%d", o), TopicID: paymentsID, Partition: 1}
		if r, _, _ := w.c.ReadState(k); r.StateEpoch != perWriter {
			t.Errorf("%s: state epoch %d, want %d", k, r.StateEpoch, perWriter)
		}
	}
	// And a reload agrees with memory.
	before := w.view()
	w.restart()
	if fmt.Sprint(w.view()) != fmt.Sprint(before) {
		t.Fatal("reload differs from memory")
	}
	t.Logf("%d successes, %d state-epoch conflicts, %d routing retries, %d reads, %d re-elections",
		successes, conflicts.Load(), routing.Load(), reads.Load(), reelects)
}
