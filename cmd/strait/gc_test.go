package main

import (
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
