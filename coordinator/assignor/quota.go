package assignor

import (
	"cmp"
	"slices"
)

// stickyQuotas splits total partitions (or, for share groups, places on
// partitions) among at least one member for a balanced assignment: each
// gets total/members and total%members of them get one more. held[i] is
// how many member i could keep of what it holds.
//
// The extra ones go first to the members holding more than the minimum,
// those holding the most first, so that as few partitions move as balance
// allows; then to the members holding fewer than the minimum, which get
// new partitions anyway; and last to those holding exactly the minimum,
// whose assignment is then the only one to change for it. So a member
// that leaves while another joins is replaced by it, the others keeping
// their assignment as it is (Kafka's testMemberReplacementStickiness).
// Ties go to the lower index.
//
// Kafka's UniformHomogeneousAssignmentBuilder and SimpleAssignor give the
// extras to the first members in the group's member order whatever they
// hold, which can take a partition from a member holding one more than
// the minimum and hand another to a member at the minimum, a move balance
// did not need.
func stickyQuotas(total int, held []int) []int {
	quotas := make([]int, len(held))
	quota, extra := total/len(held), total%len(held)
	rank := func(i int) int {
		switch {
		case held[i] > quota:
			return 0
		case held[i] < quota:
			return 1
		}
		return 2
	}
	order := make([]int, len(held))
	for i := range order {
		order[i] = i
		quotas[i] = quota
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if ra, rb := rank(a), rank(b); ra != rb || ra != 0 {
			return cmp.Compare(ra, rb)
		}
		return cmp.Compare(held[b], held[a])
	})
	for _, i := range order[:extra] {
		quotas[i]++
	}
	return quotas
}
