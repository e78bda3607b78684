package mirrormsg

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A mirror's group offset sync writes into a destination group that has
// live members (mirror.consumer.offsets.sync.active.groups=forward-only,
// issue 27) with an ordinary OffsetCommit (v8+, flexible) carrying Strait's
// tagged field ForwardOnlyCommitTag. Kafka refuses a commit without a
// member and generation to a group with members; with the tag the group
// coordinator instead takes each partition's offset only if it is greater
// than the partition's committed offset, checked and written under the
// coordinator's lock (a compare-and-set, so a consumer's own commit racing
// the sync is never overwritten by a smaller one). A partition left as it
// was answers error 0 with ForwardOnlyKeptTag set to the committed offset
// it kept.
//
// Kafka brokers ignore unknown tags: sent to one, the commit is a plain
// member-less commit, refused for a group with members. Strait takes the
// tag only from a principal with CLUSTER_ACTION on the cluster (the
// inter-broker principal the syncer uses). The tag numbers are far above
// any Kafka uses.
const (
	// ForwardOnlyCommitTag is OffsetCommitRequest's tag: one byte, 1.
	ForwardOnlyCommitTag uint32 = 0x5354_0001
	// ForwardOnlyKeptTag is OffsetCommitResponseTopicPartition's tag:
	// the committed offset (int64, big endian) kept instead of the one
	// asked for.
	ForwardOnlyKeptTag uint32 = 0x5354_0002
)

// SetForwardOnly marks req as a forward-only commit; it needs version 8+.
func SetForwardOnly(req *kmsg.OffsetCommitRequest) {
	req.UnknownTags.Set(ForwardOnlyCommitTag, []byte{1})
}

// IsForwardOnly reports whether req is a forward-only commit.
func IsForwardOnly(req *kmsg.OffsetCommitRequest) bool {
	if !req.IsFlexible() {
		return false
	}
	forward := false
	req.UnknownTags.Each(func(key uint32, val []byte) {
		if key == ForwardOnlyCommitTag && len(val) == 1 && val[0] == 1 {
			forward = true
		}
	})
	return forward
}

// SetKept records on p that the commit kept committed offset kept.
func SetKept(p *kmsg.OffsetCommitResponseTopicPartition, kept int64) {
	p.UnknownTags.Set(ForwardOnlyKeptTag, binary.BigEndian.AppendUint64(nil, uint64(kept)))
}

// Kept returns the committed offset a forward-only commit kept for p, and
// false if it wrote p's offset (or p is not a forward-only answer).
func Kept(p *kmsg.OffsetCommitResponseTopicPartition) (int64, bool) {
	var kept int64
	ok := false
	p.UnknownTags.Each(func(key uint32, val []byte) {
		if key == ForwardOnlyKeptTag && len(val) == 8 {
			kept, ok = int64(binary.BigEndian.Uint64(val)), true
		}
	})
	return kept, ok
}
