package coordinator

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/clock"
)

// TestRecordLayout pins the bytes of the records against the schemas in
// Kafka's group-coordinator/src/main/resources/common/message, so a
// formatter built for Kafka reads them.
func TestRecordLayout(t *testing.T) {
	str := func(s string) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(len(s)))
		return append(b, s...)
	}
	r := newOffsetCommitRecord("g", "t", 7, offsetAndMetadata{offset: 42, leaderEpoch: 3, metadata: "md", commitTimestamp: 1000, expireTimestamp: -1})
	var key []byte
	key = binary.BigEndian.AppendUint16(key, 1) // OffsetCommitKey version 1
	key = append(key, str("g")...)
	key = append(key, str("t")...)
	key = binary.BigEndian.AppendUint32(key, 7)
	if !bytes.Equal(r.key, key) {
		t.Fatalf("offset key %x, want %x", r.key, key)
	}
	var val []byte
	val = binary.BigEndian.AppendUint16(val, 3) // OffsetCommitValue version 3
	val = binary.BigEndian.AppendUint64(val, 42)
	val = binary.BigEndian.AppendUint32(val, 3)
	val = append(val, str("md")...)
	val = binary.BigEndian.AppendUint64(val, 1000)
	if !bytes.Equal(r.value, val) {
		t.Fatalf("offset value %x, want %x", r.value, val)
	}
	// With an explicit expire timestamp: version 1 (offset, metadata,
	// commit timestamp, expire timestamp; no leader epoch).
	r = newOffsetCommitRecord("g", "t", 7, offsetAndMetadata{offset: 42, leaderEpoch: 3, metadata: "md", commitTimestamp: 1000, expireTimestamp: 2000})
	val = binary.BigEndian.AppendUint16(nil, 1)
	val = binary.BigEndian.AppendUint64(val, 42)
	val = append(val, str("md")...)
	val = binary.BigEndian.AppendUint64(val, 1000)
	val = binary.BigEndian.AppendUint64(val, 2000)
	if !bytes.Equal(r.value, val) {
		t.Fatalf("offset value v1 %x, want %x", r.value, val)
	}
	if tomb := newOffsetCommitTombstone("g", "t", 7); tomb.value != nil || !bytes.Equal(tomb.key, key) {
		t.Fatalf("tombstone %+v", tomb)
	}

	g := newClassicGroup("grp", stateStable, 5000)
	g.protocolType, g.protocolName, g.generationID, g.leaderID = "consumer", "range", 2, "m"
	g.add(&member{id: "m", clientID: "c", clientHost: "/h", rebalanceTimeoutMs: 60, sessionTimeoutMs: 45, protocolType: "consumer",
		protocols: []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{9}}}}, nil)
	r = newGroupMetadataRecord(g, map[string][]byte{"m": {8}})
	if want := append(binary.BigEndian.AppendUint16(nil, 2), str("grp")...); !bytes.Equal(r.key, want) {
		t.Fatalf("group key %x, want %x", r.key, want)
	}
	var gv []byte
	gv = binary.BigEndian.AppendUint16(gv, 3) // GroupMetadataValue version 3
	gv = append(gv, str("consumer")...)
	gv = binary.BigEndian.AppendUint32(gv, 2)
	gv = append(gv, str("range")...)
	gv = append(gv, str("m")...)
	gv = binary.BigEndian.AppendUint64(gv, 5000)
	gv = binary.BigEndian.AppendUint32(gv, 1) // one member
	gv = append(gv, str("m")...)
	gv = binary.BigEndian.AppendUint16(gv, 0xffff) // null group instance id
	gv = append(gv, str("c")...)
	gv = append(gv, str("/h")...)
	gv = binary.BigEndian.AppendUint32(gv, 60)
	gv = binary.BigEndian.AppendUint32(gv, 45)
	gv = append(binary.BigEndian.AppendUint32(gv, 1), 9)
	gv = append(binary.BigEndian.AppendUint32(gv, 1), 8)
	if !bytes.Equal(r.value, gv) {
		t.Fatalf("group value\n%x, want\n%x", r.value, gv)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Log: newMemLog(), Image: raftmeta.EmptyImage}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Config{
		"no log":   {Image: raftmeta.EmptyImage},
		"no image": {Log: newMemLog()},
		"sessions": {Log: newMemLog(), Image: raftmeta.EmptyImage, MinSessionTimeout: time.Minute, MaxSessionTimeout: time.Second},
		"parts":    {Log: newMemLog(), Image: raftmeta.EmptyImage, NumPartitions: -1},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(error).Error(), "Config.Log") {
				t.Fatalf("NewGroupCoordinator with an invalid config: %v", r)
			}
		}()
		NewGroupCoordinator(Config{})
	}()
}

