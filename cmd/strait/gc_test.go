package main

import (
	"math"
	"runtime/debug"
	"slices"
	"testing"
)

func TestServeGCPercentYieldsToGOGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)

	setServeGCPercent(func(k string) string {
		if k == "GOGC" {
			return "50"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set the broker changed the GC percent to %d", got)
	}
	setServeGCPercent(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Fatalf("GC percent %d, want the broker default %d", got, serveGCPercent)
	}
}

func TestServeMemoryLimitFromCgroup(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	noEnv := func(string) string { return "" }
	limited := func() (int64, bool) { return 1 << 30, true }

	setServeMemoryLimit(func(k string) string {
		if k == "GOMEMLIMIT" {
			return "500MiB"
		}
		return ""
	}, limited)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set the broker changed the memory limit to %d", got)
	}
	setServeMemoryLimit(noEnv, func() (int64, bool) { return 0, false })
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("without a cgroup limit the broker set a memory limit of %d", got)
	}
	setServeMemoryLimit(noEnv, limited)
	if got, want := debug.SetMemoryLimit(-1), int64(1<<30)/10*serveMemoryLimitTenths; got != want {
		t.Fatalf("memory limit %d in a 1 GiB cgroup, want %d", got, want)
	}
}

func TestServeGODEBUG(t *testing.T) {
	for _, c := range []struct {
		in, want string
		changed  bool
	}{
		{"", serveSchedTrace, true},
		{" ", serveSchedTrace, true},
		{"madvdontneed=1", "madvdontneed=1," + serveSchedTrace, true},
		{"schedtrace=0", "schedtrace=0", false},
		{"gctrace=1, schedtrace=1000", "gctrace=1, schedtrace=1000", false},
	} {
		got, changed := serveGODEBUG(c.in)
		if got != c.want || changed != c.changed {
			t.Errorf("serveGODEBUG(%q) = %q, %v; want %q, %v", c.in, got, changed, c.want, c.changed)
		}
	}
	env := withEnv([]string{"A=1", "GODEBUG=x=1", "GODEBUGX=2"}, "GODEBUG", "y=2")
	if want := []string{"A=1", "GODEBUGX=2", "GODEBUG=y=2"}; !slices.Equal(env, want) {
		t.Errorf("withEnv = %q, want %q", env, want)
	}
}
