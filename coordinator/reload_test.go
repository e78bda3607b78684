package coordinator

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestReloadRestoresOffsetsAndGroups(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.InitialRebalanceDelay = 3 * time.Second })
	a, b, c := threeMemberGroup(t, h, "g")
	wantCode(t, "commit", commitCodes(h.commit(9, "g", a.id, 1, map[string]map[int32]int64{"foo": {0: 100, 1: 200}}))["foo/0"], 0)
	h.commit(9, "simple", "", -1, map[string]map[int32]int64{"bar": {1: 5}})
	h.commit(9, "simple", "", -1, map[string]map[int32]int64{"bar": {1: 6}}) // the later commit wins
	h.commit(9, "gone", "", -1, map[string]map[int32]int64{"bar": {0: 1}})
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Groups = []string{"gone"}
	wantCode(t, "delete", h.c.DeleteGroups(context.Background(), req).Groups[0].ErrorCode, 0)
	before := h.describe("g")
	offsBefore, _ := h.fetchAll("g")

	h.resignAll()
	wantCode(t, "heartbeat after resignation", a.heartbeat(), notCoordinator)
	wantCode(t, "describe after resignation", h.describe("g").ErrorCode, notCoordinator)
	h.electAll()

	after := h.describe("g")
	if after.State != "Stable" || after.Protocol != before.Protocol || after.ProtocolType != before.ProtocolType || len(after.Members) != 3 {
		t.Fatalf("reloaded group: %+v", after)
	}
	for i := range after.Members {
		x, y := before.Members[i], after.Members[i]
		if x.MemberID != y.MemberID || x.ClientID != y.ClientID || x.ClientHost != y.ClientHost ||
			!bytes.Equal(x.MemberAssignment, y.MemberAssignment) || !bytes.Equal(x.ProtocolMetadata, y.ProtocolMetadata) {
			t.Fatalf("reloaded member %d: %+v, was %+v", i, y, x)
		}
	}
	h.withGroup("g", func(g *classicGroup) {
		if g.generationID != 1 || g.leaderID != a.id || g.protocolName != "range" || !g.subscribedKnown || !g.subscribedTopics["foo"] {
			t.Fatalf("reloaded: gen %d leader %q protocol %q subscribed %v", g.generationID, g.leaderID, g.protocolName, g.subscribedTopics)
		}
	})
	offsAfter, _ := h.fetchAll("g")
	if len(offsAfter) != 2 || offsAfter["foo/0"] != offsBefore["foo/0"] || offsAfter["foo/1"] != "200/5/m200" {
		t.Fatalf("reloaded offsets %v, were %v", offsAfter, offsBefore)
	}
	if offs, _ := h.fetchAll("simple"); offs["bar/1"] != "6/5/m6" {
		t.Fatalf("simple group offsets %v", offs)
	}
	if offs, _ := h.fetchAll("gone"); len(offs) != 0 {
		t.Fatalf("deleted group's offsets came back: %v", offs)
	}

	// The members carry on: same generation, their assignments, and
	// their sessions restarted at load.
	for _, m := range []*tmember{a, b, c} {
		wantCode(t, "heartbeat after reload", m.heartbeat(), 0)
	}
	s := b.sync(nil)
	wantCode(t, "sync after reload", s.ErrorCode, 0)
	if !bytes.Equal(s.MemberAssignment, consumerAssignment(map[string][]int32{"foo": {1}})) {
		t.Fatalf("b's assignment after reload: %x", s.MemberAssignment)
	}
	// c stays silent and expires one session timeout after the load.
	h.advance(5 * time.Second)
	wantCode(t, "a", a.heartbeat(), 0)
	wantCode(t, "b", b.heartbeat(), 0)
	h.advance(5*time.Second + time.Millisecond)
	if _, _, n, _ := h.groupState("g"); n != 2 {
		t.Fatalf("members after c's session expired post-reload: %d", n)
	}
}

