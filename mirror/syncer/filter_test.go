package syncer

import (
	"testing"
)

func TestNameFilter(t *testing.T) {
	for _, tc := range []struct {
		include, exclude string
		in, out          []string
	}{
		// Empty include: nothing (only explicitly added topics mirror).
		{"", "__.*", nil, []string{"orders", "__consumer_offsets", ""}},
		// Whole names only; exclude wins over include.
		{"orders.*, pay", "__.*,orders-tmp", []string{"orders", "orders-eu", "pay"}, []string{"xorders", "payx", "orders-tmp", "__orders"}},
		{".*", "", []string{"a", "__consumer_offsets"}, nil},
		// A pattern with an alternation stays whole-name anchored.
		{"a|b", "", []string{"a", "b"}, []string{"ab", "xa"}},
	} {
		f, err := newNameFilter(tc.include, tc.exclude)
		if err != nil {
			t.Fatalf("%q/%q: %v", tc.include, tc.exclude, err)
		}
		for _, n := range tc.in {
			if !f.matches(n) {
				t.Errorf("include %q exclude %q: %q not selected", tc.include, tc.exclude, n)
			}
		}
		for _, n := range tc.out {
			if f.matches(n) {
				t.Errorf("include %q exclude %q: %q selected", tc.include, tc.exclude, n)
			}
		}
	}
	if _, err := newNameFilter("(", ""); err == nil {
		t.Error("include ( compiled")
	}
}

func TestSettingsDefaults(t *testing.T) {
	s, err := parseSettings(map[string]string{"bootstrap.servers": "x:1"})
	if err != nil {
		t.Fatal(err)
	}
	// Defaults (digest §5.1): no topic discovery, every group but none
	// excluded, every ACL, the default property exclusions plus
	// mirror.name.
	if s.topics.matches("orders") || !s.groups.matches("g") || len(s.acls) != 1 {
		t.Errorf("defaults: topics(orders)=%v groups(g)=%v acl rules %d", s.topics.matches("orders"), s.groups.matches("g"), len(s.acls))
	}
	for _, k := range []string{"mirror.name", "min.insync.replicas", "unclean.leader.election.enable", "message.timestamp.type"} {
		if !s.propertyExclude[k] {
			t.Errorf("%s not excluded by default", k)
		}
	}
	if s.propertyExclude["retention.ms"] || len(s.propertyExclude) != 9 {
		t.Errorf("excluded %v, want the 9 defaults", s.propertyExclude)
	}
	// mirror.name stays excluded whatever the setting says.
	s, _ = parseSettings(map[string]string{"mirror.topic.properties.exclude": "retention.ms"})
	if !s.propertyExclude["mirror.name"] || !s.propertyExclude["retention.ms"] || len(s.propertyExclude) != 2 {
		t.Errorf("excluded %v, want mirror.name and retention.ms", s.propertyExclude)
	}
}

func TestRefreshInterval(t *testing.T) {
	for v, want := range map[string]string{"": "1m0s", "300": "300ms", "0": "1m0s", "x": "1m0s", "120000": "2m0s"} {
		cfgs := map[string]string{}
		if v != "" {
			cfgs[RefreshIntervalConfig] = v
		}
		if got := RefreshInterval(cfgs).String(); got != want {
			t.Errorf("%q: %s, want %s", v, got, want)
		}
	}
}
