package producerid

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// blocks is an AllocateFunc handing out the blocks it is given, in order,
// then failing; it counts its calls.
type blocks struct {
	mu    sync.Mutex
	next  [][2]int64 // first, count
	calls int
	err   error // returned instead while set
}

func (b *blocks) alloc(context.Context) (int64, int32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.err != nil {
		return 0, 0, b.err
	}
	if len(b.next) == 0 {
		return 0, 0, errors.New("no more blocks")
	}
	blk := b.next[0]
	b.next = b.next[1:]
	return blk[0], int32(blk[1]), nil
}

func generate(t *testing.T, m *Manager, n int) []int64 {
	t.Helper()
	var out []int64
	for range n {
		id, err := m.Generate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// Ids run through a block and continue in the next, one allocation per
// block; an allocation failure fails that Generate only.
func TestGenerateAcrossBlocks(t *testing.T) {
	b := &blocks{next: [][2]int64{{0, 2}, {1000, 3}}}
	m := New(b.alloc, nil)
	if got, want := generate(t, m, 4), []int64{0, 1, 1000, 1001}; !slices.Equal(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
	if b.calls != 2 {
		t.Fatalf("%d allocations, want 2", b.calls)
	}
	generate(t, m, 1) // 1002, the block's last
	b.err = errors.New("controller unavailable")
	if _, err := m.Generate(context.Background()); err == nil || !strings.Contains(err.Error(), "controller unavailable") {
		t.Fatalf("Generate with the controller away = %v", err)
	}
	b.err = nil
	b.next = [][2]int64{{2000, 1}}
	if got := generate(t, m, 1); got[0] != 2000 {
		t.Fatalf("after the failure: %v, want [2000]", got)
	}
}

// A block that is empty, negative or not above the previous one is
// refused: handing out its ids could repeat ids already handed out.
func TestGenerateRefusesInvalidBlocks(t *testing.T) {
	for _, blk := range [][2]int64{{-1, 5}, {10, 0}, {3, 5}} {
		b := &blocks{next: [][2]int64{{0, 5}, blk}}
		m := New(b.alloc, nil)
		generate(t, m, 5)
		if _, err := m.Generate(context.Background()); err == nil || !strings.Contains(err.Error(), "invalid producer id block") {
			t.Fatalf("block %v: Generate = %v, want an invalid block error", blk, err)
		}
	}
	if _, err := New(nil, nil).Generate(context.Background()); err == nil {
		t.Fatal("Generate without an allocator succeeded")
	}
}

// A Generate waiting for another caller's allocation gives up when its
// context ends; the allocation then serves the next caller.
func TestGenerateWaitsForAnAllocation(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	m := New(func(context.Context) (int64, int32, error) {
		close(entered)
		<-release
		return 100, 10, nil
	}, nil)
	first := make(chan int64, 1)
	go func() {
		id, _ := m.Generate(context.Background())
		first <- id
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := m.Generate(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Generate behind a slow allocation = %v, want the context's error", err)
	}
	close(release)
	if id := <-first; id != 100 {
		t.Fatalf("first id %d, want 100", id)
	}
	if got := generate(t, m, 1); got[0] != 101 {
		t.Fatalf("next id %v, want 101", got)
	}
}
