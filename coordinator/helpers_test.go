package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/runtime/runtimetest"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
)

// memLog is an in-memory OffsetsLog: each partition is a list of batches
// with offsets assigned on append; the high watermark is the log end.
type memLog struct {
	mu    sync.Mutex
	parts map[int32][]record.Batch
	// failNext makes the next appends fail with these errors, in order.
	failNext []error
	// appendGate, when set, is received from before each append completes.
	appendGate chan struct{}
	// readGate, when set, is received from before each read.
	readGate chan struct{}
	appends  atomic.Int64
}

func newMemLog() *memLog { return &memLog{parts: map[int32][]record.Batch{}} }

func (l *memLog) leo(p int32) int64 {
	bs := l.parts[p]
	if len(bs) == 0 {
		return 0
	}
	return bs[len(bs)-1].NextOffset()
}

func (l *memLog) Append(ctx context.Context, p int32, batch []byte) (int64, error) {
	l.mu.Lock()
	gate := l.appendGate
	l.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failNext) > 0 {
		err := l.failNext[0]
		l.failNext = l.failNext[1:]
		return 0, err
	}
	b, err := record.ReadBatch(batch)
	if err != nil {
		return 0, err
	}
	if len(b) != len(batch) || !b.ValidCRC() {
		return 0, errors.New("memLog: bad batch")
	}
	cp := record.Batch(append([]byte(nil), batch...))
	cp.SetBaseOffset(l.leo(p))
	l.parts[p] = append(l.parts[p], cp)
	l.appends.Add(1)
	return cp.LastOffset(), nil
}

func (l *memLog) Read(ctx context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
	l.mu.Lock()
	gate := l.readGate
	l.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, 0, 0, ctx.Err()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out, next := runtimetest.ReadBatches(l.parts[p], from, maxBytes)
	return out, next, l.leo(p), nil
}

// records decodes every record of partition p, in log order.
func (l *memLog) records(t *testing.T, p int32) []decodedRecord {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []decodedRecord
	for _, b := range l.parts[p] {
		rr := record.NewUncompressedReader(b)
		for rr.Remaining() > 0 {
			rec, err := rr.Next(true)
			if err != nil {
				t.Fatal(err)
			}
			d, err := decodeRecord(rec.Key, rec.Value, rec.ValueLen < 0)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
	}
	return out
}

const (
	testPartitions = 3
	testHost       = "127.0.0.1"
	testPort       = 9092
	testTimeout    = 10 * time.Second
)

type harness struct {
	t     *testing.T
	c     *GroupCoordinator
	log   *memLog
	clock *clock.Manual
	cfg   Config
	img   atomic.Pointer[raftmeta.Image]
	epoch int32
}

// testImage has broker 1, __consumer_offsets led by it, and topics foo (3
// partitions) and bar (2).
func testImage(offsetsLeader int32) *raftmeta.Image {
	img := raftmeta.EmptyImage()
	img.Brokers[1] = &raftmeta.Broker{ID: 1, Endpoints: []raftmeta.Endpoint{
		{Listener: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: testHost, Port: testPort},
		{Listener: "INTERNAL", SecurityProtocol: "PLAINTEXT", Host: "10.0.0.1", Port: 19092},
	}}
	addTopic(img, OffsetsTopic, testPartitions, offsetsLeader)
	addTopic(img, "foo", 3, 1)
	addTopic(img, "bar", 2, 1)
	return img
}

func addTopic(img *raftmeta.Image, name string, n int, leader int32) {
	t := &raftmeta.Topic{Name: name, ID: raftmeta.Uuid{byte(len(img.Topics) + 1)}}
	for i := range n {
		t.Partitions = append(t.Partitions, &raftmeta.Partition{Topic: name, Index: int32(i), Leader: leader, Replicas: []int32{1}, ISR: []int32{1}})
	}
	img.Topics[name] = t
	img.TopicsByID[t.ID] = t
}

func newHarness(t *testing.T, opts ...func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, log: newMemLog(), clock: clock.NewManual(time.Unix(1_700_000_000, 0))}
	h.img.Store(testImage(1))
	h.cfg = Config{
		NodeID:                1,
		Log:                   h.log,
		Image:                 h.img.Load,
		NumPartitions:         testPartitions,
		InitialRebalanceDelay: -1,
		Clock:                 h.clock,
		AllocateProducerIDs:   func(context.Context) (int64, int32, error) { return 0, 1000, nil },
	}
	for _, o := range opts {
		o(&h.cfg)
	}
	h.c = NewGroupCoordinator(h.cfg)
	t.Cleanup(h.c.Close)
	h.electAll()
	return h
}

