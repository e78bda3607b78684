package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Profiler fetches Go profiles of a broker during each measured workload,
// from net/http/pprof's handlers: Strait's metrics listener with
// metrics.pprof.enable=true, or kfake-serve's --pprof listener (issue 29:
// the profiles of the note come from the bench itself).
//
// A CPU profile is asked for a number of seconds up front and is lost
// when its request is cancelled, while a workload's length is known only
// at its end; so the CPU profile is fetched in back-to-back windows from
// the workload's start until the window in flight at its end finishes,
// and the windows are merged into one profile (mergeProfiles). It so
// misses the few milliseconds between two windows and may run up to a
// window past the workload, when the broker is idle. The allocations are
// the allocs profile at the end minus the one at the start, both taken
// after a GC (?gc=1), so they are the workload's (alloc_space,
// alloc_objects); the heap profile is the end's (inuse_space: what the
// broker holds after it).
type Profiler struct {
	// URL is where the handlers are served, http://host:port; the
	// profiles are under /debug/pprof/.
	URL string
	// Dir is where the files are written, <workload>-<broker>-<kind>.pb.gz.
	Dir string
	// Window is the length of one CPU profile request, whole seconds
	// (net/http/pprof's ?seconds); 0 is DefaultProfileWindow.
	Window time.Duration
}

// DefaultProfileWindow is Profiler.Window's default: at most this long
// past a workload's end, and one gap of a few milliseconds per window.
const DefaultProfileWindow = 2 * time.Second

// Profiles names the files a Profiler wrote for one workload.
type Profiles struct {
	CPU    string `json:"cpu"`    // merged CPU windows
	Allocs string `json:"allocs"` // allocations during the workload
	Heap   string `json:"heap"`   // the heap at its end
}

// profileRun is the profiling of one workload.
type profileRun struct {
	p      *Profiler
	client *http.Client
	prefix string // Dir/<workload>-<broker>-
	allocs []byte // the allocs profile at the start
	err    error  // the start's error, reported by finish

	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	cpu      [][]byte
	cerr     error
}

// startProfile starts profiling workload on broker; nil when p is nil (no
// profiles asked for).
func (p *Profiler) start(ctx context.Context, workload, broker string) *profileRun {
	if p == nil || p.URL == "" {
		return nil
	}
	window := max(p.Window.Round(time.Second), time.Second)
	if p.Window == 0 {
		window = DefaultProfileWindow
	}
	r := &profileRun{
		p:      p,
		client: &http.Client{Timeout: window + 30*time.Second},
		prefix: filepath.Join(p.Dir, fileSafe(workload)+"-"+fileSafe(broker)+"-"),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	r.allocs, r.err = r.get(ctx, "/debug/pprof/allocs?gc=1")
	go r.cpuWindows(ctx, window)
	return r
}

// cpuWindows fetches CPU profiles one after another until stopped; the
// window in flight when stop closes is finished and kept.
func (r *profileRun) cpuWindows(ctx context.Context, window time.Duration) {
	defer close(r.done)
	path := fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(window/time.Second))
	for {
		b, err := r.get(ctx, path)
		if err != nil {
			r.cerr = err
			return
		}
		r.cpu = append(r.cpu, b)
		select {
		case <-r.stop:
			return
		default:
		}
	}
}

// stopWindows makes the window in flight the last, when a workload ends
// or fails; safe on nil and more than once.
func (r *profileRun) stopWindows() {
	if r != nil {
		r.stopOnce.Do(func() { close(r.stop) })
	}
}

// finish ends the CPU windows and writes the workload's profiles.
func (r *profileRun) finish(ctx context.Context) (*Profiles, error) {
	if r == nil {
		return nil, nil
	}
	r.stopWindows()
	<-r.done
	if r.err != nil {
		return nil, r.err
	}
	if r.cerr != nil {
		return nil, r.cerr
	}
	if err := os.MkdirAll(r.p.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	out := &Profiles{CPU: r.prefix + "cpu.pb.gz", Allocs: r.prefix + "allocs.pb.gz", Heap: r.prefix + "heap.pb.gz"}
	cpu, err := mergeProfiles(r.cpu, scalesOf(len(r.cpu)))
	if err != nil {
		return nil, err
	}
	allocsEnd, err := r.get(ctx, "/debug/pprof/allocs?gc=1")
	if err != nil {
		return nil, err
	}
	allocs, err := mergeProfiles([][]byte{allocsEnd, r.allocs}, []int64{1, -1})
	if err != nil {
		return nil, err
	}
	heap, err := r.get(ctx, "/debug/pprof/heap")
	if err != nil {
		return nil, err
	}
	for path, b := range map[string][]byte{out.CPU: cpu, out.Allocs: allocs, out.Heap: heap} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, fmt.Errorf("bench: profile: %w", err)
		}
	}
	return out, nil
}

// scalesOf is n ones: profiles merged as they are.
func scalesOf(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// get fetches one profile.
func (r *profileRun) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(r.p.URL, "/")+path, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("bench: profile %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("bench: profile %s: %s: %s (is the broker's pprof enabled? Strait: metrics.pprof.enable=true)",
			path, resp.Status, strings.TrimSpace(string(b)))
	}
	return b, nil
}

// fileSafe keeps a label usable as part of a file name.
func fileSafe(s string) string {
	return strings.Map(func(c rune) rune {
		if c == '/' || c == os.PathSeparator || c == ' ' {
			return '_'
		}
		return c
	}, s)
}
