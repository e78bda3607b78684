package broker

import (
	"net/http"
	"net/http/pprof"
)

// mountPprof serves Go's runtime profiles under /debug/pprof/ on mux, the
// metrics listener's own ServeMux (metrics.pprof.enable). The handlers are
// registered here, on mux, by hand: the package's import also registers
// them on http.DefaultServeMux, which nothing in Strait serves, so only a
// broker with the key on exposes them. /debug/pprof/ is the index, and
// every named profile under it (heap, allocs, goroutine, block, mutex,
// threadcreate) is served by pprof.Index; profile (CPU, ?seconds=N) and
// trace run for the time asked; symbol resolves addresses for go tool
// pprof; cmdline returns the command line.
func mountPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
