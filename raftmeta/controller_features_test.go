package raftmeta

import (
	"bytes"
	"context"
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func featureUpdate(name string, level int16, upgradeType int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, upgradeType
	return u
}

// TestUpdateFeaturesController: the controller's side of UpdateFeatures
// (FeatureControlManager): v0's AllowDowngrade, ValidateOnly, one failing
// update failing the batch, the last of a feature named twice winning, and
// v2's missing per-feature results.
func TestUpdateFeaturesController(t *testing.T) {
	c, log := newTestController(t, Config{})
	ctx := context.Background()
	update := func(version int16, validateOnly bool, us ...kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesResponse {
		req := kmsg.NewPtrUpdateFeaturesRequest()
		req.Version, req.ValidateOnly, req.FeatureUpdates = version, validateOnly, us
		return c.UpdateFeatures(ctx, req)
	}
	level := func() int16 { return log.Image().FeatureLevel(FeatureGroup) }

	// v0 without AllowDowngrade is an upgrade: a lower level is refused.
	down := featureUpdate(FeatureGroup, 0, 0)
	if r := update(0, false, down); r.ErrorCode != kerr.InvalidUpdateVersion.Code || level() != 1 {
		t.Fatalf("v0 downgrade without AllowDowngrade: %s, level %d", codeName(r.ErrorCode), level())
	}
	down.AllowDowngrade = true
	before := log.proposals()
	if r := update(1, true, featureUpdate(FeatureGroup, 0, upgradeTypeSafeDowngrade)); r.ErrorCode != 0 || level() != 1 || log.proposals() != before {
		t.Fatalf("validate-only: %s, level %d, %d writes", codeName(r.ErrorCode), level(), log.proposals()-before)
	}
	r := update(0, false, down)
	if r.ErrorCode != 0 || level() != 0 || len(r.Results) != 1 || r.Results[0].Feature != FeatureGroup || r.Results[0].ErrorCode != 0 {
		t.Fatalf("v0 downgrade with AllowDowngrade: %+v, level %d", r, level())
	}
	if _, ok := log.Image().FinalizedFeatures()[FeatureGroup]; ok {
		t.Fatal("group.version 0 is listed as finalized")
	}

	// One bad update fails them all; nothing is written.
	before = log.proposals()
	r = update(2, false, featureUpdate(FeatureGroup, 1, upgradeTypeUpgrade), featureUpdate(FeatureTransaction, 3, upgradeTypeUpgrade))
	if r.ErrorCode != kerr.InvalidUpdateVersion.Code || level() != 0 || log.proposals() != before || r.Results != nil {
		t.Fatalf("a batch with a refused update: %+v, level %d, %d writes", r, level(), log.proposals()-before)
	}
	// The last update of a feature wins; v2 has no results.
	r = update(2, false, featureUpdate(FeatureGroup, 0, upgradeTypeSafeDowngrade), featureUpdate(FeatureGroup, 1, upgradeTypeUpgrade))
	if r.ErrorCode != 0 || level() != 1 || r.Results != nil {
		t.Fatalf("a feature named twice: %+v, level %d", r, level())
	}
	// Not the controller: NOT_CONTROLLER, as every write.
	log.mu.Lock()
	log.leader = false
	log.mu.Unlock()
	if r := update(2, false, featureUpdate(FeatureGroup, 0, upgradeTypeSafeDowngrade)); r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("on a follower: %s", codeName(r.ErrorCode))
	}
}

// TestFeatureLevelsReplay: a FeatureLevelRecord keeps a 0 (the bootstrap
// level of group.version is 1), a snapshot keeps the levels the log set,
// and a level this node does not support is refused on replay.
func TestFeatureLevelsReplay(t *testing.T) {
	img := EmptyImage()
	if got := img.FinalizedFeatures(); !maps.Equal(got, map[string]int16{FeatureMetadataVersion: MetadataVersion4_0IV3, FeatureKRaftVersion: 1, FeatureGroup: 1, FeatureShare: 1,
		FeatureTransaction: 2}) {
		t.Fatalf("bootstrap levels %v", got)
	}
	b := newBuilder(img, 1)
	if err := b.replay([]Record{&FeatureLevelRecord{Name: FeatureGroup, FeatureLevel: 0}}); err != nil {
		t.Fatal(err)
	}
	if img.FeatureLevel(FeatureGroup) != 1 || b.next.FeatureLevel(FeatureGroup) != 0 {
		t.Fatalf("levels before %d after %d", img.FeatureLevel(FeatureGroup), b.next.FeatureLevel(FeatureGroup))
	}
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, b.next); err != nil {
		t.Fatal(err)
	}
	restored, err := readSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if restored.FeatureLevel(FeatureGroup) != 0 || !maps.Equal(restored.Features, map[string]int16{FeatureGroup: 0}) {
		t.Fatalf("restored features %v", restored.Features)
	}
	for _, r := range []*FeatureLevelRecord{
		{Name: FeatureTransaction, FeatureLevel: 3},
		{Name: "streams.version", FeatureLevel: 1},
		{Name: FeatureMetadataVersion, FeatureLevel: 24},
	} {
		if err := newBuilder(img, 2).replay([]Record{r}); err == nil {
			t.Errorf("%s=%d replayed", r.Name, r.FeatureLevel)
		}
	}
}