func (h *harness) electAll() {
	h.t.Helper()
	h.epoch++
	for p := range int32(testPartitions) {
		h.c.OnElection(p, h.epoch)
	}
	h.waitLoaded()
}

func (h *harness) resignAll() {
	for p := range int32(testPartitions) {
		h.c.OnResignation(p)
	}
}

// restart drops every shard and loads them again from the log, once the
// writes already decided are in the log.
func (h *harness) restart() {
	h.t.Helper()
	h.drainWrites()
	h.resignAll()
	h.electAll()
}

// drainWrites waits until no shard has records queued or in flight.
func (h *harness) drainWrites() {
	h.t.Helper()
	h.eventually("queued writes to drain", func() bool {
		for _, s := range h.c.allShards() {
			s.mu.Lock()
			busy := s.writer.Queued() > 0 || s.writer.Writing()
			s.mu.Unlock()
			if busy {
				return false
			}
		}
		return true
	})
}

func (h *harness) waitLoaded() {
	h.t.Helper()
	h.eventually("all shards active", func() bool {
		for p := range int32(testPartitions) {
			s := h.c.shard(p)
			if s == nil {
				return false
			}
			s.mu.Lock()
			st := s.state
			s.mu.Unlock()
			if st != shardActive {
				return false
			}
		}
		return true
	})
}

func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// advance moves the clock and runs every timer that came due.
func (h *harness) advance(d time.Duration) {
	h.clock.Advance(d)
	h.fireTimers()
}

func (h *harness) fireTimers() {
	for _, s := range h.c.allShards() {
		s.timer.FireExpired()
	}
}

// withGroup runs fn on a group under its shard's lock; fn gets nil if the
// group does not exist.
func (h *harness) withGroup(id string, fn func(g *classicGroup)) {
	s := h.c.shard(PartitionFor(id, testPartitions))
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.groups[id])
}

func (h *harness) groupState(id string) (st groupState, gen int32, members int, awaiting int) {
	h.withGroup(id, func(g *classicGroup) {
		if g == nil {
			st = stateDead
			return
		}
		st, gen, members, awaiting = g.state, g.generationID, len(g.members), g.numAwaitingJoin
	})
	return
}

// waitAwaiting waits until n members of the group have a parked JoinGroup.
func (h *harness) waitAwaiting(group string, n int) {
	h.t.Helper()
	h.eventually(fmt.Sprintf("%d members awaiting join in %s", n, group), func() bool {
		_, _, _, a := h.groupState(group)
		return a == n
	})
}

// waitSyncParked waits until the member has a parked SyncGroup.
func (h *harness) waitSyncParked(group, memberID string) {
	h.t.Helper()
	h.eventually("parked SyncGroup of "+memberID, func() bool {
		parked := false
		h.withGroup(group, func(g *classicGroup) {
			if g != nil && g.member(memberID) != nil {
				parked = g.member(memberID).isAwaitingSync()
			}
		})
		return parked
	})
}

func clientCtx(clientID string) context.Context {
	return reqctx.With(context.Background(), reqctx.Info{ClientID: clientID, ClientHost: "/192.0.2.7", Listener: "PLAINTEXT"})
}

// consumerMeta is a ConsumerProtocolSubscription (v1) for topics, owning
// owned (topic -> partitions), as consumers send in JoinGroup.
func consumerMeta(topics []string, owned map[string][]int32) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version = 1
	m.Topics = topics
	for t, ps := range owned {
		m.OwnedPartitions = append(m.OwnedPartitions, kmsg.ConsumerMemberMetadataOwnedPartition{Topic: t, Partitions: ps})
	}
	return m.AppendTo(nil)
}

func consumerAssignment(assigned map[string][]int32) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	a.Version = 1
	for t, ps := range assigned {
		a.Topics = append(a.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: t, Partitions: ps})
	}
	return a.AppendTo(nil)
}

// tmember is a simulated group member speaking JoinGroup v9, SyncGroup v5,
// Heartbeat v4.
type tmember struct {
	h          *harness
	group      string
	clientID   string
	instanceID *string
	id         string
	generation int32
	protocols  []kmsg.JoinGroupRequestProtocol
	session    int32
	rebalance  int32
	lastJoin   *kmsg.JoinGroupResponse
}

func (h *harness) newMember(group, clientID string, protocols ...kmsg.JoinGroupRequestProtocol) *tmember {
	if len(protocols) == 0 {
		protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: consumerMeta([]string{"foo"}, nil)}}
	}
	return &tmember{h: h, group: group, clientID: clientID, protocols: protocols, session: 10000, rebalance: 30000, generation: -1}
}

