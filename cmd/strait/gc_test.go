package main

import (
	"math"
	"runtime/debug"
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
