package coordinator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// emptyShareGroup makes group an empty share group whose state for
// topics' partitions is initialized.
func (h *harness) emptyShareGroup(group string, topics []string, initialized string) {
	h.t.Helper()
	h.shareOK(group, "m", 0, topics)
	h.waitInitialized(group, initialized)
	h.shareOK(group, "m", -1, nil)
	h.drainWrites()
}

func (h *harness) deleteGroups(ids ...string) map[string]int16 {
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Groups = ids
	out := map[string]int16{}
	for _, g := range h.c.DeleteGroups(context.Background(), req).Groups {
		out[g.Group] = g.ErrorCode
	}
	return out
}

func TestDeleteShareGroup(t *testing.T) {
	h, fp := newShareHarness(t)
	h.shareOK("busy", "m", 0, []string{"foo"})
	h.emptyShareGroup("sg", []string{"foo", "bar"}, "[bar:[0 1] foo:[0 1 2]]")

	codes := h.deleteGroups("busy", "sg", "nosuch")
	wantCode(t, "non-empty share group", codes["busy"], nonEmptyGroup)
	wantCode(t, "empty share group", codes["sg"], 0)
	wantCode(t, "missing group", codes["nosuch"], groupIDNotFound)
	dels := fp.deleteCalls()
	if len(dels) != 1 || dels[0].group != "sg" || len(dels[0].parts) != 5 {
		t.Fatalf("persister deletes: %+v", dels)
	}
	if n := h.groupShareMembers("sg"); n != -1 {
		t.Fatalf("the deleted group is still there")
	}
	if _, ok := fp.startOffset("sg", h.sp("foo", 0)); ok {
		t.Fatalf("the deleted group's share state is still there")
	}
	h.restart()
	if n := h.groupShareMembers("sg"); n != -1 {
		t.Fatalf("the deleted group came back on reload")
	}
	// The id is free for any group type again.
	h.commit(9, "sg", "", -1, map[string]map[int32]int64{"foo": {0: 1}})
	if offs, code := h.fetchAll("sg"); code != 0 || offs["foo/0"] == "" {
		t.Fatalf("a classic group on the deleted share group's id: %v %s", offs, errName(code))
	}

	// The share coordinator fails: the group stays, its state deleting,
	// and a later DeleteGroups retries it.
	h.emptyShareGroup("kept", []string{"bar"}, "[bar:[0 1]]")
	fp.mu.Lock()
	fp.deleteErr = kerr.CoordinatorLoadInProgress
	fp.mu.Unlock()
	wantCode(t, "delete with a failing share coordinator", h.deleteGroups("kept")["kept"], kerr.CoordinatorLoadInProgress.Code)
	h.withShareGroup("kept", func(g *shareGroup) {
		if g == nil || len(g.partitions.deleting) != 1 || len(g.partitions.initialized) != 0 {
			t.Fatalf("kept group after the failed delete: %+v", g)
		}
	})
	fp.mu.Lock()
	fp.deleteErr = nil
	fp.mu.Unlock()
	wantCode(t, "delete retried", h.deleteGroups("kept")["kept"], 0)
	dels = fp.deleteCalls()
	if last := dels[len(dels)-1]; last.group != "kept" || len(last.parts) != 2 {
		t.Fatalf("retried delete: %+v", last)
	}
}

