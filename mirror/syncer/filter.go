package syncer

import "github.com/strait-io/strait/raftmeta"

// nameFilter is an include and an exclude list of regular expressions
// matching whole names (mirror.topics.include/exclude,
// mirror.groups.include/exclude, mirror.scram.users.include/exclude):
// raftmeta.MirrorNameFilter, which the controller checks a SCRAM sync's
// users with too.
type nameFilter struct{ f raftmeta.MirrorNameFilter }

// newNameFilter compiles the two comma-separated lists.
func newNameFilter(include, exclude string) (nameFilter, error) {
	f, err := raftmeta.NewMirrorNameFilter(include, exclude)
	return nameFilter{f}, err
}

// matches reports whether name is included and not excluded.
func (f nameFilter) matches(name string) bool { return f.f.Matches(name) }

// splitList splits a Kafka LIST value.
func splitList(v string) []string { return raftmeta.SplitMirrorList(v) }
