package coordinator

import (
	"testing"
	"time"
)

// TestConsumerGroupDynamicConfig: a consumer group's own
// consumer.session.timeout.ms and consumer.heartbeat.interval.ms win over
// the broker's, read at every heartbeat (GroupMetadataManager asks its
// GroupConfigManager), while a group without them keeps the broker's.
func TestConsumerGroupDynamicConfig(t *testing.T) {
	configs := map[string]DynamicGroupConfig{
		"fast": {ConsumerSessionTimeout: 3 * time.Second, ConsumerHeartbeatInterval: time.Second},
	}
	h := newHarness(t, func(cfg *Config) {
		cfg.GroupConfigs = func(group string) DynamicGroupConfig { return configs[group] }
	})
	fast, slow := h.newConsumer("fast", "a", "foo"), h.newConsumer("slow", "b", "foo")
	if got := fast.join().HeartbeatIntervalMillis; got != 1000 {
		t.Fatalf("fast group's heartbeat interval %d, want its own 1000", got)
	}
	if got := slow.join().HeartbeatIntervalMillis; got != 5000 {
		t.Fatalf("slow group's heartbeat interval %d, want the broker's 5000", got)
	}

	// Both go silent: the fast group's member is fenced after its 3s, the
	// other only after the broker's 45s.
	h.advance(3*time.Second + time.Millisecond)
	h.drainWrites()
	if _, _, _, n := h.cgState("fast"); n != 0 {
		t.Fatalf("fast group: %d members after its session timeout", n)
	}
	if _, _, _, n := h.cgState("slow"); n != 1 {
		t.Fatalf("slow group: %d members 3s in", n)
	}

	// An alter applies from the next heartbeat on.
	configs["slow"] = DynamicGroupConfig{ConsumerSessionTimeout: 2 * time.Second, ConsumerHeartbeatInterval: 1500 * time.Millisecond}
	if got := slow.heartbeat().HeartbeatIntervalMillis; got != 1500 {
		t.Fatalf("slow group's heartbeat interval after the alter %d, want 1500", got)
	}
	h.advance(2*time.Second + time.Millisecond)
	h.drainWrites()
	if _, _, _, n := h.cgState("slow"); n != 0 {
		t.Fatalf("slow group: %d members after its new session timeout", n)
	}
}

// TestShareGroupDynamicConfig: a share group's own share.session.timeout.ms
// and share.heartbeat.interval.ms win over the broker's, as its members
// see them and as the coordinator fences them.
func TestShareGroupDynamicConfig(t *testing.T) {
	configs := map[string]DynamicGroupConfig{
		"fast": {ShareSessionTimeout: 3 * time.Second, ShareHeartbeatInterval: time.Second},
	}
	h, _ := newShareHarness(t, func(cfg *Config) {
		cfg.GroupConfigs = func(group string) DynamicGroupConfig { return configs[group] }
	})
	members := func(group string) int {
		n := -1
		h.withShareGroup(group, func(g *shareGroup) {
			if g != nil {
				n = len(g.members)
			}
		})
		return n
	}
	if got := h.joinShare("fast", "a", "foo").HeartbeatIntervalMillis; got != 1000 {
		t.Fatalf("fast share group's heartbeat interval %d, want its own 1000", got)
	}
	if got := h.joinShare("slow", "b", "foo").HeartbeatIntervalMillis; got != 5000 {
		t.Fatalf("slow share group's heartbeat interval %d, want the broker's 5000", got)
	}
	h.advance(3*time.Second + time.Millisecond)
	h.drainWrites()
	if n := members("fast"); n != 0 {
		t.Fatalf("fast share group: %d members after its session timeout", n)
	}
	if n := members("slow"); n != 1 {
		t.Fatalf("slow share group: %d members 3s in", n)
	}
}
