package configdef

import (
	"strings"
	"testing"
)

// A listener override of a key Strait implements per listener is
// described with that key's type and documentation, and its value
// shown; it changes at runtime, so it is not read-only (Kafka's
// ConfigHelper: the listener overrides of AllDynamicConfigs).
func TestDescribeListenerMaxConnections(t *testing.T) {
	src := Sources{NodeID: 1, Static: map[string]string{"listener.name.internal.max.connections": "50"}}
	entries, err := DescribeBroker("1", src, DescribeOptions{
		Names: []string{"listener.name.internal.max.connections"}, IncludeSynonyms: true, IncludeDocumentation: true,
	})
	if err != nil || len(entries) != 1 {
		t.Fatalf("%v %v", entries, err)
	}
	e := entries[0]
	if got := describeOne(e); got != "listener.name.internal.max.connections=50 source=STATIC_BROKER_CONFIG ro=false sensitive=false type=INT syn=[listener.name.internal.max.connections=50(STATIC_BROKER_CONFIG)]" {
		t.Fatalf("described %s", got)
	}
	if e.Documentation == nil || !strings.Contains(*e.Documentation, "listen backlog") {
		t.Fatalf("documentation %v", e.Documentation)
	}
	if _, l, ok := LookupListenerOverride("listener.name.internal.max.connections"); !ok || l != "internal" {
		t.Fatalf("LookupListenerOverride: %q %v", l, ok)
	}
	if _, _, ok := LookupListenerOverride("listener.name.internal.ssl.keystore.location"); ok {
		t.Fatal("an override Strait does not implement was found")
	}
}

func TestParsePerIPOverrides(t *testing.T) {
	got, err := ParsePerIPOverrides("a.example:1, 10.0.0.1:2 ,fe80::1%eth0:3")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["a.example"] != 1 || got["10.0.0.1"] != 2 || got["fe80::1%eth0"] != 3 {
		t.Fatalf("%v", got)
	}
	if got, err := ParsePerIPOverrides(""); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
}
