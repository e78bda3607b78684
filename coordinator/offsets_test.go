package coordinator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestSimpleCommitFetchAndRecords(t *testing.T) {
	h := newHarness(t)
	resp := h.commit(8, "simple", "", -1, map[string]map[int32]int64{"foo": {0: 10, 2: 30}, "bar": {1: 7}})
	got := commitCodes(resp)
	if len(got) != 3 || got["foo/0"] != 0 || got["foo/2"] != 0 || got["bar/1"] != 0 {
		t.Fatalf("commit codes %v", got)
	}
	offs, code := h.fetchAll("simple")
	wantCode(t, "fetch all", code, 0)
	want := map[string]string{"foo/0": "10/5/m10", "foo/2": "30/5/m30", "bar/1": "7/5/m7"}
	if len(offs) != len(want) {
		t.Fatalf("fetched %v, want %v", offs, want)
	}
	for k, v := range want {
		if offs[k] != v {
			t.Fatalf("fetched %v, want %v", offs, want)
		}
	}
	// The commit created a simple group: Empty, no protocol type.
	d := h.describe("simple")
	if d.State != "Empty" || d.ProtocolType != "" || len(d.Members) != 0 {
		t.Fatalf("simple group: %+v", d)
	}

	// One batch, three records, as Kafka writes them: key v1, value v3.
	p := PartitionFor("simple", testPartitions)
	h.log.mu.Lock()
	nbatches := len(h.log.parts[p])
	h.log.mu.Unlock()
	if nbatches != 1 {
		t.Fatalf("%d batches for one commit, want 1", nbatches)
	}
	recs := h.log.records(t, p)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	r := recs[0]
	if r.offsetKey == nil || r.offsetKey.Version != 1 || r.offsetKey.Group != "simple" || r.offsetKey.Topic != "bar" || r.offsetKey.Partition != 1 {
		t.Fatalf("first record key %+v", r.offsetKey)
	}
	v := r.offsetValue
	if v.Version != 3 || v.Offset != 7 || v.LeaderEpoch != 5 || v.Metadata != "m7" || v.CommitTimestamp != h.clock.Now().UnixMilli() || v.ExpireTimestamp != -1 {
		t.Fatalf("first record value %+v", v)
	}

	// Specific partitions at v1 (no epoch in the response), v5, v8:
	// committed and uncommitted ones.
	for _, version := range []int16{1, 5, 7} {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = version
		req.Group = "simple"
		req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "foo", Partitions: []int32{0, 1}}, {Topic: "nope", Partitions: []int32{3}}}
		fr := h.c.OffsetFetch(context.Background(), req)
		if fr.ErrorCode != 0 || len(fr.Topics) != 2 {
			t.Fatalf("v%d fetch: %+v", version, fr)
		}
		p0, p1, n := fr.Topics[0].Partitions[0], fr.Topics[0].Partitions[1], fr.Topics[1].Partitions[0]
		if p0.Offset != 10 || p0.LeaderEpoch != 5 || *p0.Metadata != "m10" || p1.Offset != -1 || p1.LeaderEpoch != -1 || *p1.Metadata != "" ||
			n.Offset != -1 || n.ErrorCode != 0 {
			t.Fatalf("v%d fetch partitions: %+v %+v %+v", version, p0, p1, n)
		}
	}
	// v7 with null topics fetches everything.
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 7
	req.Group = "simple"
	req.Topics = nil
	fr := h.c.OffsetFetch(context.Background(), req)
	if len(fr.Topics) != 2 || fr.Topics[0].Topic != "bar" || fr.Topics[1].Topic != "foo" || len(fr.Topics[1].Partitions) != 2 {
		t.Fatalf("v7 fetch all: %+v", fr.Topics)
	}
	// An unknown group has no offsets and no error.
	offs, code = h.fetchAll("unknown")
	if code != 0 || len(offs) != 0 {
		t.Fatalf("unknown group fetch: %v %d", offs, code)
	}
}

