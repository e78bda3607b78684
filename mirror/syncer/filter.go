package syncer

import (
	"fmt"
	"regexp"
	"strings"
)

// nameFilter is an include and an exclude list of regular expressions
// matching whole names (mirror.topics.include/exclude,
// mirror.groups.include/exclude): a name passes if it matches an include
// pattern and no exclude pattern (exclude wins, digest §5.1). The
// prototype joins the patterns as ^(p1|p2…)$, as Java's
// Pattern.matcher(name).matches(); an empty include list passes nothing.
type nameFilter struct {
	include, exclude *regexp.Regexp
}

// newNameFilter compiles the two comma-separated lists (Kafka's LIST type:
// entries trimmed, empty ones skipped).
func newNameFilter(include, exclude string) (nameFilter, error) {
	in, err := joinPatterns(include)
	if err != nil {
		return nameFilter{}, fmt.Errorf("include: %w", err)
	}
	ex, err := joinPatterns(exclude)
	if err != nil {
		return nameFilter{}, fmt.Errorf("exclude: %w", err)
	}
	return nameFilter{include: in, exclude: ex}, nil
}

// joinPatterns compiles a pattern list to one whole-name regexp, nil for
// an empty list.
func joinPatterns(list string) (*regexp.Regexp, error) {
	ps := splitList(list)
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

// matches reports whether name is included and not excluded.
func (f nameFilter) matches(name string) bool {
	if f.include == nil || !f.include.MatchString(name) {
		return false
	}
	return f.exclude == nil || !f.exclude.MatchString(name)
}

// splitList splits a Kafka LIST value.
func splitList(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
