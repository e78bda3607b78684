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
	work    chan task    // unbuffered: a send succeeds only while a worker waits
	idle    atomic.Int32 // workers waiting on work
	spawned atomic.Int64 // goroutines started
	started atomic.Int64 // requests handed to a worker (runqueue.go: a connection's runner)
	done    <-chan struct{}
	run     func(task) // task.run; tests stand in
}

// task is what a worker is given: a connection to be the runner of
// (runqueue.go), starting with request r, or with reading the
// connection's socket when r is nil (reader.go).
type task struct {
	cn *conn
	r  *request
}

func (t task) run() { t.cn.runFrom(t.r) }

func newRequestWorkers(done <-chan struct{}) *requestWorkers {
	return &requestWorkers{work: make(chan task), done: done, run: task.run}
}

// start runs t on an idle worker, or on a new one. It never blocks, so
// the event loop may call it.
func (w *requestWorkers) start(t task) {
	w.started.Add(1)
	select {
	case w.work <- t:
	default:
		w.spawned.Add(1)
		go w.loop(t)
	}
}

// loop runs t, then waits for the next task until the server stops or
// enough workers already wait.
func (w *requestWorkers) loop(t task) {
	for {
		w.run(t)
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		select {
		case t = <-w.work:
			w.idle.Add(-1)
		case <-w.done:
			w.idle.Add(-1)
			return
		}
	}
}