func TestOffsetCommitRetentionWritesValueV1(t *testing.T) {
	h := newHarness(t)
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 2
	req.Group = "old"
	req.Generation = -1
	req.RetentionTimeMillis = 60000
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "foo", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 3, LeaderEpoch: 9}}}}
	wantCode(t, "v2 commit", h.c.OffsetCommit(context.Background(), req).Topics[0].Partitions[0].ErrorCode, 0)
	recs := h.log.records(t, PartitionFor("old", testPartitions))
	v := recs[0].offsetValue
	now := h.clock.Now().UnixMilli()
	// v2 has no leader epoch: -1, whatever the struct held.
	if v.Version != 1 || v.ExpireTimestamp != now+60000 || v.LeaderEpoch != -1 || v.Metadata != "" {
		t.Fatalf("value %+v", v)
	}
	// The explicit expire timestamp wins over offsets.retention.minutes
	// (7 days); it is applied by the next expiration pass (every 10 min).
	h.advance(61 * time.Second)
	if offs, _ := h.fetchAll("old"); len(offs) != 1 {
		t.Fatalf("expired before the expiration pass: %v", offs)
	}
	h.advance(10 * time.Minute)
	if offs, _ := h.fetchAll("old"); len(offs) != 0 {
		t.Fatalf("offset with a 60s retention survived: %v", offs)
	}
}

func TestOffsetCommitErrors(t *testing.T) {
	h := newHarness(t)
	m := h.newMember("g", "c")
	wantCode(t, "join", m.join().ErrorCode, 0) // generation 1, CompletingRebalance

	commit := func(v int16, group, member string, gen int32) map[string]int16 {
		return commitCodes(h.commit(v, group, member, gen, map[string]map[int32]int64{"foo": {0: 1}}))
	}
	wantCode(t, "commit before sync", commit(9, "g", m.id, 1)["foo/0"], rebalanceInProgress)
	wantCode(t, "sync", m.sync(nil).ErrorCode, 0)
	wantCode(t, "member commit", commit(9, "g", m.id, 1)["foo/0"], 0)
	wantCode(t, "wrong generation", commit(9, "g", m.id, 7)["foo/0"], illegalGeneration)
	wantCode(t, "unknown member", commit(9, "g", "nobody", 1)["foo/0"], unknownMemberID)
	wantCode(t, "simple commit to a group with members", commit(9, "g", "", -1)["foo/0"], unknownMemberID)
	wantCode(t, "missing group v9", commit(9, "missing", "x", 1)["foo/0"], groupIDNotFound)
	wantCode(t, "missing group v8", commit(8, "missing", "x", 1)["foo/0"], illegalGeneration)

	// Unknown topics and partitions, without touching the valid ones.
	resp := h.commit(9, "g", m.id, 1, map[string]map[int32]int64{"foo": {0: 5, 3: 5}, "nope": {0: 5}})
	codes := commitCodes(resp)
	if codes["foo/0"] != 0 || codes["foo/3"] != unknownTopicOrPartition || codes["nope/0"] != unknownTopicOrPartition {
		t.Fatalf("codes %v", codes)
	}

	// Metadata over offset.metadata.max.bytes (4096 UTF-16 units).
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 9
	req.Group = "g"
	req.MemberID = m.id
	req.Generation = 1
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "foo", Partitions: []kmsg.OffsetCommitRequestTopicPartition{
		{Partition: 1, Offset: 1, Metadata: kmsg.StringPtr(strings.Repeat("x", 4097))},
		{Partition: 2, Offset: 2, Metadata: kmsg.StringPtr(strings.Repeat("x", 4096))},
	}}}
	resp = h.c.OffsetCommit(context.Background(), req)
	wantCode(t, "metadata 4097", resp.Topics[0].Partitions[0].ErrorCode, offsetMetadataTooLarge)
	wantCode(t, "metadata 4096", resp.Topics[0].Partitions[1].ErrorCode, 0)

	// Static member fencing on commit (v7+).
	s := h.newMember("st", "c")
	s.instanceID = kmsg.StringPtr("i1")
	wantCode(t, "static join", s.join().ErrorCode, 0)
	wantCode(t, "static sync", s.sync(nil).ErrorCode, 0)
	req = kmsg.NewPtrOffsetCommitRequest()
	req.Version = 7
	req.Group = "st"
	req.MemberID = "st-other"
	req.InstanceID = kmsg.StringPtr("i1")
	req.Generation = 1
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "foo", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	wantCode(t, "fenced commit", h.c.OffsetCommit(context.Background(), req).Topics[0].Partitions[0].ErrorCode, fencedInstanceID)

	// A commit keeps the member's session alive.
	for range 3 {
		h.advance(8 * time.Second)
		wantCode(t, "keepalive commit", commit(9, "g", m.id, 1)["foo/0"], 0)
	}
	wantCode(t, "member still there", m.heartbeat(), 0)
}

