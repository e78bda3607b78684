package coordinator

import (
	"context"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The GroupTypes of ListGroups (KIP-848's Group.GroupType).
const (
	groupTypeClassic  = "classic"
	groupTypeConsumer = "consumer"
)

// ListGroups: v0-5
//
// Behavior:
//   - Lists the groups of every partition this broker coordinates, sorted
//     by group id; while any of them loads the answer is
//     COORDINATOR_LOAD_IN_PROGRESS, as Kafka's.
//
// Version notes:
//   - v4: StatesFilter, case-insensitive (KIP-518).
//   - v5: TypesFilter, "classic", "consumer" (KIP-848) or "share"
//     (KIP-932), case-insensitive.
//
// A consumer group is listed with its state (Empty, Assigning,
// Reconciling, Stable), protocol type "consumer" and type "consumer".
func (c *GroupCoordinator) ListGroups(ctx context.Context, req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := kmsg.NewPtrListGroupsResponse()
	resp.Version = req.Version
	var states, types []string
	if req.Version >= 4 {
		states = req.StatesFilter
	}
	if req.Version >= 5 {
		types = req.TypesFilter
	}
	typeOK := func(typ string) bool {
		if len(types) == 0 {
			return true
		}
		for _, t := range types {
			if strings.EqualFold(strings.TrimSpace(t), typ) {
				return true
			}
		}
		return false
	}
	for _, s := range c.allShards() {
		s.mu.Lock()
		switch s.state {
		case shardLoading:
			s.mu.Unlock()
			resp.ErrorCode = coordinatorLoadInProgress
			resp.Groups = nil
			return resp
		case shardClosed:
			s.mu.Unlock()
			continue
		}
		for _, g := range s.consumerGroups {
			if !typeOK(groupTypeConsumer) || (len(states) > 0 && !stateMatchesFilter(g.state().String(), states)) {
				continue
			}
			lg := kmsg.NewListGroupsResponseGroup()
			lg.Group = g.id
			lg.ProtocolType = consumerProtocolType
			lg.GroupState = g.state().String()
			lg.GroupType = groupTypeConsumer
			resp.Groups = append(resp.Groups, lg)
		}
		resp.Groups = append(resp.Groups, s.listShareGroups(typeOK, states)...)
		for _, g := range s.groups {
			if !typeOK(groupTypeClassic) || (len(states) > 0 && !g.state.matchesFilter(states)) {
				continue
			}
			lg := kmsg.NewListGroupsResponseGroup()
			lg.Group = g.id
			lg.ProtocolType = g.protocolType
			lg.GroupState = g.state.String()
			lg.GroupType = groupTypeClassic
			resp.Groups = append(resp.Groups, lg)
		}
		s.mu.Unlock()
	}
	sort.Slice(resp.Groups, func(i, j int) bool { return resp.Groups[i].Group < resp.Groups[j].Group })
	return resp
}
