package broker

import "testing"

func TestConnectionBudget(t *testing.T) {
	for _, tc := range []struct {
		limit uint64
		open  int
		want  int
	}{
		{1024, 60, 708},            // a quarter is 256: 1024-60-256
		{1 << 20, 100, 786332},     // a quarter of the limit is reserved
		{512, 18, 247},             // the reserve would leave 238: half of what is free instead
		{100, 60, 20},              // half of what is free
		{50, 60, 1},                // nothing free: still one
		{1 << 63, 100, 1610612636}, // RLIM_INFINITY counts as Int.MaxValue
	} {
		if got := connectionBudget(tc.limit, tc.open); got != tc.want {
			t.Errorf("connectionBudget(%d, %d) = %d, want %d", tc.limit, tc.open, got, tc.want)
		}
	}
	if n, ok := openDescriptors(); ok && n < 3 {
		t.Errorf("openDescriptors = %d: fewer than stdin, stdout and stderr", n)
	}
}