func TestOffsetDelete(t *testing.T) {
	h := newHarness(t)
	h.commit(9, "simple", "", -1, map[string]map[int32]int64{"foo": {0: 1, 1: 2}, "bar": {0: 3}})
	del := func(group string, topics map[string][]int32) *kmsg.OffsetDeleteResponse {
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = group
		for _, topic := range sortedKeys(topics) {
			rt := kmsg.NewOffsetDeleteRequestTopic()
			rt.Topic = topic
			for _, p := range topics[topic] {
				rt.Partitions = append(rt.Partitions, kmsg.OffsetDeleteRequestTopicPartition{Partition: p})
			}
			req.Topics = append(req.Topics, rt)
		}
		return h.c.OffsetDelete(context.Background(), req)
	}
	resp := del("simple", map[string][]int32{"foo": {0, 2, 9}, "nope": {0}})
	if resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 || resp.Topics[0].Partitions[1].ErrorCode != 0 ||
		resp.Topics[0].Partitions[2].ErrorCode != unknownTopicOrPartition || resp.Topics[1].Partitions[0].ErrorCode != unknownTopicOrPartition {
		t.Fatalf("offset delete: %+v", resp)
	}
	offs, _ := h.fetchAll("simple")
	if len(offs) != 2 || offs["foo/1"] == "" || offs["bar/0"] == "" {
		t.Fatalf("after delete: %v", offs)
	}
	recs := h.log.records(t, PartitionFor("simple", testPartitions))
	last := recs[len(recs)-1]
	if last.offsetKey == nil || last.offsetKey.Topic != "foo" || last.offsetKey.Partition != 0 || last.offsetValue != nil {
		t.Fatalf("tombstone: %+v", last)
	}
	wantCode(t, "missing group", del("missing", map[string][]int32{"foo": {0}}).ErrorCode, groupIDNotFound)
	wantCode(t, "empty group id", del("", map[string][]int32{"foo": {0}}).ErrorCode, invalidGroupID)

	// A consumer group consuming foo: foo's offsets are protected, bar's
	// can go. A non-consumer group with members refuses outright.
	m := h.newMember("cg", "c")
	wantCode(t, "join", m.join().ErrorCode, 0)
	wantCode(t, "sync", m.sync(nil).ErrorCode, 0)
	wantCode(t, "commit", commitCodes(h.commit(9, "cg", m.id, 1, map[string]map[int32]int64{"foo": {0: 1}, "bar": {0: 1}}))["bar/0"], 0)
	resp = del("cg", map[string][]int32{"foo": {0}, "bar": {0}})
	if resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 || resp.Topics[1].Partitions[0].ErrorCode != groupSubscribedToTopic {
		t.Fatalf("consumer group offset delete: %+v", resp)
	}
	connect := h.newMember("conn", "c")
	req := connect.joinReq()
	req.ProtocolType = "connect"
	req.MemberID = ""
	r := h.c.JoinGroup(clientCtx("c"), req)
	req.MemberID = r.MemberID
	wantCode(t, "connect join", h.c.JoinGroup(clientCtx("c"), req).ErrorCode, 0)
	wantCode(t, "non-consumer group with members", del("conn", map[string][]int32{"foo": {0}}).ErrorCode, nonEmptyGroup)
}

func TestDeleteGroups(t *testing.T) {
	h := newHarness(t)
	h.commit(9, "g1", "", -1, map[string]map[int32]int64{"foo": {0: 1, 1: 2}})
	m := h.newMember("busy", "c")
	wantCode(t, "join", m.join().ErrorCode, 0)
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Version = 2
	req.Groups = []string{"g1", "busy", "ghost"}
	resp := h.c.DeleteGroups(context.Background(), req)
	if len(resp.Groups) != 3 || resp.Groups[0].Group != "g1" || resp.Groups[0].ErrorCode != 0 ||
		resp.Groups[1].ErrorCode != nonEmptyGroup || resp.Groups[2].ErrorCode != groupIDNotFound {
		t.Fatalf("delete groups: %+v", resp.Groups)
	}
	if offs, _ := h.fetchAll("g1"); len(offs) != 0 {
		t.Fatalf("offsets of a deleted group: %v", offs)
	}
	if d := h.describe("g1"); d.State != "Dead" || d.ErrorCode != 0 {
		t.Fatalf("deleted group described as %+v", d)
	}
	// Tombstones: both offsets, then the group.
	recs := h.log.records(t, PartitionFor("g1", testPartitions))
	n := len(recs)
	if n < 3 || recs[n-1].groupKey == nil || recs[n-1].groupKey.Group != "g1" || recs[n-1].groupValue != nil ||
		recs[n-2].offsetKey == nil || recs[n-2].offsetValue != nil || recs[n-3].offsetKey == nil || recs[n-3].offsetValue != nil {
		t.Fatalf("deletion records: %+v", recs[max(0, n-3):])
	}
	// After a restart the group stays deleted.
	h.restart()
	if offs, _ := h.fetchAll("g1"); len(offs) != 0 {
		t.Fatalf("offsets of a deleted group after reload: %v", offs)
	}
	// busy never wrote a record (it never synced; Kafka would have written
	// an empty GroupMetadata for the new group, Strait does not), so no
	// group survives.
	if lg := h.listGroups(nil, nil); len(lg) != 0 {
		t.Fatalf("groups after restart: %v", lg)
	}
}

