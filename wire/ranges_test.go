package wire

import (
	"maps"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// kafka40Ranges are the version ranges Strait advertises: Apache Kafka 4.0's
// for each API it serves (KIP-896 raised the floors), but for
// ListConfigResources, served up to Kafka 4.1's v1 (KIP-1142). A change
// here is a change of what clients may send; the test below keeps the
// registry and this table in step.
var kafka40Ranges = map[int16][2]int16{
	0: {3, 12}, 1: {4, 17}, 2: {1, 10}, 3: {0, 12},
	8: {2, 9}, 9: {1, 9}, 10: {0, 6}, 11: {2, 9}, 12: {0, 4}, 13: {0, 5}, 14: {0, 5}, 15: {0, 5}, 16: {0, 5},
	17: {0, 1}, 18: {0, 4}, 19: {2, 7}, 20: {1, 6}, 21: {0, 2}, 22: {0, 5}, 23: {2, 4}, 27: {1, 1}, 28: {0, 5},
	29: {1, 3}, 30: {1, 3}, 31: {1, 3}, 32: {1, 4}, 33: {0, 2}, 34: {1, 2}, 35: {1, 4}, 36: {0, 2}, 37: {0, 3},
	42: {0, 2}, 43: {0, 2}, 44: {0, 1}, 47: {0, 0}, 48: {0, 1}, 49: {0, 1}, 50: {0, 0}, 51: {0, 0}, 60: {0, 1}, 61: {0, 0}, 68: {0, 1}, 69: {0, 1}, 74: {0, 1},
	57: {0, 2}, // UpdateFeatures (KIP-584)
	75: {0, 0}, // DescribeTopicPartitions (KIP-966)
}

// mirrorRanges are the KIP-1279 mirror RPCs (ours, not Kafka's: DESIGN.md
// §4, raftmeta/mirrormsg), advertised on top of kafka40Ranges only by a server
// with a MirrorService.
var mirrorRanges = map[int16][2]int16{
	9400: {0, 0}, 9401: {0, 0}, 9402: {0, 0}, 9403: {0, 0}, 9404: {0, 0}, 9405: {0, 0},
	9406: {0, 0}, 9407: {0, 0}, 9408: {0, 0}, 9409: {0, 0}, 9411: {0, 0},
	9412: {0, 0}, // Strait's DescribeScramCredentialSecrets
	9414: {0, 0}, // Strait's SyncMirrorGroupOffsets (issue 27)
}

// txnRanges are the transaction coordinator's APIs (KIP-98), advertised
// only by a server with a TransactionService. Kafka 4.0's ranges, but for
// ListTransactions, up to Kafka 4.1's v2.
var txnRanges = map[int16][2]int16{
	24: {0, 5}, 25: {0, 4}, 26: {0, 5}, 65: {0, 0}, 66: {0, 2},
}

// shareCoordinatorRanges are the share coordinator's APIs (KIP-932),
// advertised only by a server with a ShareCoordinatorService: Kafka 4.2's
// ranges (WriteShareGroupState and ReadShareGroupStateSummary v1 are
// KIP-1226's).
var shareCoordinatorRanges = map[int16][2]int16{
	83: {0, 0}, 84: {0, 0}, 85: {0, 1}, 86: {0, 0}, 87: {0, 1},
}

// txnStandIn is a TransactionService for the served checks.
type txnStandIn struct{ TransactionService }

// shareCoordinatorStandIn is a ShareCoordinatorService for the served
// checks.
type shareCoordinatorStandIn struct{ ShareCoordinatorService }

// shareRanges are the share group partition APIs (KIP-932), Kafka 4.2's
// ranges (v0 was Kafka 4.0's early access, gone in 4.1), served only by a
// server with a ShareService and advertised only with AdvertiseShare.
var shareRanges = map[int16][2]int16{
	78: {1, 2}, 79: {1, 2},
}

// shareGroupRanges are the KIP-932 share group APIs, advertised only by a
// server with a ShareGroupService: Kafka 4.1's ShareGroupHeartbeat and
// ShareGroupDescribe (v1, 4.0's early-access v0 removed), Kafka 4.2's
// DescribeShareGroupOffsets (v1: Lag).
var shareGroupRanges = map[int16][2]int16{
	76: {1, 1}, 77: {1, 1}, 90: {0, 1}, 91: {0, 0}, 92: {0, 0},
}

// shareGroupStandIn is a ShareGroupService for the served checks.
type shareGroupStandIn struct{ ShareGroupService }

// quorumRanges are the metadata quorum's admin APIs, advertised only by a
// server with a QuorumService: Kafka 4.0's DescribeQuorum, Kafka 4.1's
// AddRaftVoter (v1: AckWhenCommitted) and RemoveRaftVoter.
var quorumRanges = map[int16][2]int16{
	55: {0, 2}, 80: {0, 1}, 81: {0, 0},
}

// quorumStandIn is a QuorumService for the served checks.
type quorumStandIn struct{ QuorumService }

// expectedRanges is kafka40Ranges with the test stand-ins' ranges on top.
func expectedRanges(standIns ...api) map[int16][2]int16 {
	return expectedRangesFor(false, standIns...)
}

// expectedRangesFor is expectedRanges, plus mirrorRanges for a server
// with a MirrorService.
func expectedRangesFor(mirror bool, standIns ...api) map[int16][2]int16 {
	out := make(map[int16][2]int16, len(kafka40Ranges)+len(mirrorRanges))
	for k, v := range kafka40Ranges {
		out[k] = v
	}
	if mirror {
		for k, v := range mirrorRanges {
			out[k] = v
		}
	}
	for _, a := range standIns {
		out[a.key] = [2]int16{a.min, a.max}
	}
	return out
}

// expectedKeys is expectedRanges as a sorted ApiVersions key list.
func expectedKeys(standIns ...api) []kmsg.ApiVersionsResponseApiKey {
	return expectedKeysFor(false, standIns...)
}

// expectedKeysFor is expectedRangesFor as a sorted ApiVersions key list.
func expectedKeysFor(mirror bool, standIns ...api) []kmsg.ApiVersionsResponseApiKey {
	m := expectedRangesFor(mirror, standIns...)
	var out []kmsg.ApiVersionsResponseApiKey
	for _, k := range slices.Sorted(maps.Keys(m)) {
		r := m[k]
		out = append(out, kmsg.ApiVersionsResponseApiKey{ApiKey: k, MinVersion: r[0], MaxVersion: r[1]})
	}
	return out
}

// The registry holds exactly Kafka 4.0's ranges for the keys every server
// serves, and exactly mirrorRanges for the keys served only with a
// MirrorService.
func TestRegistryMatchesKafka40Ranges(t *testing.T) {
	if len(registry) != len(kafka40Ranges)+len(mirrorRanges)+len(txnRanges)+len(shareCoordinatorRanges)+len(shareRanges)+len(shareGroupRanges)+len(reassignRanges)+len(quorumRanges) {
		t.Errorf("registry has %d keys, the tables %d + %d + %d + %d + %d + %d + %d + %d", len(registry),
			len(kafka40Ranges), len(mirrorRanges), len(txnRanges), len(shareCoordinatorRanges), len(shareRanges), len(shareGroupRanges), len(reassignRanges), len(quorumRanges))
	}
	for k, a := range registry {
		table, which := kafka40Ranges, "Kafka 4.0"
		if a.served != nil {
			table, which = mirrorRanges, "mirror"
			with := Services{Mirror: &mirrorStandIn{}}
			if _, ok := txnRanges[k]; ok {
				table, which = txnRanges, "transactions"
				with = Services{Transactions: txnStandIn{}}
			}
			if _, ok := shareCoordinatorRanges[k]; ok {
				table, which = shareCoordinatorRanges, "share coordinator"
				with = Services{ShareCoordinator: shareCoordinatorStandIn{}}
			}
			if _, ok := shareRanges[k]; ok {
				table, which = shareRanges, "share"
				with = Services{Share: shareStandIn{}}
			}
			if _, ok := shareGroupRanges[k]; ok {
				table, which = shareGroupRanges, "share groups"
				with = Services{ShareGroups: shareGroupStandIn{}}
			}
			if _, ok := reassignRanges[k]; ok {
				table, which = reassignRanges, "reassignment"
				with = Services{Reassignments: reassignStandIn{}}
			}
			if _, ok := quorumRanges[k]; ok {
				table, which = quorumRanges, "quorum"
				with = Services{Quorum: quorumStandIn{}}
			}
			if a.served(Services{}) || !a.served(with) {
				t.Errorf("%s: served without its service, or not with it", NameForKey(k))
			}
		}
		_, share := shareRanges[k]
		if advertised := a.advertised == nil || a.advertised(Services{}); advertised == share {
			t.Errorf("%s: advertised by default %t", NameForKey(k), advertised)
		}
		if r, ok := table[k]; !ok || r != [2]int16{a.min, a.max} {
			t.Errorf("%s registered v%d-%d, the %s table says %v (present %t)", NameForKey(k), a.min, a.max, which, r, ok)
		}
	}
	// Every mirror RPC mirrormsg defines is served, within its schema's
	// versions, but the internal ones (sent over the controller channel
	// only), which are not.
	if len(mirrorRanges) != len(servedMirrorAPIs()) {
		t.Errorf("%d mirror ranges for %d served mirror APIs", len(mirrorRanges), len(servedMirrorAPIs()))
	}
	for _, m := range mirrormsg.APIs {
		if m.Internal {
			if _, ok := registry[m.Key]; ok {
				t.Errorf("%s is internal but registered", m.Name)
			}
			continue
		}
		if r, ok := mirrorRanges[m.Key]; !ok || r[0] < m.Min || r[1] > m.Max {
			t.Errorf("%s: served %v (present %t), schema v%d-%d", m.Name, r, ok, m.Min, m.Max)
		}
	}
}