func alterReq(group string, offsets map[string]map[int32]int64) *kmsg.AlterShareGroupOffsetsRequest {
	req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	req.GroupID = group
	for _, topic := range sortedKeys(offsets) {
		rt := kmsg.NewAlterShareGroupOffsetsRequestTopic()
		rt.Topic = topic
		for _, p := range sortedKeys(offsets[topic]) {
			rt.Partitions = append(rt.Partitions, kmsg.AlterShareGroupOffsetsRequestTopicPartition{Partition: p, StartOffset: offsets[topic][p]})
		}
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func alterCodes(resp *kmsg.AlterShareGroupOffsetsResponse) string {
	var out []string
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out = append(out, fmt.Sprintf("%s/%d:%s", t.Topic, p.Partition, codeName(p.ErrorCode)))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestAlterShareGroupOffsets(t *testing.T) {
	h, fp := newShareHarness(t)
	ctx := context.Background()
	h.shareOK("busy", "m", 0, []string{"foo"})
	wantCode(t, "alter a non-empty group", h.c.AlterShareGroupOffsets(ctx, alterReq("busy", map[string]map[int32]int64{"foo": {0: 5}})).ErrorCode, nonEmptyGroup)
	// Kafka creates a share group that is not there (empty, so alterable).
	resp := h.c.AlterShareGroupOffsets(ctx, alterReq("created", map[string]map[int32]int64{"foo": {0: 5}}))
	wantCode(t, "alter a missing group", resp.ErrorCode, 0)
	if got := alterCodes(resp); got != "foo/0:NONE" {
		t.Fatalf("alter a missing group: %s", got)
	}
	if off, ok := fp.startOffset("created", h.sp("foo", 0)); !ok || off != 5 {
		t.Fatalf("the created group's state: foo/0 at %d (%t), want 5", off, ok)
	}
	h.withShareGroup("created", func(g *shareGroup) {
		if !g.isEmpty() || g.groupEpoch != 0 {
			t.Fatalf("created group: empty %t epoch %d", g.isEmpty(), g.groupEpoch)
		}
	})
	h.commit(9, "classic", "", -1, map[string]map[int32]int64{"foo": {0: 1}})
	wantCode(t, "alter a classic group", h.c.AlterShareGroupOffsets(ctx, alterReq("classic", map[string]map[int32]int64{"foo": {0: 5}})).ErrorCode, groupIDNotFound)
	wantCode(t, "alter without group id", h.c.AlterShareGroupOffsets(ctx, alterReq("", nil)).ErrorCode, invalidGroupID)

	h.emptyShareGroup("sg", []string{"foo"}, "[foo:[0 1 2]]")
	var epoch int32
	h.withShareGroup("sg", func(g *shareGroup) { epoch = g.groupEpoch })
	resp = h.c.AlterShareGroupOffsets(ctx, alterReq("sg", map[string]map[int32]int64{
		"foo": {0: 10, 5: 3}, "bar": {1: 7}, "nosuch": {0: 1},
	}))
	wantCode(t, "alter", resp.ErrorCode, 0)
	if got := alterCodes(resp); got != "bar/1:NONE foo/0:NONE foo/5:UNKNOWN_TOPIC_OR_PARTITION nosuch/0:UNKNOWN_TOPIC_OR_PARTITION" {
		t.Fatalf("alter codes: %s", got)
	}
	for _, rt := range resp.Topics {
		if rt.Topic != "nosuch" && rt.TopicID != h.topicIDOf(rt.Topic) {
			t.Fatalf("topic %s answered with id %x", rt.Topic, rt.TopicID)
		}
	}
	calls := fp.initCalls()
	last := calls[len(calls)-1]
	if last.group != "sg" || last.epoch != epoch || len(last.parts) != 2 {
		t.Fatalf("alter's initialize: %+v (group epoch %d)", last, epoch)
	}
	if off, _ := fp.startOffset("sg", h.sp("foo", 0)); off != 10 {
		t.Fatalf("foo-0 starts at %d", off)
	}
	if off, _ := fp.startOffset("sg", h.sp("bar", 1)); off != 7 {
		t.Fatalf("bar-1 starts at %d", off)
	}
	h.waitInitialized("sg", "[bar:[1] foo:[0 1 2]]")

	// A partition the share coordinator refuses answers its error and
	// stays initializing; a failed call fails every partition.
	fp.mu.Lock()
	fp.initPartErr = map[SharePartitionID]error{h.sp("foo", 1): kerr.FencedStateEpoch}
	fp.mu.Unlock()
	resp = h.c.AlterShareGroupOffsets(ctx, alterReq("sg", map[string]map[int32]int64{"foo": {1: 4, 2: 4}}))
	if got := alterCodes(resp); resp.ErrorCode != 0 || got != "foo/1:FENCED_STATE_EPOCH foo/2:NONE" {
		t.Fatalf("partial failure: %s %s", errName(resp.ErrorCode), got)
	}
	fp.mu.Lock()
	fp.initPartErr = nil
	fp.initErr = []error{kerr.CoordinatorNotAvailable}
	fp.mu.Unlock()
	resp = h.c.AlterShareGroupOffsets(ctx, alterReq("sg", map[string]map[int32]int64{"foo": {2: 9}}))
	if got := alterCodes(resp); resp.ErrorCode != kerr.CoordinatorNotAvailable.Code || got != "foo/2:COORDINATOR_NOT_AVAILABLE" {
		t.Fatalf("failed call: %s %s", errName(resp.ErrorCode), got)
	}
}

func deleteOffsetsReq(group string, topics ...string) *kmsg.DeleteShareGroupOffsetsRequest {
	req := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	req.GroupID = group
	for _, t := range topics {
		req.Topics = append(req.Topics, kmsg.DeleteShareGroupOffsetsRequestTopic{Topic: t})
	}
	return req
}

func deleteOffsetsCodes(resp *kmsg.DeleteShareGroupOffsetsResponse) string {
	var out []string
	for _, t := range resp.Topics {
		out = append(out, t.Topic+":"+codeName(t.ErrorCode))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestDeleteShareGroupOffsets(t *testing.T) {
	h, fp := newShareHarness(t)
	ctx := context.Background()
	h.shareOK("busy", "m", 0, []string{"foo"})
	wantCode(t, "non-empty group", h.c.DeleteShareGroupOffsets(ctx, deleteOffsetsReq("busy", "foo")).ErrorCode, nonEmptyGroup)
	wantCode(t, "missing group", h.c.DeleteShareGroupOffsets(ctx, deleteOffsetsReq("nosuch", "foo")).ErrorCode, groupIDNotFound)

	h.emptyShareGroup("sg", []string{"foo"}, "[foo:[0 1 2]]")
	resp := h.c.DeleteShareGroupOffsets(ctx, deleteOffsetsReq("sg", "foo", "bar", "nosuch"))
	if resp.ErrorCode != 0 || deleteOffsetsCodes(resp) != "bar:UNKNOWN_TOPIC_OR_PARTITION foo:NONE nosuch:UNKNOWN_TOPIC_OR_PARTITION" {
		t.Fatalf("delete offsets: %s %s", errName(resp.ErrorCode), deleteOffsetsCodes(resp))
	}
	for _, rt := range resp.Topics {
		if rt.Topic == "foo" && rt.TopicID != h.topicIDOf("foo") {
			t.Fatalf("foo answered with id %x", rt.TopicID)
		}
		if rt.Topic == "bar" && deref(rt.ErrorMessage) != "There is no offset information to delete." {
			t.Fatalf("bar's message %q", deref(rt.ErrorMessage))
		}
	}
	dels := fp.deleteCalls()
	if len(dels) != 1 || len(dels[0].parts) != 3 {
		t.Fatalf("persister deletes: %+v", dels)
	}
	h.withShareGroup("sg", func(g *shareGroup) {
		if len(g.partitions.initialized) != 0 || len(g.partitions.deleting) != 0 {
			t.Fatalf("after deleting foo's offsets: %+v", g.partitions)
		}
	})

	// The share coordinator fails: foo stays deleting, and is retried.
	h.emptyShareGroup("sg2", []string{"foo"}, "[foo:[0 1 2]]")
	fp.mu.Lock()
	fp.partDelErr = map[SharePartitionID]error{h.sp("foo", 2): kerr.CoordinatorNotAvailable}
	fp.mu.Unlock()
	resp = h.c.DeleteShareGroupOffsets(ctx, deleteOffsetsReq("sg2", "foo"))
	if deleteOffsetsCodes(resp) != "foo:COORDINATOR_NOT_AVAILABLE" {
		t.Fatalf("failed delete: %s", deleteOffsetsCodes(resp))
	}
	h.withShareGroup("sg2", func(g *shareGroup) {
		if !g.partitions.deleting[h.topicIDOf("foo")] {
			t.Fatalf("foo not deleting after the failure: %+v", g.partitions)
		}
	})
	fp.mu.Lock()
	fp.partDelErr = nil
	fp.mu.Unlock()
	if resp = h.c.DeleteShareGroupOffsets(ctx, deleteOffsetsReq("sg2", "foo")); deleteOffsetsCodes(resp) != "foo:NONE" {
		t.Fatalf("retried delete: %s", deleteOffsetsCodes(resp))
	}
	h.withShareGroup("sg2", func(g *shareGroup) {
		if len(g.partitions.deleting) != 0 {
			t.Fatalf("foo still deleting after the retry: %+v", g.partitions)
		}
	})
}

func describeOffsets(h *harness, version int16, group string, topics map[string][]int32) kmsg.DescribeShareGroupOffsetsResponseGroup {
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	req.Version = version
	rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	rg.GroupID = group
	if topics != nil {
		rg.Topics = []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{}
		for _, t := range sortedKeys(topics) {
			rg.Topics = append(rg.Topics, kmsg.DescribeShareGroupOffsetsRequestGroupTopic{Topic: t, Partitions: topics[t]})
		}
	}
	req.Groups = append(req.Groups, rg)
	return h.c.DescribeShareGroupOffsets(context.Background(), req).Groups[0]
}

func describedOffsets(g kmsg.DescribeShareGroupOffsetsResponseGroup) string {
	var out []string
	for _, t := range g.Topics {
		for _, p := range t.Partitions {
			out = append(out, fmt.Sprintf("%s/%d:%d/%d/lag%d/%s", t.Topic, p.Partition, p.StartOffset, p.LeaderEpoch, p.Lag, codeName(p.ErrorCode)))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestDescribeShareGroupOffsets(t *testing.T) {
	ends := map[string]int64{"foo/0": 100, "foo/1": 50}
	h, fp := newShareHarness(t, func(c *Config) {
		c.Share.LatestOffset = func(_ context.Context, topic string, p int32) (int64, error) {
			if end, ok := ends[fmt.Sprintf("%s/%d", topic, p)]; ok {
				return end, nil
			}
			return 0, kerr.NotLeaderForPartition
		}
	})
	h.emptyShareGroup("sg", []string{"foo"}, "[foo:[0 1 2]]")
	resp := h.c.AlterShareGroupOffsets(context.Background(), alterReq("sg", map[string]map[int32]int64{"foo": {0: 40, 1: 30, 2: 20}}))
	if alterCodes(resp) != "foo/0:NONE foo/1:NONE foo/2:NONE" {
		t.Fatalf("alter: %s", alterCodes(resp))
	}
	fp.mu.Lock()
	fp.deliveredOf = func(p SharePartitionID) int32 {
		if p.Partition == 1 {
			return -1 // unknown: no lag
		}
		return 5
	}
	fp.mu.Unlock()

	// v1, every initialized partition: lag = end - start - delivered.
	g := describeOffsets(h, 1, "sg", nil)
	if g.ErrorCode != 0 || describedOffsets(g) != "foo/0:40/0/lag55/NONE foo/1:30/0/lag-1/NONE foo/2:0/0/lag-1/NOT_LEADER_FOR_PARTITION" {
		t.Fatalf("v1 all: %s %s", errName(g.ErrorCode), describedOffsets(g))
	}
	// v0 has no lag and asks for no end offsets.
	if got := describedOffsets(describeOffsets(h, 0, "sg", nil)); got != "foo/0:40/0/lag-1/NONE foo/1:30/0/lag-1/NONE foo/2:20/0/lag-1/NONE" {
		t.Fatalf("v0 all: %s", got)
	}
	// Named topics: a missing topic, and a partition without state, start at -1.
	g = describeOffsets(h, 1, "sg", map[string][]int32{"foo": {0}, "bar": {1}, "nosuch": {3}})
	if got := describedOffsets(g); got != "bar/1:-1/0/lag-1/NONE foo/0:40/0/lag55/NONE nosuch/3:-1/0/lag-1/NONE" {
		t.Fatalf("named topics: %s", got)
	}
	if g := describeOffsets(h, 1, "sg", map[string][]int32{}); len(g.Topics) != 0 || g.ErrorCode != 0 {
		t.Fatalf("no topics: %+v", g)
	}
	if g := describeOffsets(h, 1, "nosuch", nil); len(g.Topics) != 0 || g.ErrorCode != 0 {
		t.Fatalf("a group without state: %+v", g)
	}
	fp.mu.Lock()
	fp.summaryErr = kerr.CoordinatorLoadInProgress
	fp.mu.Unlock()
	if g := describeOffsets(h, 1, "sg", nil); g.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("failed summary read: %s", errName(g.ErrorCode))
	}
}