func (h *harness) listGroups(states, types []string) []string {
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 5
	req.StatesFilter = states
	req.TypesFilter = types
	resp := h.c.ListGroups(context.Background(), req)
	if resp.ErrorCode != 0 {
		h.t.Fatalf("list groups: %s", errName(resp.ErrorCode))
	}
	var out []string
	for _, g := range resp.Groups {
		if g.GroupType != "classic" {
			h.t.Fatalf("group type %q", g.GroupType)
		}
		out = append(out, g.Group+"/"+g.GroupState)
	}
	return out
}

func TestListAndDescribeGroups(t *testing.T) {
	h := newHarness(t)
	h.commit(9, "s", "", -1, map[string]map[int32]int64{"foo": {0: 1}})
	m := h.newMember("c", "cl")
	wantCode(t, "join", m.join().ErrorCode, 0)
	m2 := h.newMember("d", "cl")
	wantCode(t, "join", m2.join().ErrorCode, 0)
	wantCode(t, "sync", m2.sync(map[string][]byte{m2.id: []byte("x")}).ErrorCode, 0)

	if got := strings.Join(h.listGroups(nil, nil), ","); got != "c/CompletingRebalance,d/Stable,s/Empty" {
		t.Fatalf("list: %s", got)
	}
	if got := strings.Join(h.listGroups([]string{"STABLE", " empty"}, nil), ","); got != "d/Stable,s/Empty" {
		t.Fatalf("list by state: %s", got)
	}
	if got := h.listGroups(nil, []string{"consumer"}); len(got) != 0 {
		t.Fatalf("list type consumer: %v", got)
	}
	if got := len(h.listGroups(nil, []string{"Classic"})); got != 3 {
		t.Fatalf("list type classic: %d groups", got)
	}
	// v0 ignores filters and carries the protocol type.
	req := kmsg.NewPtrListGroupsRequest()
	req.StatesFilter = []string{"Dead"}
	resp := h.c.ListGroups(context.Background(), req)
	if len(resp.Groups) != 3 || resp.Groups[1].ProtocolType != "consumer" || resp.Groups[2].ProtocolType != "" {
		t.Fatalf("v0 list: %+v", resp.Groups)
	}

	dreq := kmsg.NewPtrDescribeGroupsRequest()
	dreq.Version = 5
	dreq.Groups = []string{"c", "d", "ghost"}
	dreq.IncludeAuthorizedOperations = true
	dr := h.c.DescribeGroups(context.Background(), dreq).Groups
	if dr[0].State != "CompletingRebalance" || dr[0].Protocol != "" || len(dr[0].Members) != 1 || len(dr[0].Members[0].ProtocolMetadata) != 0 {
		t.Fatalf("describe c: %+v", dr[0])
	}
	if dr[1].State != "Stable" || dr[1].Protocol != "range" || string(dr[1].Members[0].MemberAssignment) != "x" ||
		len(dr[1].Members[0].ProtocolMetadata) == 0 || dr[1].AuthorizedOperations != 328 {
		t.Fatalf("describe d: %+v", dr[1])
	}
	if dr[2].State != "Dead" || dr[2].ErrorCode != 0 || dr[2].AuthorizedOperations != 328 {
		t.Fatalf("describe ghost: %+v", dr[2])
	}
}

