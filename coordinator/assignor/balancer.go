package assignor

import (
	"cmp"
	"slices"
)

// balancer picks, among the subscribers of one topic, the least loaded
// member to give a partition to and the most loaded one to take a partition
// from, the way Kafka's UniformHeterogeneousAssignmentBuilder's
// MemberAssignmentBalancer does.
//
// The subscribers are sorted by partition count. The least loaded range is
// the members at the lowest count level; they get one partition each in
// turn, after which the level rises by one and the range grows by the
// members already at that count. The most loaded range does the same from
// the top down. The counts are the builder's, which changes them as it
// hands partitions out; members outside the ranges are untouched, which is
// what lets a range grow by comparing their counts with the level.
type balancer struct {
	counts []int32 // the builder's partition count of each member
	// prefer, when set, puts the members it marks first among those with
	// the same count: they are the first to get a partition at a level.
	prefer []bool
	sorted []int32 // the subscribers, by count, then prefer, then index, ranges aside

	lowEnd   int   // sorted[:lowEnd] is the least loaded range
	lowLevel int32 // its count before this turn
	lowNext  int   // whose turn in it is next

	highStart, highEnd int   // sorted[highStart:highEnd] is the most loaded range
	highLevel          int32 // its count before this turn
	highNext           int   // whose turn in it is next, counting down
}

// init starts over with members (at least one) and returns the difference
// between the largest and the smallest count among them.
func (b *balancer) init(members []int32) int32 {
	b.sorted = append(b.sorted[:0], members...)
	slices.SortFunc(b.sorted, func(x, y int32) int {
		c := cmp.Compare(b.counts[x], b.counts[y])
		if c == 0 && b.prefer != nil {
			c = boolOrder(b.prefer[y], b.prefer[x])
		}
		return cmp.Or(c, cmp.Compare(x, y))
	})
	last := len(b.sorted) - 1
	b.lowEnd, b.lowNext = 0, 0
	b.lowLevel = b.counts[b.sorted[0]] - 1
	b.highStart, b.highEnd, b.highNext = len(b.sorted), len(b.sorted), last
	b.highLevel = b.counts[b.sorted[last]] + 1
	return b.counts[b.sorted[last]] - b.counts[b.sorted[0]]
}

// nextLeast returns the member to give the next partition to, assuming it
// is given.
func (b *balancer) nextLeast() int32 {
	if b.lowNext >= b.lowEnd {
		b.lowLevel++
		for b.lowEnd < len(b.sorted) && b.counts[b.sorted[b.lowEnd]] == b.lowLevel {
			b.lowEnd++
		}
		b.lowNext = 0
	}
	i := b.sorted[b.lowNext]
	b.lowNext++
	return i
}

// nextMost returns the member to take the next partition from, assuming it
// is taken, or -1 when no member is left that could give one up.
func (b *balancer) nextMost() int32 {
	if b.highNext < b.highStart {
		if b.highEnd <= b.highStart && b.highStart > 0 {
			// Every member of the range was excluded: start the level over
			// from the next member down, so the range does grow.
			b.highLevel = b.counts[b.sorted[b.highStart-1]]
		} else {
			b.highLevel--
		}
		for b.highStart > 0 && b.counts[b.sorted[b.highStart-1]] == b.highLevel {
			b.highStart--
		}
		b.highNext = b.highEnd - 1
	}
	if b.highNext < 0 {
		return -1
	}
	i := b.sorted[b.highNext]
	b.highNext--
	return i
}

// excludeMost drops the member nextMost last returned from the most loaded
// range, for it has no partition of the topic to give up.
func (b *balancer) excludeMost() {
	k, end := b.highNext+1, b.highEnd-1
	b.sorted[k], b.sorted[end] = b.sorted[end], b.sorted[k]
	b.highEnd--
}

// balanced reports whether the ranges' levels are at most one apart, when
// moving a partition from the one to the other no longer helps.
func (b *balancer) balanced() bool { return b.highLevel-b.lowLevel <= 1 }