func (m *tmember) joinReq() *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 9
	req.Group = m.group
	req.MemberID = m.id
	req.InstanceID = m.instanceID
	req.SessionTimeoutMillis = m.session
	req.RebalanceTimeoutMillis = m.rebalance
	req.ProtocolType = consumerProtocolType
	req.Protocols = m.protocols
	return req
}

// joinOnce sends one JoinGroup and records the member id it got.
func (m *tmember) joinOnce() *kmsg.JoinGroupResponse {
	resp := m.h.c.JoinGroup(clientCtx(m.clientID), m.joinReq())
	if resp.MemberID != "" {
		m.id = resp.MemberID
	}
	if resp.ErrorCode == 0 {
		m.generation = resp.Generation
	}
	m.lastJoin = resp
	return resp
}

// join joins like a client: retries once with the id MEMBER_ID_REQUIRED gave.
func (m *tmember) join() *kmsg.JoinGroupResponse {
	resp := m.joinOnce()
	if resp.ErrorCode == memberIDRequired {
		resp = m.joinOnce()
	}
	return resp
}

// joinAsync runs join on another goroutine.
func (m *tmember) joinAsync() <-chan *kmsg.JoinGroupResponse {
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	go func() { ch <- m.join() }()
	return ch
}

func (m *tmember) sync(assignments map[string][]byte) *kmsg.SyncGroupResponse {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group = m.group
	req.Generation = m.generation
	req.MemberID = m.id
	req.InstanceID = m.instanceID
	req.ProtocolType = kmsg.StringPtr(consumerProtocolType)
	for id, a := range assignments {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: a})
	}
	return m.h.c.SyncGroup(clientCtx(m.clientID), req)
}

func (m *tmember) syncAsync(assignments map[string][]byte) <-chan *kmsg.SyncGroupResponse {
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	go func() { ch <- m.sync(assignments) }()
	return ch
}

func (m *tmember) heartbeat() int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group = m.group
	req.Generation = m.generation
	req.MemberID = m.id
	req.InstanceID = m.instanceID
	return m.h.c.Heartbeat(clientCtx(m.clientID), req).ErrorCode
}

func (m *tmember) leave() *kmsg.LeaveGroupResponse {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 5
	req.Group = m.group
	req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: m.id, InstanceID: m.instanceID}}
	return m.h.c.LeaveGroup(clientCtx(m.clientID), req)
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatal("timed out waiting for a response")
		panic("unreachable")
	}
}

// notReady asserts that nothing arrives on ch for a short while: the
// request is parked.
func notReady[T any](t *testing.T, ch <-chan T) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("request answered while it should be parked: %+v", v)
	case <-time.After(20 * time.Millisecond):
	}
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).Error()
}

func wantCode(t *testing.T, what string, got, want int16) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %s, want %s", what, errName(got), errName(want))
	}
}

// commit commits offsets for group as member/generation at request version v.
func (h *harness) commit(v int16, group, memberID string, generation int32, offsets map[string]map[int32]int64) *kmsg.OffsetCommitResponse {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = v
	req.Group = group
	req.MemberID = memberID
	req.Generation = generation
	for _, topic := range sortedKeys(offsets) {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		for _, p := range sortedKeys(offsets[topic]) {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition = p
			rp.Offset = offsets[topic][p]
			rp.LeaderEpoch = 5
			rp.Metadata = kmsg.StringPtr(fmt.Sprintf("m%d", offsets[topic][p]))
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	return h.c.OffsetCommit(clientCtx("committer"), req)
}

// commitCodes flattens a commit response to "topic/partition" -> code.
func commitCodes(resp *kmsg.OffsetCommitResponse) map[string]int16 {
	out := map[string]int16{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[fmt.Sprintf("%s/%d", t.Topic, p.Partition)] = p.ErrorCode
		}
	}
	return out
}

// fetchAll fetches every committed offset of group (v8, Topics null) as
// "topic/partition" -> "offset/epoch/metadata".
func (h *harness) fetchAll(group string) (map[string]string, int16) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	req.Groups = append(req.Groups, rg)
	resp := h.c.OffsetFetch(context.Background(), req)
	g := resp.Groups[0]
	out := map[string]string{}
	for _, t := range g.Topics {
		for _, p := range t.Partitions {
			out[fmt.Sprintf("%s/%d", t.Topic, p.Partition)] = fmt.Sprintf("%d/%d/%s", p.Offset, p.LeaderEpoch, *p.Metadata)
		}
	}
	return out, g.ErrorCode
}

func (h *harness) describe(group string) kmsg.DescribeGroupsResponseGroup {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 5
	req.Groups = []string{group}
	return h.c.DescribeGroups(context.Background(), req).Groups[0]
}

func sortedKeys[K string | int32, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