func TestLeaveGroupVersions(t *testing.T) {
	h := newHarness(t)
	a, b := h.newMember("g", "a"), h.newMember("g", "b")
	wantCode(t, "a", a.join().ErrorCode, 0)
	wantCode(t, "a sync", a.sync(nil).ErrorCode, 0)
	jb := b.joinAsync()
	h.waitAwaiting("g", 1)
	ja := a.joinAsync()
	recv(t, ja)
	recv(t, jb)

	// v0: a single member id, errors at the top level.
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = "g"
	req.MemberID = "nobody"
	r := h.c.LeaveGroup(context.Background(), req)
	if r.ErrorCode != unknownMemberID || r.Members != nil {
		t.Fatalf("v0 unknown member: %+v", r)
	}
	req.MemberID = b.id
	if r := h.c.LeaveGroup(context.Background(), req); r.ErrorCode != 0 {
		t.Fatalf("v0 leave: %+v", r)
	}
	// v3 batch: one good, one unknown.
	req = kmsg.NewPtrLeaveGroupRequest()
	req.Version = 3
	req.Group = "g"
	req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: a.id}, {MemberID: "x"}}
	r = h.c.LeaveGroup(context.Background(), req)
	if r.ErrorCode != 0 || r.Members[0].ErrorCode != 0 || r.Members[1].ErrorCode != unknownMemberID {
		t.Fatalf("v3 leave: %+v", r)
	}
	if st, _, n, _ := h.groupState("g"); st != stateEmpty || n != 0 {
		t.Fatalf("after everyone left: %s %d", st, n)
	}
	// A missing group answers per member.
	req.Group = "missing"
	r = h.c.LeaveGroup(context.Background(), req)
	if r.ErrorCode != 0 || len(r.Members) != 2 || r.Members[0].ErrorCode != unknownMemberID {
		t.Fatalf("missing group leave: %+v", r)
	}
	// The emptied group is persisted as Empty, generation 3 (written in
	// the background: nobody waits for it).
	var v *kmsg.GroupMetadataValue
	h.eventually("the empty group record", func() bool {
		recs := h.log.records(t, PartitionFor("g", testPartitions))
		v = recs[len(recs)-1].groupValue
		return v != nil && v.Generation == 3
	})
	if v == nil || v.Generation != 3 || len(v.Members) != 0 || v.Protocol != nil || v.ProtocolType != "consumer" {
		t.Fatalf("empty group record: %+v", v)
	}
}

func TestSyncAndHeartbeatErrors(t *testing.T) {
	h := newHarness(t)
	ghost := &tmember{h: h, group: "nope", id: "x", generation: 1}
	wantCode(t, "sync missing group", ghost.sync(nil).ErrorCode, unknownMemberID)
	wantCode(t, "heartbeat missing group", ghost.heartbeat(), unknownMemberID)
	m := h.newMember("g", "c")
	wantCode(t, "join", m.join().ErrorCode, 0)
	wrongGen := *m
	wrongGen.generation = 9
	wantCode(t, "sync wrong generation", wrongGen.sync(nil).ErrorCode, illegalGeneration)
	wantCode(t, "heartbeat wrong generation", wrongGen.heartbeat(), illegalGeneration)
	unknown := *m
	unknown.id = "other"
	wantCode(t, "sync unknown member", unknown.sync(nil).ErrorCode, unknownMemberID)
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group = "g"
	req.Generation = 1
	req.MemberID = m.id
	req.Protocol = kmsg.StringPtr("roundrobin")
	wantCode(t, "sync wrong protocol", h.c.SyncGroup(context.Background(), req).ErrorCode, inconsistentGroupProtocol)
	wantCode(t, "sync empty group id", (&tmember{h: h}).sync(nil).ErrorCode, invalidGroupID)
	wantCode(t, "heartbeat empty group id", (&tmember{h: h}).heartbeat(), invalidGroupID)
	// Heartbeats during CompletingRebalance are fine.
	wantCode(t, "heartbeat before sync", m.heartbeat(), 0)
	wantCode(t, "sync", m.sync(nil).ErrorCode, 0)

	// A rebalance starting while a follower waits for its assignment tells
	// it to rejoin.
	b := h.newMember("g", "b")
	jb := b.joinAsync()
	h.waitAwaiting("g", 1)
	ja := m.joinAsync()
	recv(t, ja)
	recv(t, jb)
	fb := b.syncAsync(nil)
	h.waitSyncParked("g", b.id)
	c := h.newMember("g", "c")
	jc := c.joinAsync()
	wantCode(t, "parked follower sync", recv(t, fb).ErrorCode, rebalanceInProgress)
	wantCode(t, "sync during PreparingRebalance", m.sync(nil).ErrorCode, rebalanceInProgress)
	_ = jc
}

