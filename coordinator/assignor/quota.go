package assignor

import (
	"cmp"
	"slices"
)

// stickyQuotas splits total partitions (or, for share groups, places on
// partitions) among at least one member for a balanced assignment: each
// gets total/members and total%members of them get one more. held[i] is
// how many member i could keep of what it holds; the extra ones go to
// those holding the most, ties to the lower index, so that as few
// partitions move as balance allows.
//
// Kafka's UniformHomogeneousAssignmentBuilder and SimpleAssignor give the
// extras to the first members in the group's member order whatever they
// hold, which can take a partition from a member holding one more than
// the minimum and hand another to a member at the minimum, a move balance
// did not need.
func stickyQuotas(total int, held []int) []int {
	quotas := make([]int, len(held))
	quota, extra := total/len(held), total%len(held)
	order := make([]int, len(held))
	for i := range order {
		order[i] = i
		quotas[i] = quota
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(held[b], held[a]) })
	for _, i := range order[:extra] {
		quotas[i]++
	}
	return quotas
}
