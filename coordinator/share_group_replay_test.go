package coordinator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/records"
)

// dumpShareGroups renders every share group of every shard: what their
// records hold (not the replay timestamps, nor the metadata refresh
// notes, which are soft state).
func (h *harness) dumpShareGroups() string {
	var b strings.Builder
	for _, s := range h.c.allShards() {
		s.mu.Lock()
		for _, id := range sortedKeysOf(s.shareGroups) {
			g := s.shareGroups[id]
			fmt.Fprintf(&b, "group %s epoch %d hash %d assignment epoch %d\n", g.id, g.groupEpoch, g.metadataHash, g.assignmentEpoch)
			for _, mid := range g.sortedMemberIDs() {
				m := g.members[mid]
				fmt.Fprintf(&b, "  member %s rack %q client %q host %q topics %v state %s epoch %d prev %d assigned %s\n",
					m.id, m.rackID, m.clientID, m.clientHost, m.subscribedTopicNames, m.state, m.memberEpoch, m.previousMemberEpoch, h.named(m.assigned))
			}
			for _, mid := range sortedKeysOf(g.target) {
				fmt.Fprintf(&b, "  target %s %s\n", mid, h.named(g.target[mid]))
			}
			p := g.partitions
			fmt.Fprintf(&b, "  partitions exists %t initializing %s initialized %s deleting %d\n",
				p.exists, initTopicsString(p.initializing), initTopicsString(p.initialized), len(p.deleting))
		}
		s.mu.Unlock()
	}
	return b.String()
}

func initTopicsString(m map[topicID]shareInitTopic) string {
	var parts []string
	for _, t := range sortedTopicIDs(m) {
		parts = append(parts, fmt.Sprintf("%s:%v", m[t].name, m[t].partitions))
	}
	return fmt.Sprint(parts)
}