func TestAppendFailureMapsErrorsAndReloads(t *testing.T) {
	h := newHarness(t)
	wantCode(t, "commit", commitCodes(h.commit(9, "g", "", -1, map[string]map[int32]int64{"foo": {0: 1}}))["foo/0"], 0)
	for _, tc := range []struct {
		err  error
		want int16
	}{
		{kerr.NotEnoughReplicas, coordinatorNotAvailable},
		{kerr.RequestTimedOut, coordinatorNotAvailable},
		{kerr.NotLeaderForPartition, notCoordinator},
		{kerr.KafkaStorageError, notCoordinator},
		{kerr.RecordListTooLarge, unknownServerError},
		{kerr.InvalidTopicException, kerr.InvalidTopicException.Code},
	} {
		h.log.mu.Lock()
		h.log.failNext = []error{tc.err}
		h.log.mu.Unlock()
		got := commitCodes(h.commit(9, "g", "", -1, map[string]map[int32]int64{"foo": {0: 99}}))["foo/0"]
		wantCode(t, "commit failing with "+tc.err.Error(), got, tc.want)
		// The failed commit was in memory only: the shard reloads and the
		// last durable offset is what is served.
		h.waitLoaded()
		offs, code := h.fetchAll("g")
		if code != 0 || offs["foo/0"] != "1/5/m1" {
			t.Fatalf("after a failed commit (%v): %v %s", tc.err, offs, errName(code))
		}
	}
}

func TestOffsetCommitFetchConcurrent(t *testing.T) {
	h := newHarness(t)
	const writers, commits = 8, 50
	done := make(chan struct{})
	for w := range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			group := "cg" + string(rune('a'+w))
			for i := range int64(commits) {
				codes := commitCodes(h.commit(9, group, "", -1, map[string]map[int32]int64{"foo": {int32(w % 3): i}}))
				if codes["foo/"+string(rune('0'+w%3))] != 0 {
					t.Errorf("commit %d of %s: %v", i, group, codes)
					return
				}
				h.fetchAll(group)
			}
		}()
	}
	for range writers {
		<-done
	}
	h.restart()
	for w := range writers {
		offs, _ := h.fetchAll("cg" + string(rune('a'+w)))
		want := "49/5/m49"
		if got := offs["foo/"+string(rune('0'+w%3))]; got != want {
			t.Fatalf("group %d after restart: %v, want %s", w, offs, want)
		}
	}
}

func TestWritesQueuedBehindAFailedAppendAreNotWritten(t *testing.T) {
	h := newHarness(t)
	h.commit(9, "g", "", -1, map[string]map[int32]int64{"foo": {0: 1}})
	s := h.c.shard(PartitionFor("g", testPartitions))
	gate := make(chan struct{})
	h.log.mu.Lock()
	h.log.appendGate = gate
	h.log.failNext = []error{kerr.NotEnoughReplicas}
	h.log.mu.Unlock()
	ra := make(chan *kmsg.OffsetCommitResponse, 1)
	go func() { ra <- h.commit(9, "g", "", -1, map[string]map[int32]int64{"foo": {0: 2}}) }()
	h.eventually("the first commit in flight", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.writer.Writing()
	})
	rb := make(chan *kmsg.OffsetCommitResponse, 1)
	go func() { rb <- h.commit(9, "g", "", -1, map[string]map[int32]int64{"foo": {1: 3}}) }()
	h.eventually("the second commit queued", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.writer.Queued() == 1
	})
	h.log.mu.Lock()
	h.log.appendGate = nil
	h.log.mu.Unlock()
	close(gate)
	wantCode(t, "failed commit", commitCodes(recv(t, ra))["foo/0"], coordinatorNotAvailable)
	wantCode(t, "commit queued behind it", commitCodes(recv(t, rb))["foo/1"], coordinatorLoadInProgress)
	h.waitLoaded()
	offs, _ := h.fetchAll("g")
	if len(offs) != 1 || offs["foo/0"] != "1/5/m1" {
		t.Fatalf("after the failed appends: %v", offs)
	}
	if n := h.log.appends.Load(); n != 1 {
		t.Fatalf("%d appends reached the log, want 1", n)
	}
}
