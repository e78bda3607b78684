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
	tab := newAPITable(Services{}, api{key: 36, min: 0, max: 2, handle: h}, api{key: 3, min: 1, max: 12, handle: h})
	if len(registry) != before {
		t.Fatal("a test table changed the package registry")
	}
	var got [][3]int16
	for _, v := range tab.versions {
		got = append(got, [3]int16{v.ApiKey, v.MinVersion, v.MaxVersion})
	}
	var want [][3]int16
	for _, k := range expectedKeys(api{key: 36, min: 0, max: 2}, api{key: 3, min: 1, max: 12}) {
		want = append(want, [3]int16{k.ApiKey, k.MinVersion, k.MaxVersion})
	}
	if len(got) != len(want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("versions %v, want %v", got, want)
		}
	}
	if _, ok := tab.lookup(94); ok { // UnregisterController, never served
		t.Fatal("lookup found an unregistered key")
	}
	// The stand-ins left the package registry as it was.
	if a, ok := registry[3]; !ok || a.min != 0 || a.max != 12 {
		t.Fatalf("registry %v", registry)
	}
}
