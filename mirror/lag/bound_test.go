package lag

import "testing"

func TestBoundExceeded(t *testing.T) {
	for _, c := range []struct {
		name        string
		b           Bound
		records, ms int64
		want        bool
	}{
		{"no bound", NoBound, 1000, 99999, false},
		{"no bound, unknown", NoBound, Unknown, Unknown, false},
		{"records under", Bound{Records: 100, Ms: Unknown}, 100, 99999, false},
		{"records over", Bound{Records: 100, Ms: Unknown}, 101, 0, true},
		{"records unknown", Bound{Records: 100, Ms: Unknown}, Unknown, Unknown, true},
		{"ms under", Bound{Records: Unknown, Ms: 5000}, 10, 5000, false},
		{"ms over", Bound{Records: Unknown, Ms: 5000}, 10, 5001, true},
		{"ms unknown with records lagging", Bound{Records: Unknown, Ms: 5000}, 10, Unknown, true},
		{"ms unknown, caught up", Bound{Records: Unknown, Ms: 5000}, 0, Unknown, false},
		{"ms bound, lag unknown", Bound{Records: Unknown, Ms: 5000}, Unknown, Unknown, true},
		{"zero bound, caught up", Bound{Records: 0, Ms: 0}, 0, 0, false},
		{"zero bound, one record", Bound{Records: Unknown, Ms: 0}, 1, 1, true},
		{"both, one over", Bound{Records: 100, Ms: 5000}, 50, 6000, true},
	} {
		if got := c.b.Exceeded(c.records, c.ms); got != c.want {
			t.Errorf("%s: %v.Exceeded(%d, %d) = %v; want %v", c.name, c.b, c.records, c.ms, got, c.want)
		}
	}
}

func TestBoundString(t *testing.T) {
	if got := (Bound{Records: 100, Ms: 5000}).String(); got != "100 records, 5000 ms" {
		t.Errorf("got %q", got)
	}
	if got := NoBound.String(); got != "none" {
		t.Errorf("got %q", got)
	}
	if got := Describe(Unknown, Unknown); got != "unknown" {
		t.Errorf("got %q", got)
	}
}
