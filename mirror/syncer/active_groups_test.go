package syncer

import (
	"strings"
	"testing"

	"github.com/strait-io/strait/raftmeta"
)

// TestActiveGroupsMode: mirror.consumer.offsets.sync.active.groups is skip
// unless set to forward-only; any other value is refused when the mirror's
// configs are validated, naming the key.
func TestActiveGroupsMode(t *testing.T) {
	for v, want := range map[string]bool{"": false, "skip": false, "forward-only": true} {
		cfgs := map[string]string{"bootstrap.servers": "x:1"}
		if v != "" {
			cfgs[raftmeta.MirrorActiveGroupsSyncConfig] = v
		}
		set, err := parseSettings(cfgs)
		if err != nil || set.forwardActive != want {
			t.Errorf("%q: forward %v (%v), want %v", v, set.forwardActive, err, want)
		}
	}
	err := raftmeta.ValidateMirrorConfigs(map[string]string{"bootstrap.servers": "x:1", raftmeta.MirrorActiveGroupsSyncConfig: "rewind"})
	if err == nil || !strings.Contains(err.Error(), raftmeta.MirrorActiveGroupsSyncConfig) {
		t.Fatalf("rewind: %v", err)
	}
}
