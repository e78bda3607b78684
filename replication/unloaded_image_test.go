package replication

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A restarting node serves requests before its replica manager took its
// first image (the broker gives it one once the node caught up with the
// metadata log). Until then it cannot tell that a topic does not exist,
// so every partition answers NOT_LEADER_OR_FOLLOWER, which clients retry
// elsewhere: librdkafka 2.0 takes UNKNOWN_TOPIC_OR_PARTITION from
// ListOffsets as final, and kcat -G then exits, a group member lost in
// the middle of a rolling restart.
func TestPartitionsBeforeTheFirstImageAnswerNotLeader(t *testing.T) {
	h := newHarness(t)
	want := kerr.NotLeaderForPartition.Code
	ctx := context.Background()

	earliest := h.rm.ListOffsets(ctx, listOffsetsReq(5, -1, 0, "t", lop(0, -2))).Topics[0].Partitions[0]
	fetched := decodeFetch(t, h.fetch(fetchReq(11, fp("t", 0, 0))))
	produced := h.produce(-1, "t", 0, h.batch("v", 1))
	epochs := h.rm.OffsetForLeaderEpoch(ctx, offsetForEpochReq("t", 0, -1, 0)).Topics[0].Partitions[0]
	for what, code := range map[string]int16{
		"ListOffsets":          earliest.ErrorCode,
		"Fetch":                fetched[0].ErrorCode,
		"Produce":              produced.ErrorCode,
		"OffsetForLeaderEpoch": epochs.ErrorCode,
	} {
		if code != want {
			t.Errorf("%s before the first image: error %d (%v), want NOT_LEADER_OR_FOLLOWER", what, code, kerr.ErrorForCode(code))
		}
	}

	// Once the manager has an image, a topic it lacks is unknown.
	h.createTopic("other", topicSpec{})
	after := h.rm.ListOffsets(ctx, listOffsetsReq(5, -1, 0, "t", lop(0, -2))).Topics[0].Partitions[0]
	if after.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("ListOffsets for a topic the image lacks: error %d, want UNKNOWN_TOPIC_OR_PARTITION", after.ErrorCode)
	}
}
