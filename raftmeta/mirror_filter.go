package raftmeta

import (
	"fmt"
	"regexp"
	"strings"
)

// MirrorNameFilter is an include and an exclude list of regular
// expressions matching whole names (mirror.topics.include/exclude,
// mirror.groups.include/exclude, mirror.scram.users.include/exclude): a
// name passes if it matches an include pattern and no exclude pattern
// (exclude wins, digest §5.1). The prototype joins the patterns as
// ^(p1|p2…)$, as Java's Pattern.matcher(name).matches(); an empty include
// list passes nothing. The syncer selects with it, and the controller
// checks a SCRAM sync's users with the same rules.
type MirrorNameFilter struct {
	include, exclude *regexp.Regexp
}

// NewMirrorNameFilter compiles the two comma-separated lists (Kafka's LIST
// type: entries trimmed, empty ones skipped).
func NewMirrorNameFilter(include, exclude string) (MirrorNameFilter, error) {
	in, err := joinPatterns(include)
	if err != nil {
		return MirrorNameFilter{}, fmt.Errorf("include: %w", err)
	}
	ex, err := joinPatterns(exclude)
	if err != nil {
		return MirrorNameFilter{}, fmt.Errorf("exclude: %w", err)
	}
	return MirrorNameFilter{include: in, exclude: ex}, nil
}

// joinPatterns compiles a pattern list to one whole-name regexp, nil for
// an empty list.
func joinPatterns(list string) (*regexp.Regexp, error) {
	ps := SplitMirrorList(list)
	if len(ps) == 0 {
		return nil, nil
	}
	for i, p := range ps {
		if _, err := regexp.Compile(p); err != nil {
			return nil, fmt.Errorf("pattern %q: %w", p, err)
		}
		ps[i] = "(?:" + p + ")"
	}
	return regexp.Compile("^(?:" + strings.Join(ps, "|") + ")$")
}

// Matches reports whether name is included and not excluded.
func (f MirrorNameFilter) Matches(name string) bool {
	if f.include == nil || !f.include.MatchString(name) {
		return false
	}
	return f.exclude == nil || !f.exclude.MatchString(name)
}

// IncludesAny reports whether the include list has a pattern (an empty
// one passes nothing).
func (f MirrorNameFilter) IncludesAny() bool { return f.include != nil }

// SplitMirrorList splits a Kafka LIST value of a mirror config.
func SplitMirrorList(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// MirrorConfigValue is a mirror config's value in configs, or its
// default.
func MirrorConfigValue(configs map[string]string, key string) string {
	if v, ok := configs[key]; ok {
		return v
	}
	v, _ := MirrorConfigDefault(key)
	return v
}

// MirrorScramUsers is the filter of a mirror's SCRAM user sync
// (mirror.scram.users.include and .exclude).
func MirrorScramUsers(configs map[string]string) (MirrorNameFilter, error) {
	f, err := NewMirrorNameFilter(MirrorConfigValue(configs, "mirror.scram.users.include"), MirrorConfigValue(configs, "mirror.scram.users.exclude"))
	if err != nil {
		return f, fmt.Errorf("mirror.scram.users.%w", err)
	}
	return f, nil
}