func TestCloseAnswersParkedRequests(t *testing.T) {
	h := newHarness(t)
	a, b := h.newMember("g", "a"), h.newMember("g", "b")
	wantCode(t, "a", a.join().ErrorCode, 0)
	wantCode(t, "a sync", a.sync(nil).ErrorCode, 0)
	jb := b.joinAsync()
	h.waitAwaiting("g", 1)
	h.c.Close()
	wantCode(t, "parked join at close", recv(t, jb).ErrorCode, notCoordinator)
	wantCode(t, "after close", a.heartbeat(), notCoordinator)
	h.c.OnElection(0, 99) // ignored once closed
	if h.c.shard(0) != nil {
		t.Fatal("election after Close created a shard")
	}
}

func TestJoinContextCancelled(t *testing.T) {
	h := newHarness(t)
	a, b := h.newMember("g", "a"), h.newMember("g", "b")
	wantCode(t, "a", a.join().ErrorCode, 0)
	wantCode(t, "a sync", a.sync(nil).ErrorCode, 0)
	wantCode(t, "b's first join", b.joinOnce().ErrorCode, memberIDRequired)
	ctx, cancel := context.WithCancel(clientCtx("b"))
	done := make(chan *kmsg.JoinGroupResponse, 1)
	go func() { done <- h.c.JoinGroup(ctx, b.joinReq()) }()
	h.waitAwaiting("g", 1)
	cancel()
	wantCode(t, "cancelled join", recv(t, done).ErrorCode, coordinatorNotAvailable)
	// The member stays in the rebalance, as in Kafka; a's rejoin completes it.
	ra := a.join()
	if ra.Generation != 2 || len(ra.Members) != 2 {
		t.Fatalf("rejoin after a cancelled join: %+v", ra)
	}
}

func TestDeletedTopicOffsetsAreRemoved(t *testing.T) {
	h := newHarness(t)
	h.commit(9, "g", "", -1, map[string]map[int32]int64{"foo": {0: 1}, "bar": {0: 2}})
	h.commit(9, "h", "", -1, map[string]map[int32]int64{"foo": {1: 3}})
	img := h.img.Load()
	h.c.OnMetadataDelta(&raftmeta.Delta{DeletedTopics: []*raftmeta.Topic{img.Topics["foo"]}})
	if offs, _ := h.fetchAll("g"); len(offs) != 1 || offs["bar/0"] != "2/5/m2" {
		t.Fatalf("g after deleting foo: %v", offs)
	}
	h.restart()
	if offs, _ := h.fetchAll("h"); len(offs) != 0 {
		t.Fatalf("h after deleting foo and a restart: %v", offs)
	}
}

func TestRealClockTimers(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Clock = clock.Real{}
		c.MinSessionTimeout = 50 * time.Millisecond
		c.InitialRebalanceDelay = 50 * time.Millisecond
	})
	m := h.newMember("g", "c")
	m.session, m.rebalance = 200, 1000
	start := time.Now()
	wantCode(t, "join", m.join().ErrorCode, 0) // waits out the initial delay on the timer goroutine
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("join returned after %v, before the initial rebalance delay", d)
	}
	wantCode(t, "sync", m.sync(nil).ErrorCode, 0)
	h.eventually("the silent member's session to expire", func() bool {
		st, _, n, _ := h.groupState("g")
		return n == 0 && st == stateEmpty
	})
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("member expired after %v, before its 200ms session", d)
	}
}
