package coordinator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// fakePersister is an in-memory share coordinator: the state each
// partition was initialized with, and every call.
type fakePersister struct {
	mu    sync.Mutex
	state map[string]map[SharePartitionID]ShareStateSummary
	// inits are the InitializeState calls, in order.
	inits []fakeInit
	// deletes are the DeleteState calls, in order.
	deletes []fakeDelete
	// initErr fails the next InitializeState calls; initPartErr fails
	// single partitions of every call.
	initErr     []error
	initPartErr map[SharePartitionID]error
	// initGate, when set, is received from before InitializeState
	// answers (or the call gives up with its context).
	initGate    chan struct{}
	deleteErr   error
	summaryErr  error
	partDelErr  map[SharePartitionID]error
	deliveredOf func(SharePartitionID) int32
}

type fakeInit struct {
	group string
	epoch int32
	parts []ShareStateInit
}

type fakeDelete struct {
	group string
	parts []SharePartitionID
}

func newFakePersister() *fakePersister {
	return &fakePersister{state: map[string]map[SharePartitionID]ShareStateSummary{}}
}

func (f *fakePersister) InitializeState(ctx context.Context, group string, epoch int32, parts []ShareStateInit) ([]SharePartitionResult, error) {
	f.mu.Lock()
	gate := f.initGate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inits = append(f.inits, fakeInit{group: group, epoch: epoch, parts: slices.Clone(parts)})
	if len(f.initErr) > 0 {
		err := f.initErr[0]
		f.initErr = f.initErr[1:]
		return nil, err
	}
	var out []SharePartitionResult
	for _, p := range parts {
		r := SharePartitionResult{SharePartitionID: p.SharePartitionID, Err: f.initPartErr[p.SharePartitionID]}
		if r.Err == nil {
			if f.state[group] == nil {
				f.state[group] = map[SharePartitionID]ShareStateSummary{}
			}
			f.state[group][p.SharePartitionID] = ShareStateSummary{SharePartitionID: p.SharePartitionID, StateEpoch: epoch, StartOffset: p.StartOffset, DeliveryCompleteCount: -1}
		}
		out = append(out, r)
	}
	return out, nil
}

func (f *fakePersister) ReadSummary(_ context.Context, group string, parts []SharePartitionID) ([]ShareStateSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.summaryErr != nil {
		return nil, f.summaryErr
	}
	var out []ShareStateSummary
	for _, p := range parts {
		st, ok := f.state[group][p]
		if !ok {
			out = append(out, ShareStateSummary{SharePartitionID: p, Err: kerr.UnknownTopicOrPartition})
			continue
		}
		if f.deliveredOf != nil {
			st.DeliveryCompleteCount = f.deliveredOf(p)
		}
		out = append(out, st)
	}
	return out, nil
}

func (f *fakePersister) DeleteState(_ context.Context, group string, parts []SharePartitionID) ([]SharePartitionResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes = append(f.deletes, fakeDelete{group: group, parts: slices.Clone(parts)})
	if f.deleteErr != nil {
		return nil, f.deleteErr
	}
	var out []SharePartitionResult
	for _, p := range parts {
		r := SharePartitionResult{SharePartitionID: p, Err: f.partDelErr[p]}
		if r.Err == nil {
			delete(f.state[group], p)
		}
		out = append(out, r)
	}
	return out, nil
}

func (f *fakePersister) initCalls() []fakeInit {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.inits)
}

func (f *fakePersister) deleteCalls() []fakeDelete {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.deletes)
}

func (f *fakePersister) startOffset(group string, p SharePartitionID) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.state[group][p]
	return st.StartOffset, ok
}

// newShareHarness is a harness whose coordinator serves share groups
// with the returned fake persister.
func newShareHarness(t *testing.T, opts ...func(*Config)) (*harness, *fakePersister) {
	t.Helper()
	fp := newFakePersister()
	h := newHarness(t, append([]func(*Config){func(c *Config) { c.Share.Persister = fp }}, opts...)...)
	return h, fp
}

func (h *harness) sp(topic string, p int32) SharePartitionID {
	return SharePartitionID{TopicID: h.topicIDOf(topic), Partition: p}
}

// shareHB sends a ShareGroupHeartbeat v1 as client "share-client".
func (h *harness) shareHB(group, member string, epoch int32, topics []string) *kmsg.ShareGroupHeartbeatResponse {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version = 1
	req.GroupID, req.MemberID, req.MemberEpoch = group, member, epoch
	req.SubscribedTopicNames = topics
	return h.c.ShareGroupHeartbeat(clientCtx("share-client"), req)
}

// shareOK heartbeats and fails the test on an error.
func (h *harness) shareOK(group, member string, epoch int32, topics []string) *kmsg.ShareGroupHeartbeatResponse {
	h.t.Helper()
	resp := h.shareHB(group, member, epoch, topics)
	if resp.ErrorCode != 0 {
		h.t.Fatalf("share heartbeat %s/%s epoch %d: %s %v", group, member, epoch, errName(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	return resp
}

// named renders an assignment as "topic:p,p topic:p" by the image's names.
func (h *harness) named(a assignment) string {
	img := h.img.Load()
	var parts []string
	for _, t := range a.sortedTopics() {
		name := fmt.Sprintf("%x", t)
		if topic := img.TopicsByID[raftmeta.Uuid(t)]; topic != nil {
			name = topic.Name
		}
		parts = append(parts, fmt.Sprintf("%s:%v", name, a[t]))
	}
	slices.Sort(parts)
	return fmt.Sprint(parts)
}

// respAssignment is a heartbeat response's assignment, nil if none.
func respAssignment(resp *kmsg.ShareGroupHeartbeatResponse) assignment {
	if resp.Assignment == nil {
		return nil
	}
	a := assignment{}
	for _, tp := range resp.Assignment.TopicPartitions {
		a[tp.TopicID] = tp.Partitions
	}
	return normalizeAssignment(a)
}

// withShareGroup runs fn on a share group under its shard's lock (nil if
// there is none).
func (h *harness) withShareGroup(id string, fn func(g *shareGroup)) {
	s := h.c.shard(PartitionFor(id, testPartitions))
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.shareGroups[id])
}

// waitInitialized waits until the group's initialized partitions are want.
func (h *harness) waitInitialized(group, want string) {
	h.t.Helper()
	got := ""
	h.eventually("share partitions of "+group+" initialized as "+want, func() bool {
		h.withShareGroup(group, func(g *shareGroup) {
			got = "<no group>"
			if g != nil {
				got = h.named(g.partitions.initializedAssignment())
			}
		})
		return got == want
	})
}

// joinShare joins a member subscribing topics and heartbeats until the
// initialized partitions of its topics are assigned; it returns the last
// response.
func (h *harness) joinShare(group, member string, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	h.t.Helper()
	resp := h.shareOK(group, member, 0, topics)
	h.drainWrites()
	return resp
}

// changeImage publishes a copy of the image changed by fn, at the next offset.
func (h *harness) changeImage(fn func(img *raftmeta.Image)) {
	old := h.img.Load()
	img := *old
	img.Topics = maps.Clone(old.Topics)
	img.TopicsByID = maps.Clone(old.TopicsByID)
	fn(&img)
	img.Offset++
	h.img.Store(&img)
}

var kerrTimeout = kerr.RequestTimedOut

func isUnknownRecordType(err error) bool { return errors.Is(err, errUnknownRecordType) }

// codeName is an error code's Kafka name, NONE for 0.
func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	var ke *kerr.Error
	if errors.As(kerr.ErrorForCode(code), &ke) {
		return ke.Message
	}
	return fmt.Sprint(code)
}
