package wire

import (
	"math"
	"testing"
)

// The size classes: ceil is the smallest class that holds n, floor the
// largest a capacity fills, and a class wastes at most a quarter.
func TestBufferClasses(t *testing.T) {
	if got := bufClassSize(0); got != 512 {
		t.Fatalf("class 0 holds %d bytes", got)
	}
	if got := bufClassSize(numBufClass - 1); got != 64<<20 {
		t.Fatalf("last class holds %d bytes", got)
	}
	for c := 1; c < numBufClass; c++ {
		if bufClassSize(c) <= bufClassSize(c-1) {
			t.Fatalf("class %d (%d bytes) not above class %d", c, bufClassSize(c), c-1)
		}
	}
	for _, n := range []int{0, 1, 511, 512, 513, 640, 641, 1000, 1 << 20, 1<<20 + 1, 8<<20 + 1024, 50 << 20, 64 << 20} {
		c := bufClassCeil(n)
		if size := bufClassSize(c); size < n || (c > 0 && bufClassSize(c-1) >= n) || (n > 512 && size > n+n/4) {
			t.Fatalf("ceil(%d) = class %d of %d bytes", n, c, size)
		}
	}
	for _, n := range []int{512, 513, 700, 1 << 20, 3<<20 + 5, 64 << 20, 100 << 20} {
		c, ok := bufClassFloor(n)
		if !ok || bufClassSize(c) > n || (c+1 < numBufClass && bufClassSize(c+1) <= n) {
			t.Fatalf("floor(%d) = class %d of %d bytes, ok %t", n, c, bufClassSize(c), ok)
		}
	}
	if _, ok := bufClassFloor(511); ok {
		t.Fatal("a 511-byte buffer has a class")
	}
}

// Buffers given back are handed out again, from whichever goroutine,
// and the free lists keep at most minPooledBytes.
func TestBufferPoolReuseAndBound(t *testing.T) {
	p := &bufferPool{scribble: true}
	b := p.get(8<<20 + 1024)
	if cap(b) != 10<<20 || len(b) != 0 {
		t.Fatalf("get(8 MiB + 1 KiB): len %d cap %d, want 0 and 10 MiB", len(b), cap(b))
	}
	b = append(b, 1, 2, 3)
	done := make(chan struct{})
	go func() { p.put(b); close(done) }()
	<-done
	if b[:1][0] != 0xdb {
		t.Fatal("released buffer not scribbled on")
	}
	again := p.get(9 << 20)
	if &again[:1][0] != &b[:1][0] {
		t.Fatal("a buffer given back on another goroutine was not reused")
	}
	p.put(again)
	p.scribble = false
	// Fill past the bound: 10 buffers of 10 MiB, 6 are kept.
	var bufs [][]byte
	for range 10 {
		bufs = append(bufs, p.get(10<<20))
	}
	for _, b := range bufs {
		p.put(b)
	}
	if p.pooled != 60<<20 || len(p.free[bufClassCeil(10<<20)]) != 6 {
		t.Fatalf("free lists hold %d bytes in %d buffers, want 60 MiB in 6", p.pooled, len(p.free[bufClassCeil(10<<20)]))
	}
	if n := p.outstanding(); n != 0 {
		t.Fatalf("%d outstanding", n)
	}
	// Larger than any class: allocated to size, never kept whole.
	big := p.get(100 << 20)
	if cap(big) != 100<<20 {
		t.Fatalf("get(100 MiB): cap %d", cap(big))
	}
	p.put(big)
	if p.pooled > minPooledBytes {
		t.Fatalf("free lists hold %d bytes", p.pooled)
	}
}

