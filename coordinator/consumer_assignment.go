package coordinator

import (
	"bytes"
	"maps"
	"slices"
	"sort"
)

// assignment maps topic ids to partition ids: a member's assigned,
// pending-revocation or target partitions (Kafka's Map<Uuid, Set<Integer>>).
// The canonical form keeps each partition list sorted without duplicates
// and leaves out topics without partitions, so two assignments are equal
// exactly when equalAssignments says so. The functions below return new
// maps and never change their arguments.
type assignment map[topicID][]int32

// normalizeAssignment returns a in canonical form.
func normalizeAssignment(a assignment) assignment {
	out := assignment{}
	for t, ps := range a {
		if len(ps) == 0 {
			continue
		}
		ps = slices.Clone(ps)
		slices.Sort(ps)
		out[t] = slices.Compact(ps)
	}
	return out
}

func (a assignment) contains(t topicID, p int32) bool {
	_, ok := slices.BinarySearch(a[t], p)
	return ok
}

// count is the number of partitions.
func (a assignment) count() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

// sortedTopics returns the topic ids in byte order, for deterministic
// records and responses.
func (a assignment) sortedTopics() []topicID {
	ts := make([]topicID, 0, len(a))
	for t := range a {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return bytes.Compare(ts[i][:], ts[j][:]) < 0 })
	return ts
}

func equalAssignments(a, b assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for t, ps := range a {
		if !slices.Equal(ps, b[t]) {
			return false
		}
	}
	return true
}

// filterAssignment keeps the partitions of a for which keep is true.
func filterAssignment(a assignment, keep func(t topicID, p int32) bool) assignment {
	out := assignment{}
	for t, ps := range a {
		var kept []int32
		for _, p := range ps {
			if keep(t, p) {
				kept = append(kept, p)
			}
		}
		if len(kept) > 0 {
			out[t] = kept
		}
	}
	return out
}

// unionAssignments returns a ∪ b.
func unionAssignments(a, b assignment) assignment {
	out := assignment{}
	for t, ps := range a {
		out[t] = append(out[t], ps...)
	}
	for t, ps := range b {
		out[t] = append(out[t], ps...)
	}
	return normalizeAssignment(out)
}

// assignmentEpochs maps a member's partitions to the member epoch at
// which it was given each (KIP-1251's AssignmentEpochs). Like assignment,
// it is never changed in place once a member holds it.
type assignmentEpochs map[topicID]map[int32]int32

func (e assignmentEpochs) equal(o assignmentEpochs) bool {
	if len(e) != len(o) {
		return false
	}
	for t, byP := range e {
		if !maps.Equal(byP, o[t]) {
			return false
		}
	}
	return true
}

// ownedPartitions is the TopicPartitions of a ConsumerGroupHeartbeat: the
// partitions the member reports it owns, nil when the request left the
// field out ("unchanged").
type ownedPartitions []ownedTopic

type ownedTopic struct {
	topic      topicID
	partitions []int32
}

// ownsAny reports whether the member still owns one of a's partitions
// (CurrentAssignmentBuilder.ownsRevokedPartitions): a member that did not
// say what it owns is taken to own everything.
func (o ownedPartitions) ownsAny(a assignment) bool {
	if o == nil {
		return true
	}
	for _, t := range o {
		for _, p := range t.partitions {
			if a.contains(t.topic, p) {
				return true
			}
		}
	}
	return false
}

// subsetOf reports whether every owned partition is in a
// (GroupMetadataManager.isSubset); false when the field was left out.
func (o ownedPartitions) subsetOf(a assignment) bool {
	if o == nil {
		return false
	}
	for _, t := range o {
		if _, ok := a[t.topic]; !ok {
			return false
		}
		for _, p := range t.partitions {
			if !a.contains(t.topic, p) {
				return false
			}
		}
	}
	return true
}
