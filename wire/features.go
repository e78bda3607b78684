package wire

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// featureGates are the API keys a feature level turns on (KIP-584): below
// its level a key is neither advertised in ApiVersions nor served, as Kafka
// 4.x serves KIP-848's consumer group APIs only with group.version 1
// (KafkaApis.isConsumerGroupProtocolEnabled).
var featureGates = map[int16]struct {
	feature string
	level   int16
}{
	68: {raftmeta.FeatureGroup, 1}, // ConsumerGroupHeartbeat
	69: {raftmeta.FeatureGroup, 1}, // ConsumerGroupDescribe
}

// featureEnabled reports whether the finalized features allow key.
func (s *Server) featureEnabled(key int16) bool {
	g, gated := featureGates[key]
	return !gated || s.svc.Cluster == nil || s.svc.Cluster.Image().FeatureLevel(g.feature) >= g.level
}

// advertisedKeys is the server's ApiVersions list less the keys the
// finalized features turn off.
func (s *Server) advertisedKeys() []kmsg.ApiVersionsResponseApiKey {
	keys := s.apis.versions
	if !slices.ContainsFunc(keys, func(k kmsg.ApiVersionsResponseApiKey) bool { return !s.featureEnabled(k.ApiKey) }) {
		return keys // immutable; encoding only reads it
	}
	return slices.DeleteFunc(slices.Clone(keys), func(k kmsg.ApiVersionsResponseApiKey) bool { return !s.featureEnabled(k.ApiKey) })
}

// setFeatures fills ApiVersions v3+'s feature fields: the ranges this node
// supports and the finalized levels above 0, at the epoch of the image
// they come from (its offset, as Kafka's FinalizedFeaturesEpoch is the
// metadata offset). Below v4 a range starting at 0 is left out: older
// clients cannot read it (KAFKA-17492, ApiVersionsResponse).
func (s *Server) setFeatures(resp *kmsg.ApiVersionsResponse) {
	if resp.Version < 3 || s.svc.Cluster == nil {
		return
	}
	supported := raftmeta.SupportedFeatures()
	for _, name := range slices.Sorted(maps.Keys(supported)) {
		r := supported[name]
		if resp.Version < 4 && r.Min == 0 {
			continue
		}
		f := kmsg.NewApiVersionsResponseSupportedFeature()
		f.Name, f.MinVersion, f.MaxVersion = name, r.Min, r.Max
		resp.SupportedFeatures = append(resp.SupportedFeatures, f)
	}
	img := s.svc.Cluster.Image()
	finalized := img.FinalizedFeatures()
	for _, name := range slices.Sorted(maps.Keys(finalized)) {
		f := kmsg.NewApiVersionsResponseFinalizedFeature()
		f.Name, f.MinVersionLevel, f.MaxVersionLevel = name, finalized[name], finalized[name]
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, f)
	}
	resp.FinalizedFeaturesEpoch = int64(img.Offset)
}
