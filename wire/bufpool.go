package wire

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Response buffers come from size-classed free lists and go back once gnet
// has let go of them: a Fetch response is up to fetch.max.bytes (50 MiB by
// default) and a catch-up consumer asks for one after another, so
// allocating (and zeroing) each afresh costs as much as the copy itself
// and keeps the GC busy. Kafka needs no such pool because its Fetch path
// sends from the page cache (FileRecords.writeTo); ours does too where it
// can (sendfile.go) and uses these buffers otherwise.
//
// When a buffer may be reused. Only after the AsyncWritev callback that
// carried it has run: by then gnet has written the bytes to the socket or
// copied the rest into its own outbound buffer (conn.writev and
// elastic.Buffer.Writev both copy), and it keeps no reference; or, for a
// response the writer writes itself (the lent socket, a TLS connection:
// conn.writeOwn), once that write returns. A response
// dropped before it reached gnet (the connection closed, an earlier
// request failed) goes back at once. A response gnet never calls back for
// (its engine stopped with the task still queued) is simply left to the
// garbage collector: leaking to the GC is safe, reusing early is not.
//
// Why not sync.Pool. Buffers are taken on request goroutines and given
// back on event loops, i.e. on different Ps; sync.Pool's per-P private
// slot is invisible to the other Ps, so takes kept missing and allocating
// while the pool kept every buffer given back until the next two GCs: a
// 1 GiB catch-up read grew the broker to 270 MiB resident. One shared
// free list per class, holding at most pooledBytesLimit in all, reuses
// every buffer and bounds what idle buffers cost.
const (
	minBufShift    = 9  // 512 B: most non-Fetch responses fit
	maxBufShift    = 26 // 64 MiB: fetch.max.bytes (50 MiB) plus framing
	classesPerStep = 4  // four classes per power of two: at most 25% waste
	numBufClass    = (maxBufShift-minBufShift)*classesPerStep + 1
	minPooledBytes = 64 << 20 // the least a pool keeps (pooledBytesLimit), and a zero bufferPool's bound
	// maxPooledLimit is the most a pool may hold however much request
	// memory the server has.
	maxPooledLimit = 256 << 20
)

// pooledBytesLimit is how many bytes of free buffers a server's pool keeps,
// given its request memory (queued.max.request.bytes, math.MaxInt64 when
// unbounded): half of it, at least minPooledBytes and at most
// maxPooledLimit; 128 MiB by default.
//
// Why it follows the request memory. A Produce frame the pool cannot keep
// is garbage whose reservation stays owed until a collection (reclaim.go),
// so it is not memory saved: once such debt fills the request memory, the
// next frame waits for a forced collection. A producer to 10,000
// partitions sends requests of 1 to 30 MiB, five in flight; with 64 MiB
// the pool turned away hundreds of MiB of them a second and the reclaimer
// forced one to one and a half collections a second, each with the
// connection waiting. Free buffers are dropped after trimEvery unused, so
// an idle broker does not keep them.
func pooledBytesLimit(requestMemory int64) int {
	return int(min(max(requestMemory/2, minPooledBytes), maxPooledLimit))
}

// bufferPool is one server's response buffers, and its Produce request
// frames (api.poolFrame), which go back when their request ends. There is no
// package-level pool, so servers (and tests) do not share buffers or
// counters.
type bufferPool struct {
	limit  int // bytes free buffers may hold; minPooledBytes when 0
	mu     sync.Mutex
	free   [numBufClass][][]byte // buffers of capacity bufClassSize(i), zero length
	pooled int                   // bytes in free
	// idle[i] is the fewest buffers free[i] held since the last trim:
	// that many sat unused all along (trimIdle).
	idle [numBufClass]int

	gets atomic.Int64 // buffers handed out
	puts atomic.Int64 // buffers given back

	// scribble overwrites every buffer given back (tests): a buffer
	// still read after its release then shows as corrupt data on the
	// wire, or as a race under -race.
	scribble bool
}