// Reloading the partition (a restart, or another broker taking the
// coordinator over) rebuilds exactly the share groups that were served,
// and their members carry on with their epochs; their sessions restart at
// the load.
func TestShareGroupReplayEqualsServedState(t *testing.T) {
	h, fp := newShareHarness(t)
	rack := "rack-a"
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version = 1
	req.GroupID, req.MemberID, req.MemberEpoch, req.RackID, req.SubscribedTopicNames = "sg", "a", 0, &rack, []string{"foo", "bar"}
	wantCode(t, "a joins", h.c.ShareGroupHeartbeat(clientCtx("cli-a"), req).ErrorCode, 0)
	h.waitInitialized("sg", "[bar:[0 1] foo:[0 1 2]]")
	ea := h.shareOK("sg", "a", 1, nil).MemberEpoch
	eb := h.shareOK("sg", "b", 0, []string{"foo"}).MemberEpoch
	ec := h.shareOK("sg", "c", 0, []string{"bar"}).MemberEpoch
	ea = h.shareOK("sg", "a", ea, nil).MemberEpoch
	h.shareOK("sg", "c", -1, nil)
	eb = h.shareOK("sg", "b", eb, nil).MemberEpoch
	_ = ec

	// A second group, deleted: its tombstones must not bring it back.
	h.shareOK("gone", "x", 0, []string{"foo"})
	h.waitInitialized("gone", "[foo:[0 1 2]]")
	h.shareOK("gone", "x", -1, nil)
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"gone"}
	wantCode(t, "delete gone", h.c.DeleteGroups(context.Background(), del).Groups[0].ErrorCode, 0)
	// A third, with a topic whose state is being deleted.
	h.shareOK("offs", "y", 0, []string{"bar"})
	h.waitInitialized("offs", "[bar:[0 1]]")
	h.shareOK("offs", "y", -1, nil)
	fp.mu.Lock()
	fp.deleteErr = kerrTimeout
	fp.mu.Unlock()
	dso := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	dso.GroupID = "offs"
	dso.Topics = []kmsg.DeleteShareGroupOffsetsRequestTopic{{Topic: "bar"}}
	if code := h.c.DeleteShareGroupOffsets(context.Background(), dso).ErrorCode; code == 0 {
		t.Fatalf("DeleteShareGroupOffsets with a failing persister succeeded")
	}

	h.drainWrites()
	before := h.dumpShareGroups()
	if !strings.Contains(before, "group sg") || strings.Contains(before, "group gone") || !strings.Contains(before, "group offs") ||
		!strings.Contains(before, "deleting 1") || strings.Contains(before, "member c") {
		t.Fatalf("state before the reload:\n%s", before)
	}
	h.restart()
	if after := h.dumpShareGroups(); after != before {
		t.Fatalf("reloaded share groups differ\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// The members carry on: a moves to the group's epoch as it would
	// have without the reload (b's last heartbeat moved the group on),
	// and the reload itself bumps nothing.
	var groupEpoch int32
	h.withShareGroup("sg", func(g *shareGroup) { groupEpoch = g.groupEpoch })
	resp := h.shareOK("sg", "a", ea, nil)
	if resp.MemberEpoch != groupEpoch || groupEpoch <= ea {
		t.Fatalf("a's epoch after reload %d, group epoch %d, a's before %d", resp.MemberEpoch, groupEpoch, ea)
	}
	ea = resp.MemberEpoch
	if resp = h.shareOK("sg", "a", ea, nil); resp.MemberEpoch != ea {
		t.Fatalf("a's epoch moved again after reload: %d", resp.MemberEpoch)
	}
	// b stays silent and is fenced one session after the load.
	h.advance(44 * time.Second)
	h.shareOK("sg", "a", ea, nil)
	if n := h.groupShareMembers("sg"); n != 2 {
		t.Fatalf("%d members 44s after the load", n)
	}
	h.advance(time.Second + time.Millisecond)
	if n := h.groupShareMembers("sg"); n != 1 {
		t.Fatalf("%d members after b's session expired post-reload", n)
	}
	_ = eb
}

// The records' bytes decode back to what was encoded, for every type,
// values and tombstones.
func TestShareRecordsRoundTrip(t *testing.T) {
	foo := topicID{2}
	m := newShareMember("m1")
	m.rackID, m.clientID, m.clientHost, m.subscribedTopicNames = "r", "cli", "/h", []string{"a", "b"}
	m.memberEpoch, m.previousMemberEpoch, m.assigned = 7, 6, assignment{foo: {0, 2}}
	p := newSharePartitionsState()
	p.initializing[foo] = shareInitTopic{name: "foo", partitions: []int32{1}}
	p.initialized[topicID{3}] = shareInitTopic{name: "bar", partitions: []int32{0, 1}}
	p.deleting[topicID{4}] = true
	for _, r := range []shareRecord{
		newShareGroupEpochRecord("g", 5, -42),
		newShareMemberSubscriptionRecord("g", m),
		newShareTargetAssignmentRecord("g", "m1", assignment{foo: {1}}),
		newShareTargetAssignmentEpochRecord("g", 5),
		newShareCurrentAssignmentRecord("g", m),
		{typ: records.TypeShareGroupStatePartitionMetadata, group: "g", partitions: p, topicNames: map[topicID]string{{4}: "old"}},
		shareTombstone(records.TypeShareGroupMemberMetadata, "g", "m1"),
		shareTombstone(records.TypeShareGroupMetadata, "g", ""),
	} {
		enc := r.encode()
		d, err := decodeRecord(enc.key, enc.value, enc.value == nil)
		if err != nil || d.share == nil {
			t.Fatalf("%s: decoding: %v", r.typ, err)
		}
		got := *d.share
		if got.typ != r.typ || got.group != r.group || got.member != r.member || got.tombstone != r.tombstone ||
			got.epoch != r.epoch || got.metadataHash != r.metadataHash || !equalAssignments(got.target, r.target) && !r.tombstone {
			t.Fatalf("%s: decoded %+v, encoded %+v", r.typ, got, r)
		}
		switch r.typ {
		case records.TypeShareGroupMemberMetadata:
			if !r.tombstone && !got.m.sameSubscription(&r.m) {
				t.Fatalf("subscription: %+v vs %+v", got.m, r.m)
			}
		case records.TypeShareGroupCurrentMemberAssignment:
			if !got.m.sameAssignmentState(&r.m) {
				t.Fatalf("assignment: %+v vs %+v", got.m, r.m)
			}
		case records.TypeShareGroupStatePartitionMetadata:
			if initTopicsString(got.partitions.initializing) != initTopicsString(p.initializing) ||
				initTopicsString(got.partitions.initialized) != initTopicsString(p.initialized) ||
				!got.partitions.deleting[topicID{4}] || got.topicNames[topicID{4}] != "old" {
				t.Fatalf("partitions: %+v", got.partitions)
			}
		}
	}
}

// Bad bytes in a share record are an error, never a panic.
func TestShareRecordsBadInput(t *testing.T) {
	good := newShareCurrentAssignmentRecord("g", newShareMember("m")).encode()
	for i := range len(good.value) {
		if _, err := decodeRecord(good.key, good.value[:i], false); err == nil {
			t.Fatalf("a value cut at %d bytes decoded", i)
		}
	}
	for i := 2; i < len(good.key); i++ {
		if _, err := decodeRecord(good.key[:i], good.value, false); err == nil {
			t.Fatalf("a key cut at %d bytes decoded", i)
		}
	}
	bad := append([]byte{}, good.value...)
	bad[1] = 9 // value version 9
	if _, err := decodeRecord(good.key, bad, false); err == nil {
		t.Fatalf("value version 9 decoded")
	}
}

// Kafka 4.0's ShareGroupPartitionMetadata (type 9) is skipped as unknown,
// as Kafka 4.1's loader skips it.
func TestShareGroupPartitionMetadataIsSkipped(t *testing.T) {
	key := records.ShareGroupPartitionMetadataKey("g")
	if _, err := decodeRecord(key.AppendTo(nil), []byte{0, 0, 1, 0}, false); err == nil || !isUnknownRecordType(err) {
		t.Fatalf("type 9: %v, want an unknown record type", err)
	}
}
