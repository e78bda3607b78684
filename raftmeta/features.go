package raftmeta

import (
	"fmt"
	"maps"
	"slices"
)

// Feature flags (KIP-584, KIP-778): the cluster-wide finalized level of
// each feature, changed with UpdateFeatures (controller_features.go) and
// stored in the metadata log as FeatureLevelRecords, as Kafka's
// FeatureControlManager stores them. Clients read the supported ranges
// and the finalized levels in ApiVersions (v3+).

// The features Strait knows, by Kafka 4.x's names.
const (
	FeatureMetadataVersion = "metadata.version"
	FeatureKRaftVersion    = "kraft.version"
	FeatureTransaction     = "transaction.version"
	FeatureGroup           = "group.version"
	FeatureShare           = "share.version"
	FeatureELR             = "eligible.leader.replicas.version"
)

// MetadataVersion4_0IV3 is the level of metadata.version "4.0-IV3", Kafka
// 4.0's release level: the API ranges Strait serves are Kafka 4.0's (and a
// few later ones that no metadata version gates).
const MetadataVersion4_0IV3 int16 = 25

// FeatureRange is the range of levels of a feature this node supports.
type FeatureRange struct{ Min, Max int16 }

// supportedFeatures are the levels Strait can act on, and only those: a
// level that would change what a client sees is supported only if Strait
// behaves as that level says (KIP-584: a client trusts a finalized level).
//   - metadata.version: 4.0-IV3 only. Strait's metadata records are its
//     own, so no other level would mean anything, and Kafka refuses a
//     downgrade that may lose metadata anyway.
//   - kraft.version: 0-1. 1 is KIP-853's dynamic quorum, which Strait's
//     raft quorum is from the start (AddRaftVoter and RemoveRaftVoter,
//     quorum_membership.go): a new cluster starts at 1. At 0 (a static
//     quorum, set explicitly) the voter changes answer UNSUPPORTED_VERSION,
//     as Kafka's, until kafka-features upgrades it; it is never downgraded.
//   - transaction.version: 0-2. Level 2 is KIP-890 part 2: a producer on
//     Produce v12+, TxnOffsetCommit v5+ and EndTxn v5+ sends no
//     AddPartitionsToTxn or AddOffsetsToTxn (the partition leader and the
//     group coordinator add the partitions), and every EndTxn bumps its
//     epoch. A new cluster starts at 2, as Kafka 4.0's kafka-storage
//     format does; the Java 4.x producer and franz-go switch to the new
//     protocol when they see it finalized (a producer started after it
//     is lowered speaks the classic one).
//     Level 1 (flexible __transaction_state values) changes nothing a
//     client sees: the coordinator writes each transaction's values at its
//     client's version.
//   - group.version: 0-1. 1 enables KIP-848 consumer groups
//     (ConsumerGroupHeartbeat and ConsumerGroupDescribe); at 0 they are
//     neither advertised nor served, as in Kafka.
//   - share.version: 1 only. Strait serves KIP-932 share groups and cannot
//     turn them off; 2 (KIP-1191's dead-letter queues) is not served.
//   - eligible.leader.replicas.version: 0 only. Strait has no eligible
//     leader replicas (KIP-966).
var supportedFeatures = map[string]FeatureRange{
	FeatureMetadataVersion: {MetadataVersion4_0IV3, MetadataVersion4_0IV3},
	FeatureKRaftVersion:    {0, 1},
	FeatureTransaction:     {0, 2},
	FeatureGroup:           {0, 1},
	FeatureShare:           {1, 1},
	FeatureELR:             {0, 0},
}

// bootstrapFeatureLevels are the levels of a cluster no FeatureLevelRecord
// has set a feature of: a new cluster, or one formatted before Strait
// stored features (Kafka's bootstrap metadata, which kafka-storage format
// writes; Strait keeps them here so that old logs stay readable).
var bootstrapFeatureLevels = map[string]int16{
	FeatureMetadataVersion: MetadataVersion4_0IV3,
	FeatureKRaftVersion:    1,
	FeatureTransaction:     2,
	FeatureGroup:           1,
	FeatureShare:           1,
}

// SupportedFeatures returns the feature ranges this node supports, by name.
func SupportedFeatures() map[string]FeatureRange { return maps.Clone(supportedFeatures) }

// TransactionVersion2 reports whether transaction.version 2 (KIP-890 part
// 2) is finalized: a transactional Produce v12+ and TxnOffsetCommit v5+
// then add their partitions to the producer's transaction.
func (img *Image) TransactionVersion2() bool { return img.FeatureLevel(FeatureTransaction) >= 2 }

// FeatureLevel is a feature's finalized level: the last FeatureLevelRecord's,
// else its bootstrap level, else 0 (not finalized).
func (img *Image) FeatureLevel(name string) int16 {
	if l, ok := img.Features[name]; ok {
		return l
	}
	return bootstrapFeatureLevels[name]
}

// FinalizedFeatures returns every feature finalized at a level above 0 (how
// Kafka lists them in ApiVersions), by name.
func (img *Image) FinalizedFeatures() map[string]int16 {
	out := map[string]int16{}
	for _, name := range slices.Concat(slices.Collect(maps.Keys(bootstrapFeatureLevels)), slices.Collect(maps.Keys(img.Features))) {
		if l := img.FeatureLevel(name); l > 0 {
			out[name] = l
		}
	}
	return out
}

// FeatureLevelRecordType is Kafka's FeatureLevelRecord apiKey.
const FeatureLevelRecordType RecordType = 12

// FeatureLevelRecord finalizes a feature at a level (Kafka's record of the
// same name). Unlike Kafka, where level 0 removes the feature, the image
// keeps a 0: a feature Strait finalizes at bootstrap (group.version) must
// be able to stay at 0.
type FeatureLevelRecord struct {
	Name         string
	FeatureLevel int16
}

func (*FeatureLevelRecord) Type() RecordType { return FeatureLevelRecordType }
func (*FeatureLevelRecord) Version() int8    { return 0 }

func (r *FeatureLevelRecord) appendTo(b []byte) []byte {
	return appendInt(appendString(b, r.Name), int64(r.FeatureLevel))
}

func decodeFeatureLevel(d *decoder) Record {
	r := &FeatureLevelRecord{Name: d.string()}
	v := d.varint()
	if v < -1<<15 || v > 1<<15-1 {
		d.fail("feature level out of range: %d", v)
		return nil
	}
	r.FeatureLevel = int16(v)
	return r
}

// setFeature replays a FeatureLevelRecord. A level this node does not
// support is refused (FeatureControlManager.replay throws): the controller
// never writes one, so it can only come from a newer node's log.
func (b *builder) setFeature(r *FeatureLevelRecord) error {
	rng, ok := supportedFeatures[r.Name]
	if !ok || r.FeatureLevel < rng.Min || r.FeatureLevel > rng.Max {
		return fmt.Errorf("feature %s level %d is not supported by this node (supported: %v)", r.Name, r.FeatureLevel, supportedFeatures[r.Name])
	}
	features := maps.Clone(b.next.Features)
	if features == nil {
		features = map[string]int16{}
	}
	features[r.Name] = r.FeatureLevel
	b.next.Features = features
	return nil
}

// appendFeatureRecords appends the image's explicitly set feature levels,
// by name (a snapshot keeps what the log set, not the bootstrap levels).
func appendFeatureRecords(out []Record, img *Image) []Record {
	for _, name := range slices.Sorted(maps.Keys(img.Features)) {
		out = append(out, &FeatureLevelRecord{Name: name, FeatureLevel: img.Features[name]})
	}
	return out
}
