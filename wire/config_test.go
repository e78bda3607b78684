package wire

import "testing"

func TestDefaultEventLoops(t *testing.T) {
	for _, c := range []struct{ procs, want int }{{1, 1}, {2, 1}, {3, 1}, {4, 2}, {16, 8}} {
		if got := defaultEventLoops(c.procs); got != c.want {
			t.Errorf("defaultEventLoops(%d) = %d, want %d", c.procs, got, c.want)
		}
	}
}
