package raftmeta

import "testing"

// The internal topics are Kafka's Topic.INTERNAL_TOPICS; a mirror may take
// none of them, nor the metadata log or __mirror_state.
func TestInternalTopics(t *testing.T) {
	for _, c := range []struct {
		name                   string
		internal, unmirrorable bool
	}{
		{"__consumer_offsets", true, true},
		{"__transaction_state", true, true},
		{"__share_group_state", true, true},
		{"__mirror_state", false, true},
		{"__cluster_metadata", false, true},
		{"__consumer_offsets2", false, false},
		{"orders", false, false},
	} {
		if got := IsInternalTopic(c.name); got != c.internal {
			t.Errorf("IsInternalTopic(%q) = %v, want %v", c.name, got, c.internal)
		}
		if got := IsUnmirrorable(c.name); got != c.unmirrorable {
			t.Errorf("IsUnmirrorable(%q) = %v, want %v", c.name, got, c.unmirrorable)
		}
	}
}
