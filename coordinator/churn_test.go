package coordinator

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"
)

// TestGroupChurn runs members that join, sync, heartbeat, commit and leave
// concurrently, and checks what every generation looked like to them:
// one leader, whose member list is exactly the members that got that
// generation, and assignments delivered as the leader sent them.
func TestGroupChurn(t *testing.T) {
	h := newHarness(t)
	const members, rounds = 5, 12

	type genView struct {
		leader    string
		list      []string          // the leader's member list
		joined    map[string]bool   // members answered with this generation
		sent      map[string][]byte // the leader's assignment
		delivered map[string][]byte
	}
	var mu sync.Mutex
	gens := map[int32]*genView{}
	view := func(g int32) *genView {
		v := gens[g]
		if v == nil {
			v = &genView{joined: map[string]bool{}, delivered: map[string][]byte{}}
			gens[g] = v
		}
		return v
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format, args...)
	}

	var wg sync.WaitGroup
	for i := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			m := h.newMember("churn", fmt.Sprintf("c%d", i))
			for round := 0; round < rounds; {
				r := m.join()
				switch r.ErrorCode {
				case 0:
				case unknownMemberID:
					m.id = ""
					continue
				default:
					fail("member %d join: %s", i, errName(r.ErrorCode))
					return
				}
				mu.Lock()
				v := view(r.Generation)
				if v.leader == "" {
					v.leader = r.LeaderID
				} else if v.leader != r.LeaderID {
					fail("generation %d has leaders %s and %s", r.Generation, v.leader, r.LeaderID)
				}
				v.joined[m.id] = true
				var assign map[string][]byte
				if r.LeaderID == m.id {
					for _, jm := range r.Members {
						v.list = append(v.list, jm.MemberID)
					}
					assign = map[string][]byte{}
					for k, jm := range r.Members {
						assign[jm.MemberID] = []byte(fmt.Sprintf("gen%d-%d", r.Generation, k))
					}
					v.sent = assign
				}
				mu.Unlock()
				s := m.sync(assign)
				if s.ErrorCode == rebalanceInProgress || s.ErrorCode == unknownMemberID {
					continue
				}
				if s.ErrorCode != 0 {
					fail("member %d sync gen %d: %s", i, r.Generation, errName(s.ErrorCode))
					return
				}
				mu.Lock()
				view(r.Generation).delivered[m.id] = s.MemberAssignment
				mu.Unlock()
				round++
				// Heartbeat and commit until a rebalance, or a few times.
				for beat := 0; beat < 20; beat++ {
					code := m.heartbeat()
					if code == rebalanceInProgress {
						break
					}
					if code != 0 {
						fail("member %d heartbeat gen %d: %s", i, m.generation, errName(code))
						return
					}
					c := commitCodes(h.commit(9, "churn", m.id, m.generation, map[string]map[int32]int64{"foo": {int32(i % 3): int64(round)}}))
					if code := c[fmt.Sprintf("foo/%d", i%3)]; code != 0 && code != rebalanceInProgress && code != illegalGeneration {
						fail("member %d commit: %s", i, errName(code))
						return
					}
					time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
				}
				if rng.IntN(4) == 0 {
					m.leave()
					m.id = ""
				}
			}
			m.leave()
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(gens) < 3 {
		t.Fatalf("only %d generations: the members did not churn", len(gens))
	}
	for g, v := range gens {
		if v.list == nil {
			t.Fatalf("generation %d: the leader's response was not seen", g)
		}
		list := append([]string(nil), v.list...)
		sort.Strings(list)
		var joined []string
		for id := range v.joined {
			joined = append(joined, id)
		}
		sort.Strings(joined)
		if fmt.Sprint(list) != fmt.Sprint(joined) {
			t.Fatalf("generation %d: leader's list %v, members answered %v", g, list, joined)
		}
		for id, a := range v.delivered {
			if !bytes.Equal(a, v.sent[id]) {
				t.Fatalf("generation %d: %s got %q, leader sent %q", g, id, a, v.sent[id])
			}
		}
	}
	if st, _, n, _ := h.groupState("churn"); n != 0 || (st != stateEmpty && st != statePreparingRebalance) {
		t.Fatalf("after everyone left: %s with %d members", st, n)
	}
}
