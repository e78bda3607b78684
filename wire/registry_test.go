package wire

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestRegisterPanics(t *testing.T) {
	h := func(*Server, context.Context, kmsg.Request) (kmsg.Response, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		a    api
		want string
	}{
		{"duplicate key", api{key: 18, min: 0, max: 4, handle: h}, "registered twice"},
		{"max below min", api{key: 12, min: 3, max: 2, handle: h}, "invalid api registration"},
		{"negative min", api{key: 12, min: -1, max: 2, handle: h}, "invalid api registration"},
		{"negative key", api{key: -1, min: 0, max: 0, handle: h}, "invalid api registration"},
		{"no handler", api{key: 12, min: 0, max: 4}, "invalid api registration"},
		{"key kmsg does not know", api{key: 9999, min: 0, max: 0, handle: h}, "unknown to kmsg"},
		{"max above kmsg's", api{key: 12, min: 0, max: 99, handle: h}, "kmsg decodes up to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[int16]api{18: {key: 18, min: 0, max: 4, handle: h}}
			defer func() {
				p := recover()
				if s, _ := p.(string); !strings.Contains(s, tc.want) {
					t.Fatalf("panic %v, want one containing %q", p, tc.want)
				}
			}()
			registerIn(m, tc.a)
		})
	}
}

func TestAPITable(t *testing.T) {
	h := func(*Server, context.Context, kmsg.Request) (kmsg.Response, error) { return nil, nil }
	before := len(registry)
	tab := newAPITable(api{key: 36, min: 0, max: 2, handle: h}, api{key: 3, min: 1, max: 12, handle: h})
	if len(registry) != before {
		t.Fatal("a test table changed the package registry")
	}
	var got [][3]int16
	for _, v := range tab.versions {
		got = append(got, [3]int16{v.ApiKey, v.MinVersion, v.MaxVersion})
	}
	want := [][3]int16{{3, 1, 12}, {18, 0, 4}, {36, 0, 2}}
	if len(got) != len(want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("versions %v, want %v", got, want)
		}
	}
	if _, ok := tab.lookup(12); ok {
		t.Fatal("lookup found an unregistered key")
	}
	// The package registry holds exactly the handlers written so far.
	if a, ok := registry[18]; !ok || a.min != 0 || a.max != 4 || len(registry) != 1 {
		t.Fatalf("registry %v", registry)
	}
}