func TestLoadingAndResignationErrors(t *testing.T) {
	h := newHarness(t)
	h.commit(9, "g", "", -1, map[string]map[int32]int64{"foo": {0: 1}})
	m := h.newMember("live", "c")
	wantCode(t, "join", m.join().ErrorCode, 0)
	wantCode(t, "sync", m.sync(nil).ErrorCode, 0)

	h.resignAll()
	gate := make(chan struct{})
	h.log.mu.Lock()
	h.log.readGate = gate
	h.log.mu.Unlock()
	h.epoch++
	for p := range int32(testPartitions) {
		h.c.OnElection(p, h.epoch)
	}
	// Loading: COORDINATOR_LOAD_IN_PROGRESS, except heartbeats (NONE, so
	// members are not kicked out by a failover).
	wantCode(t, "commit while loading", commitCodes(h.commit(9, "g", "", -1, map[string]map[int32]int64{"foo": {0: 2}}))["foo/0"], coordinatorLoadInProgress)
	_, code := h.fetchAll("g")
	wantCode(t, "fetch while loading", code, coordinatorLoadInProgress)
	wantCode(t, "heartbeat while loading", m.heartbeat(), 0)
	wantCode(t, "join while loading", h.newMember("live", "x").joinOnce().ErrorCode, coordinatorLoadInProgress)
	lr := kmsg.NewPtrListGroupsRequest()
	wantCode(t, "list while loading", h.c.ListGroups(context.Background(), lr).ErrorCode, coordinatorLoadInProgress)
	// An election at an older epoch while loading changes nothing.
	h.c.OnElection(0, h.epoch-1)
	close(gate)
	h.log.mu.Lock()
	h.log.readGate = nil
	h.log.mu.Unlock()
	h.waitLoaded()
	offs, _ := h.fetchAll("g")
	if offs["foo/0"] != "1/5/m1" {
		t.Fatalf("after load: %v", offs)
	}

	// A JoinGroup parked when the partition resigns gets NOT_COORDINATOR.
	b := h.newMember("live", "b")
	jb := b.joinAsync()
	h.waitAwaiting("live", 1)
	h.c.OnResignation(PartitionFor("live", testPartitions))
	wantCode(t, "parked join on resignation", recv(t, jb).ErrorCode, notCoordinator)
	// A partition not led here at all.
	h.c.OnElection(PartitionFor("live", testPartitions), h.epoch+1)
	h.waitLoaded()
	wantCode(t, "member after reload", m.heartbeat(), 0)
}

func TestLoadSkipsUnknownRecordTypesAndReadsValueVersions(t *testing.T) {
	h := newHarness(t)
	p := PartitionFor("legacy", testPartitions)
	// Hand-written records: an offset commit at key v0 / value v1 with an
	// expire timestamp, a streams group record type (key version 17) the
	// loader skips, and group metadata at value v0 (no rebalance timeout).
	k0 := kmsg.NewOffsetCommitKey()
	k0.Version = 0
	k0.Group, k0.Topic, k0.Partition = "legacy", "foo", 2
	v1 := kmsg.NewOffsetCommitValue()
	v1.Version = 1
	v1.Offset, v1.Metadata, v1.CommitTimestamp, v1.ExpireTimestamp = 42, "old", 1000, 2000
	unknownKey := []byte{0, 17, 0, 1, 'x'}
	gv := kmsg.NewGroupMetadataValue()
	gv.Version = 0
	gv.ProtocolType = "consumer"
	gv.Generation = 4
	gv.Protocol = kmsg.StringPtr("range")
	gv.Leader = kmsg.StringPtr("m1")
	gv.Members = []kmsg.GroupMetadataValueMember{{MemberID: "m1", ClientID: "c", ClientHost: "/h", SessionTimeoutMillis: 10000,
		Subscription: consumerMeta([]string{"bar"}, nil), Assignment: []byte("A")}}
	batch, err := buildBatch([]coordRecord{
		{key: k0.AppendTo(nil), value: v1.AppendTo(nil)},
		{key: unknownKey, value: []byte{0, 0}},
		{key: groupMetadataKey("legacy"), value: gv.AppendTo(nil)},
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.log.Append(context.Background(), p, batch); err != nil {
		t.Fatal(err)
	}
	h.restart()
	h.withGroup("legacy", func(g *classicGroup) {
		if g == nil || g.state != stateStable || g.generationID != 4 || g.currentStateTimestamp != -1 ||
			g.member("m1").rebalanceTimeoutMs != 10000 || string(g.member("m1").assignment) != "A" || !g.subscribedTopics["bar"] {
			t.Fatalf("legacy group: %+v", g)
		}
	})
	h.withGroup("legacy", func(*classicGroup) {
		s := h.c.shard(p)
		om, ok := s.offsets.get("legacy", "foo", 2)
		if !ok || om.offset != 42 || om.leaderEpoch != -1 || om.metadata != "old" || om.expireTimestamp != 2000 {
			t.Fatalf("legacy offset %+v %v", om, ok)
		}
	})
}

func TestOversizedGroupRebalancesOnLoad(t *testing.T) {
	h := newHarness(t)
	a, b := h.newMember("g", "a"), h.newMember("g", "b")
	wantCode(t, "a", a.join().ErrorCode, 0)
	wantCode(t, "a sync", a.sync(nil).ErrorCode, 0)
	jb := b.joinAsync()
	h.waitAwaiting("g", 1)
	ja := a.joinAsync()
	recv(t, ja)
	recv(t, jb)
	fb := b.syncAsync(nil)
	h.waitSyncParked("g", b.id)
	wantCode(t, "leader sync", a.sync(nil).ErrorCode, 0)
	recv(t, fb)
	// group.max.size shrank to 1 while the broker was down.
	h.c.cfg.MaxGroupSize = 1
	h.restart()
	if st, gen, n, _ := h.groupState("g"); st != statePreparingRebalance || gen != 2 || n != 2 {
		t.Fatalf("oversized group after load: %s gen %d members %d", st, gen, n)
	}
	wantCode(t, "heartbeat", a.heartbeat(), rebalanceInProgress)
}
