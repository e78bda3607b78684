package faultnet

import (
	"cmp"
	"fmt"
	"slices"
)

// Link is the direction from one node to another.
type Link struct {
	From, To int32
}

func (l Link) String() string { return fmt.Sprintf("%d->%d", l.From, l.To) }

// LinkStats counts what happened on one link, for test logs.
type LinkStats struct {
	Link Link
	// Dials counts dials From made to an address To owns; DialsRefused
	// those refused because the link was cut.
	Dials, DialsRefused int64
	// Broken counts connections dialed From->To that a Partition or
	// Isolate broke.
	Broken int64
	// Dropped counts connections reset by the drop set on the link From->To
	// (SetLinkDrop), whichever side dialed them.
	Dropped int64
}

func (s LinkStats) String() string {
	return fmt.Sprintf("%v dials=%d refused=%d broken=%d dropped=%d",
		s.Link, s.Dials, s.DialsRefused, s.Broken, s.Dropped)
}

// Stats returns the counters of every link that saw a dial or a fault,
// sorted by From then To.
func (n *Network) Stats() []LinkStats {
	n.mu.Lock()
	out := make([]LinkStats, 0, len(n.stats))
	for _, s := range n.stats {
		out = append(out, *s)
	}
	n.mu.Unlock()
	slices.SortFunc(out, func(a, b LinkStats) int {
		return cmp.Or(cmp.Compare(a.Link.From, b.Link.From), cmp.Compare(a.Link.To, b.Link.To))
	})
	return out
}

// statsLocked returns the counters of l, creating them.
// n.mu must be held.
func (n *Network) statsLocked(l Link) *LinkStats {
	s := n.stats[l]
	if s == nil {
		s = &LinkStats{Link: l}
		n.stats[l] = s
	}
	return s
}

func (n *Network) count(l Link, f func(*LinkStats)) {
	n.mu.Lock()
	f(n.statsLocked(l))
	n.mu.Unlock()
}
