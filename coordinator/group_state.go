package coordinator

import "strings"

// groupState is a classic group's state (ClassicGroupState).
type groupState int8

const (
	stateEmpty groupState = iota
	statePreparingRebalance
	stateCompletingRebalance
	stateStable
	stateDead
)

// String is the state's name as Kafka reports it in DescribeGroups and
// ListGroups.
func (s groupState) String() string {
	switch s {
	case stateEmpty:
		return "Empty"
	case statePreparingRebalance:
		return "PreparingRebalance"
	case stateCompletingRebalance:
		return "CompletingRebalance"
	case stateStable:
		return "Stable"
	default:
		return "Dead"
	}
}

// validPrevious reports whether a group may move from prev to s
// (ClassicGroupState's validPreviousStates).
func (s groupState) validPrevious(prev groupState) bool {
	switch s {
	case stateEmpty:
		return prev == statePreparingRebalance
	case statePreparingRebalance:
		return prev == stateStable || prev == stateCompletingRebalance || prev == stateEmpty
	case stateCompletingRebalance:
		return prev == statePreparingRebalance
	case stateStable:
		return prev == stateCompletingRebalance
	default:
		return true
	}
}

// matchesFilter reports whether the state is in a ListGroups StatesFilter,
// compared case-insensitively as Kafka does (v4, KIP-518).
func (s groupState) matchesFilter(filter []string) bool {
	return stateMatchesFilter(s.String(), filter)
}

// stateMatchesFilter compares a state name with a ListGroups StatesFilter.
func stateMatchesFilter(state string, filter []string) bool {
	name := strings.ToLower(state)
	for _, f := range filter {
		if strings.ToLower(strings.TrimSpace(f)) == name {
			return true
		}
	}
	return false
}