// get returns an empty buffer with room for at least n bytes: one of n's
// class when one is free, else the smallest free one of the next
// classesPerStep classes (at most twice n), else a new one of n's class.
//
// Why look past n's class. A producer to thousands of partitions sends
// requests of every size from hundreds of KiB to tens of MiB (one batch for
// each partition it has buffered), so a request rarely finds a buffer of
// its own class free, even with the pool full of larger ones: each miss
// allocated and zeroed a new one, whose fresh pages faulted in as the
// socket was read into it, and pushed an older buffer out to the GC. Taking
// a larger free buffer costs at most its unused tail; the request's
// reservation is still its size.
func (p *bufferPool) get(n int) []byte {
	p.gets.Add(1)
	if n > 1<<maxBufShift {
		return make([]byte, 0, n)
	}
	c := bufClassCeil(n)
	p.mu.Lock()
	for f := c; f <= min(c+classesPerStep, numBufClass-1); f++ {
		if k := len(p.free[f]); k > 0 {
			b := p.free[f][k-1]
			p.free[f][k-1] = nil
			p.free[f] = p.free[f][:k-1]
			p.pooled -= cap(b)
			p.idle[f] = min(p.idle[f], k-1)
			p.mu.Unlock()
			return b
		}
	}
	p.mu.Unlock()
	return make([]byte, 0, bufClassSize(c))
}

// put gives b back and reports whether the pool kept it. b may have been
// regrown by append since get: it goes to the largest class its capacity
// fills, or to the GC when it fits no class, is far larger than the
// largest (keeping it would hold all of it for a class's worth) or the
// free lists are full.
func (p *bufferPool) put(b []byte) (kept bool) {
	p.puts.Add(1)
	if p.scribble && cap(b) > 0 {
		b = b[:cap(b)]
		b[0] = 0xdb
		for i := 1; i < len(b); i *= 2 {
			copy(b[i:], b[:i])
		}
	}
	c, ok := bufClassFloor(cap(b))
	if !ok || cap(b) > 1<<maxBufShift+1<<maxBufShift/classesPerStep {
		return false
	}
	size := bufClassSize(c)
	p.mu.Lock()
	limit := p.limit
	if limit == 0 {
		limit = minPooledBytes
	}
	if p.pooled+size <= limit {
		p.free[c] = append(p.free[c], b[:0:size])
		p.pooled += size
		kept = true
	}
	p.mu.Unlock()
	return kept
}

// trimIdle drops the buffers that sat in the pool unused since the last
// trim, so a burst's buffers do not stay for good, and returns how many
// bytes it dropped. The oldest go first: get takes the newest.
func (p *bufferPool) trimIdle() (dropped int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.free {
		n := p.idle[c]
		if n > 0 {
			size := bufClassSize(c)
			k := copy(p.free[c], p.free[c][n:])
			clear(p.free[c][k:])
			p.free[c] = p.free[c][:k]
			p.pooled -= n * size
			dropped += n * size
		}
		p.idle[c] = len(p.free[c])
	}
	return dropped
}

// outstanding is the number of buffers handed out and not given back.
func (p *bufferPool) outstanding() int64 { return p.gets.Load() - p.puts.Load() }

// bufClassSize is class c's capacity: 2^s·(4+q)/4 for s = minBufShift +
// c/4 and q = c%4, i.e. 512, 640, 768, 896, 1024, 1280, ...
func bufClassSize(c int) int {
	s, q := minBufShift+c/classesPerStep, c%classesPerStep
	return (classesPerStep + q) << s / classesPerStep
}

// bufClassCeil is the smallest class holding n bytes; n <= 1<<maxBufShift.
func bufClassCeil(n int) int {
	if n <= 1<<minBufShift {
		return 0
	}
	s := bits.Len(uint(n-1)) - 1 // 2^s < n <= 2^(s+1)
	c := (s-minBufShift)*classesPerStep + 1
	for bufClassSize(c) < n {
		c++
	}
	return c
}

// bufClassFloor is the largest class a buffer of capacity n fills.
func bufClassFloor(n int) (int, bool) {
	if n < 1<<minBufShift {
		return 0, false
	}
	if n >= 1<<maxBufShift {
		return numBufClass - 1, true
	}
	s := bits.Len(uint(n)) - 1 // 2^s <= n < 2^(s+1)
	c := (s - minBufShift) * classesPerStep
	for c+1 < numBufClass && bufClassSize(c+1) <= n {
		c++
	}
	return c, true
}
