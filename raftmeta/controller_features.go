package raftmeta

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// featureControl is FeatureControlManager: the finalized feature levels
// (features.go).
type featureControl struct{ *Controller }

// UpdateFeatures is featureControl.UpdateFeatures.
func (c *Controller) UpdateFeatures(ctx context.Context, req *kmsg.UpdateFeaturesRequest) *kmsg.UpdateFeaturesResponse {
	return featureControl{c}.UpdateFeatures(ctx, req)
}

// The upgrade types of UpdateFeatures v1+ (FeatureUpdate.UpgradeType).
const (
	upgradeTypeUpgrade         int8 = 1
	upgradeTypeSafeDowngrade   int8 = 2
	upgradeTypeUnsafeDowngrade int8 = 3
)

// UpdateFeatures: v0-2 (QuorumController.updateFeatures +
// FeatureControlManager.updateFeatures; the broker forwards it).
//
// Behavior:
//   - Every update is checked against the image, and the first error fails
//     them all with INVALID_UPDATE_VERSION: "The update failed for all
//     features since the following feature had an error: Invalid update
//     version L for feature F. <reason>". Nothing is written then.
//   - A level outside the range this node supports (SupportedFeatures), a
//     feature it does not know, a negative level, an unknown upgrade type, a
//     lower level without SAFE_DOWNGRADE or UNSAFE_DOWNGRADE, or a higher
//     one with a downgrade type is refused, in FeatureControlManager's
//     words. (Strait's nodes run one binary, so the local range is every
//     node's.)
//   - ValidateOnly checks without writing. Otherwise one FeatureLevelRecord
//     per update is written, all in one batch; the last update of a feature
//     named twice wins, as Kafka's map of updates does.
//   - On success v0-1 answer each feature with no error; v2 has no
//     per-feature results.
//
// Version notes:
//   - v0: AllowDowngrade (true is SAFE_DOWNGRADE)
//   - v1: UpgradeType, ValidateOnly
//   - v2: no per-feature results
func (c featureControl) UpdateFeatures(ctx context.Context, req *kmsg.UpdateFeaturesRequest) *kmsg.UpdateFeaturesResponse {
	resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	var failed *apiError
	err := c.write(ctx, func(img *Image) []Record {
		records, e := c.featureRecords(img, req)
		if failed = e; e != nil || req.ValidateOnly {
			return nil
		}
		return records
	})
	if failed == nil {
		failed = writeError(err)
	} else {
		failed.msg = "The update failed for all features since the following feature had an error: " + failed.msg
	}
	if failed != nil {
		resp.ErrorCode, resp.ErrorMessage = failed.code, failed.message()
		return resp
	}
	if req.Version <= 1 {
		for _, u := range req.FeatureUpdates {
			r := kmsg.NewUpdateFeaturesResponseResult()
			r.Feature = u.Feature
			resp.Results = append(resp.Results, r)
		}
	}
	return resp
}

// featureRecords checks the updates of req against img and returns their
// records, or the first update's error.
func (c featureControl) featureRecords(img *Image, req *kmsg.UpdateFeaturesRequest) ([]Record, *apiError) {
	// The last update of a feature wins; the records keep the request's
	// order of first mention.
	last := map[string]int{}
	var order []string
	for i, u := range req.FeatureUpdates {
		if _, seen := last[u.Feature]; !seen {
			order = append(order, u.Feature)
		}
		last[u.Feature] = i
	}
	var records []Record
	for _, name := range order {
		u := req.FeatureUpdates[last[name]]
		upgradeType := u.UpgradeType
		if req.Version == 0 {
			upgradeType = upgradeTypeUpgrade
			if u.AllowDowngrade {
				upgradeType = upgradeTypeSafeDowngrade
			}
		}
		if reason := c.refuseFeatureUpdate(img, name, u.MaxVersionLevel, upgradeType); reason != "" {
			return nil, errorf(kerr.InvalidUpdateVersion, "Invalid update version %d for feature %s. %s", u.MaxVersionLevel, name, reason)
		}
		records = append(records, &FeatureLevelRecord{Name: name, FeatureLevel: u.MaxVersionLevel})
	}
	return records, nil
}

// refuseFeatureUpdate is FeatureControlManager.updateFeature's checks: why
// the update may not be made, or "".
func (c featureControl) refuseFeatureUpdate(img *Image, name string, level int16, upgradeType int8) string {
	if upgradeType != upgradeTypeUpgrade && upgradeType != upgradeTypeSafeDowngrade && upgradeType != upgradeTypeUnsafeDowngrade {
		return "The controller does not support the given upgrade type."
	}
	if level < 0 {
		return "A feature version cannot be less than 0."
	}
	// QuorumFeatures.reasonNotSupported; an unknown feature's range is
	// Kafka's DISABLED, 0-0.
	rng, known := supportedFeatures[name]
	who := fmt.Sprintf("Local controller %d", c.cfg.NodeID)
	switch {
	case !known || rng.Max == 0 && level != 0:
		return who + " does not support this feature."
	case level < rng.Min || level > rng.Max:
		return fmt.Sprintf("%s only supports versions %d-%d", who, rng.Min, rng.Max)
	}
	current := img.FeatureLevel(name)
	if level < current && upgradeType == upgradeTypeUpgrade {
		return "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."
	}
	if level > current && upgradeType != upgradeTypeUpgrade {
		return "Can't downgrade to a newer version."
	}
	if name == FeatureKRaftVersion && level < current {
		// A dynamic voter set cannot become static again (Kafka
		// upgrades kraft.version only).
		return "Downgrading kraft.version is not supported."
	}
	return ""
}
