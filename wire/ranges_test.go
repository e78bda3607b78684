package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafka40Ranges are the version ranges Strait advertises: Apache Kafka 4.0's
// for each API it serves (KIP-896 raised the floors). A change here is a
// change of what clients may send; the test below keeps the registry and
// this table in step.
var kafka40Ranges = map[int16][2]int16{
	0: {3, 12}, 1: {4, 17}, 2: {1, 10}, 3: {0, 12},
	8: {2, 9}, 9: {1, 9}, 10: {0, 6}, 11: {2, 9}, 12: {0, 4}, 13: {0, 5}, 14: {0, 5}, 15: {0, 5}, 16: {0, 5},
	18: {0, 4}, 19: {2, 7}, 20: {1, 6}, 21: {0, 2}, 22: {0, 5}, 23: {2, 4},
	29: {1, 3}, 30: {1, 3}, 31: {1, 3}, 32: {1, 4}, 33: {0, 2}, 35: {1, 4}, 37: {0, 3},
	42: {0, 2}, 43: {0, 2}, 44: {0, 1}, 47: {0, 0}, 60: {0, 1},
}

// expectedRanges is kafka40Ranges with the test stand-ins' ranges on top.
func expectedRanges(standIns ...api) map[int16][2]int16 {
	out := make(map[int16][2]int16, len(kafka40Ranges))
	for k, v := range kafka40Ranges {
		out[k] = v
	}
	for _, a := range standIns {
		out[a.key] = [2]int16{a.min, a.max}
	}
	return out
}

// expectedKeys is expectedRanges as a sorted ApiVersions key list.
func expectedKeys(standIns ...api) []kmsg.ApiVersionsResponseApiKey {
	m := expectedRanges(standIns...)
	var out []kmsg.ApiVersionsResponseApiKey
	for k := int16(0); k < 200; k++ {
		if r, ok := m[k]; ok {
			out = append(out, kmsg.ApiVersionsResponseApiKey{ApiKey: k, MinVersion: r[0], MaxVersion: r[1]})
		}
	}
	return out
}

func TestRegistryMatchesKafka40Ranges(t *testing.T) {
	if len(registry) != len(kafka40Ranges) {
		t.Errorf("registry has %d keys, the table %d", len(registry), len(kafka40Ranges))
	}
	for k, a := range registry {
		if r, ok := kafka40Ranges[k]; !ok || r != [2]int16{a.min, a.max} {
			t.Errorf("%s registered v%d-%d, table says %v (present %t)", kmsg.NameForKey(k), a.min, a.max, r, ok)
		}
	}
}