// A buffer far above the largest class goes to the GC instead of holding
// all of itself for a class's worth; idle buffers are dropped by trimIdle
// once they sat unused for a whole period, the oldest first.
func TestBufferPoolDropsOversizeAndIdle(t *testing.T) {
	p := &bufferPool{}
	if p.put(make([]byte, 0, 100<<20)) || p.pooled != 0 {
		t.Fatalf("a 100 MiB buffer was kept (%d bytes pooled)", p.pooled)
	}
	if !p.put(make([]byte, 0, 70<<20)) || p.pooled != 64<<20 {
		t.Fatalf("a 70 MiB buffer was not kept in the 64 MiB class (%d bytes pooled)", p.pooled)
	}
	p.get(64 << 20)

	const size = 1 << 20
	var bufs [][]byte
	for range 3 {
		bufs = append(bufs, p.get(size))
	}
	for _, b := range bufs {
		p.put(b)
	}
	if dropped := p.trimIdle(); dropped != 0 {
		t.Fatalf("the first trim dropped %d bytes of buffers just given back", dropped)
	}
	used := p.get(size) // the newest: bufs[2]
	p.put(used)
	if dropped := p.trimIdle(); dropped != 2*size {
		t.Fatalf("trim dropped %d bytes, want the two unused buffers", dropped)
	}
	if again := p.get(size); &again[:1][0] != &bufs[2][:1][0] {
		t.Fatal("the buffer in use was dropped instead of an idle one")
	} else {
		p.put(again)
	}
	p.trimIdle()
	if dropped := p.trimIdle(); dropped != size || p.pooled != 0 {
		t.Fatalf("trim dropped %d bytes, %d left pooled; want the last buffer gone", dropped, p.pooled)
	}
}

// A request finds a free buffer up to twice its size when none of its own
// class is free, the smallest first; nothing larger is taken, so a small
// request does not hold a large buffer. Requests of many sizes (a producer
// to thousands of partitions) then reuse what the pool holds instead of
// allocating beside it.
func TestBufferPoolTakesNextLargerFree(t *testing.T) {
	p := &bufferPool{limit: 128 << 20}
	for _, size := range []int{12 << 20, 20 << 20, 40 << 20} {
		if !p.put(make([]byte, 0, size)) {
			t.Fatalf("a %d MiB buffer was not kept", size>>20)
		}
	}
	b := p.get(9 << 20) // class 10 MiB: none free; 12 MiB is within twice 10
	if cap(b) != 12<<20 {
		t.Fatalf("get(9 MiB): cap %d, want the free 12 MiB buffer", cap(b)>>20)
	}
	p.put(b)
	if b := p.get(5 << 20); cap(b) != 5<<20 {
		t.Fatalf("get(5 MiB): cap %d MiB, want a new 5 MiB buffer (12 MiB is more than twice 5)", cap(b)>>20)
	}
	if b := p.get(16 << 20); cap(b) != 20<<20 {
		t.Fatalf("get(16 MiB): cap %d MiB, want the free 20 MiB buffer", cap(b)>>20)
	}
	if b := p.get(16 << 20); cap(b) != 16<<20 {
		t.Fatalf("get(16 MiB) again: cap %d MiB, want a new 16 MiB buffer (40 MiB is more than twice 16)", cap(b)>>20)
	}
	if p.pooled != 52<<20 {
		t.Fatalf("%d MiB pooled, want the 12 and 40 MiB buffers", p.pooled>>20)
	}
}

// A server's pool keeps half its request memory in free buffers, within
// [minPooledBytes, maxPooledLimit]: with the default 256 MiB of request
// memory, a connection's five 20 MiB Produce frames go back to the pool
// instead of to the collector.
func TestBufferPoolLimitFollowsRequestMemory(t *testing.T) {
	for _, c := range []struct{ mem, want int64 }{
		{16 << 20, minPooledBytes},
		{256 << 20, 128 << 20},
		{math.MaxInt64, maxPooledLimit},
	} {
		if got := pooledBytesLimit(c.mem); int64(got) != c.want {
			t.Fatalf("pooledBytesLimit(%d MiB) = %d MiB, want %d MiB", c.mem>>20, got>>20, c.want>>20)
		}
	}
	p := &bufferPool{limit: pooledBytesLimit(256 << 20)}
	var frames [][]byte
	for range 5 {
		frames = append(frames, p.get(20<<20))
	}
	for _, b := range frames {
		if !p.put(b) {
			t.Fatalf("a 20 MiB frame was turned away with %d MiB pooled", p.pooled>>20)
		}
	}
	if p.put(make([]byte, 0, 40<<20)) {
		t.Fatalf("a buffer past the limit was kept: %d MiB pooled", p.pooled>>20)
	}
}
