package wire

// A connection's requests run one after another on one goroutine, its
// runner, instead of each on its own goroutine waiting for the one
// before it.
//
// Kafka handles a connection's requests one at a time, in order
// (request.go's prev/turn). With a goroutine per request, a producer's
// pipelined requests each woke a worker, and about half of them then
// parked on the turn of the request before and were woken again when it
// finished: two scheduler hand-offs per request, which on a single busy
// partition cost more CPU than appending the batch (issue 29's profile:
// scheduling was the top of the broker's samples). The runner takes the
// next request itself when it finishes one, so a request that arrives
// while one is running costs the event loop an append under a mutex and
// nobody a wake-up.
//
// The one exception is a request that lets the next start early (Unmute:
// an acks=all produce waiting for the ISR). Its goroutine stops being the
// runner there, and the rest of the queue, as well as what arrives
// later, goes to a new runner, so the next produce appends while the
// first waits, as before.
//
// A producing or fetching connection's runner also reads its requests
// from the socket itself once the event loop hands reading over
// (reader.go): the requests then never pass through the loop at all.

// enqueue runs r after the connection's requests read before it: on a
// new runner when none is active, else by the active one. It never
// blocks, so the event loop may call it; so does a runner reading the
// socket itself (reader.go), which finds itself running and queues.
func (cn *conn) enqueue(r *request) {
	cn.runMu.Lock()
	if cn.running {
		cn.runQueue = append(cn.runQueue, r)
		cn.runMu.Unlock()
		return
	}
	cn.running = true
	cn.runMu.Unlock()
	cn.srv.workers.start(task{cn: cn, r: r})
}

// runFrom is the runner: it runs r, then whatever was queued meanwhile,
// until the queue is empty or a request handed the role on. A runner of a
// connection its loop stopped reading (reader.go) reads the next
// requests from the socket when the queue is empty, starting there when
// r is nil, and ends only when reading does.
func (cn *conn) runFrom(r *request) {
	for {
		if r == nil {
			more := cn.reader.Load().readFrames()
			cn.runMu.Lock()
			if !more {
				cn.reading = false
			} else if len(cn.runQueue) == 0 {
				cn.runMu.Unlock()
				continue // not reached: readFrames reports more only with a request queued
			}
			r = cn.popLocked()
			cn.runMu.Unlock()
			if r == nil {
				return // reading ended with nothing queued: running is off
			}
		}
		r.run()
		if r.handedOff {
			return // the request unmuted: a new runner took the queue
		}
		cn.runMu.Lock()
		if len(cn.runQueue) == 0 && cn.reading {
			cn.runMu.Unlock()
			r = nil
			continue
		}
		r = cn.popLocked()
		cn.runMu.Unlock()
		if r == nil {
			return
		}
	}
}

// popLocked takes the next queued request, or, with none, ends the
// runner's role (running off) and returns nil. runMu is held.
func (cn *conn) popLocked() *request {
	if len(cn.runQueue) == 0 {
		cn.running = false
		cn.runQueue = cn.runQueue[:0]
		return nil
	}
	r := cn.runQueue[0]
	cn.runQueue[0] = nil
	cn.runQueue = cn.runQueue[1:]
	return r
}

// handOff gives up the runner role of the request's goroutine, which is
// about to wait inside its handler: the queued requests, and those read
// later, go to a new runner, which also reads the socket when the loop
// no longer does (reader.go). Runs once, inside the request's Unmute.
func (r *request) handOff() {
	r.handedOff = true
	cn := r.cn
	// Answers the runner held for this request to write with its own
	// (conn.holdForNext) go out now: this one is about to wait.
	cn.flushHeld(r)
	cn.runMu.Lock()
	if len(cn.runQueue) == 0 && cn.reading {
		cn.runMu.Unlock()
		cn.srv.workers.start(task{cn: cn})
		return
	}
	next := cn.popLocked()
	cn.runMu.Unlock()
	if next != nil {
		cn.srv.workers.start(task{cn: cn, r: next})
	}
}
