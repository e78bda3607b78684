package lag

import (
	"testing"
	"time"
)

func TestOf(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	fresh := now.Add(-time.Second)
	age := func(offset int64, now time.Time) int64 { return 100 + offset }
	for _, tc := range []struct {
		name string
		src  Source
		dst  Destination
		want Lag
	}{
		{"to the high watermark, not the log end",
			Source{HighWatermark: 100, LastStableOffset: 90, MeasuredAt: fresh},
			Destination{HighWatermark: 60, LastStableOffset: 50, LogEndOffset: 100},
			Lag{Records: 40, Committed: 40, Ms: 160, MeasuredAt: fresh}},
		{"caught up",
			Source{HighWatermark: 100, LastStableOffset: 100, MeasuredAt: fresh},
			Destination{HighWatermark: 100, LastStableOffset: 100, LogEndOffset: 100},
			Lag{Records: 0, Committed: 0, Ms: 0, MeasuredAt: fresh}},
		{"stale source measurement is unknown, not 0",
			Source{HighWatermark: 100, LastStableOffset: 100, MeasuredAt: now.Add(-StaleAfter - time.Millisecond)},
			Destination{HighWatermark: 100, LastStableOffset: 100, LogEndOffset: 100},
			Lag{Records: Unknown, Committed: Unknown, Ms: Unknown, MeasuredAt: now.Add(-StaleAfter - time.Millisecond)}},
		{"never measured",
			Source{HighWatermark: Unknown, LastStableOffset: Unknown},
			Destination{HighWatermark: 0, LastStableOffset: 0, LogEndOffset: 0},
			Lag{Records: Unknown, Committed: Unknown, Ms: Unknown}},
		{"destination ahead of a source measurement reads 0",
			Source{HighWatermark: 10, LastStableOffset: Unknown, MeasuredAt: fresh},
			Destination{HighWatermark: 12, LastStableOffset: 12, LogEndOffset: 12},
			Lag{Records: 0, Committed: Unknown, Ms: 0, MeasuredAt: fresh}},
	} {
		if got := Of(tc.src, tc.dst, age, now); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := Of(Source{HighWatermark: 5, LastStableOffset: 5, MeasuredAt: fresh}, Destination{}, nil, now); got.Ms != Unknown || got.Records != 5 {
		t.Errorf("no age: %+v", got)
	}
}

func TestCaughtUpTo(t *testing.T) {
	for _, tc := range []struct {
		dst, src int64
		want     bool
	}{{10, 10, true}, {11, 10, true}, {9, 10, false}, {10, Unknown, false}} {
		if got := CaughtUpTo(tc.dst, tc.src); got != tc.want {
			t.Errorf("CaughtUpTo(%d, %d) = %v", tc.dst, tc.src, got)
		}
	}
}
