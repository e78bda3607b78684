package wire

import "sync/atomic"

// maxIdleWorkers bounds the goroutines kept waiting for a request. A
// burst beyond it (many long polls parked at once) gets goroutines that
// end with their request.
const maxIdleWorkers = 64

// requestWorkers runs each request on a goroutine kept from an earlier
// request when one is waiting, else on a new one that stays for the next.
// A new goroutine per request paid for its creation and then, every time,
// for growing its stack through the handler's depth (runtime.morestack,
// about 3% of a replicating node's CPU). Kafka's request handler pool
// (num.io.threads) keeps its threads for the same reason; unlike it, a
// request never waits for a worker: one is started when none is idle.
type requestWorkers struct {
	work    chan *request // unbuffered: a send succeeds only while a worker waits
	idle    atomic.Int32  // workers waiting on work
	spawned atomic.Int64  // goroutines started
	started atomic.Int64  // requests handed to a worker (runqueue.go: a connection's runner)
	done    <-chan struct{}
	run     func(*request) // (*request).runQueued; tests stand in
}

func newRequestWorkers(done <-chan struct{}) *requestWorkers {
	return &requestWorkers{work: make(chan *request), done: done, run: (*request).runQueued}
}

// start runs r on an idle worker, or on a new one. It never blocks, so
// the event loop may call it.
func (w *requestWorkers) start(r *request) {
	w.started.Add(1)
	select {
	case w.work <- r:
	default:
		w.spawned.Add(1)
		go w.loop(r)
	}
}

// loop runs r, then waits for the next request until the server stops or
// enough workers already wait.
func (w *requestWorkers) loop(r *request) {
	for {
		w.run(r)
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		select {
		case r = <-w.work:
			w.idle.Add(-1)
		case <-w.done:
			w.idle.Add(-1)
			return
		}
	}
}
