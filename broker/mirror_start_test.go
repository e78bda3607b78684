package broker

import (
	"slices"
	"testing"
)

func TestLiteralPattern(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		literal       bool
	}{
		{"orders", "orders", true},
		{"^orders$", "orders", true},
		{`^a\.b-c_d$`, "a.b-c_d", true}, // admin.TopicPattern's quoting
		{"^orders", "orders", true},
		{"a.b", "", false},
		{"ord.*", "", false},
		{"(?i)orders", "", false},
		{"a|b", "", false},
		{"", "", false},
		{"(", "", false},
	} {
		name, ok := literalPattern(c.pattern)
		if name != c.name || ok != c.literal {
			t.Errorf("literalPattern(%q) = %q, %v; want %q, %v", c.pattern, name, ok, c.name, c.literal)
		}
	}
}

func TestTopicSelector(t *testing.T) {
	sel, err := newTopicSelector([]string{"^orders$", "pay.*", "orders", "^x$"}, []string{"payroll"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sel.names, []string{"orders", "x"}) || len(sel.patterns) != 1 {
		t.Fatalf("names %v, %d patterns", sel.names, len(sel.patterns))
	}
	for _, c := range []struct {
		topic      string
		match      bool
		excludedBy string
	}{
		{"payments", true, ""},
		{"payroll", true, "payroll"},
		{"xpayments", false, ""}, // whole names only
		{"__consumer_offsets", false, "__.*"},
	} {
		if got := sel.matchesPattern(c.topic); got != c.match {
			t.Errorf("matchesPattern(%q) = %v", c.topic, got)
		}
		if got := sel.excludedBy(c.topic); got != c.excludedBy {
			t.Errorf("excludedBy(%q) = %q, want %q", c.topic, got, c.excludedBy)
		}
	}
	// The mirror's mirror.topics.exclude replaces the default.
	sel, err = newTopicSelector([]string{"a.*"}, nil, map[string]string{"mirror.topics.exclude": "a1, a2"})
	if err != nil {
		t.Fatal(err)
	}
	if sel.excludedBy("__x") != "" || sel.excludedBy("a2") != "a2" || sel.excludedBy("a3") != "" {
		t.Fatalf("exclude %v", sel.exclude)
	}
	if _, err := newTopicSelector([]string{"("}, nil, nil); err == nil {
		t.Fatal("a bad include pattern was accepted")
	}
	if _, err := newTopicSelector([]string{"a"}, []string{"["}, nil); err == nil {
		t.Fatal("a bad exclude pattern was accepted")
	}
}
