package topic

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
)

// compileTopicRegexes compiles the arguments of --regex, each matched
// against a whole topic name as rpk does ("orders" never matches
// "orders-dlq").
func compileTopicRegexes(exprs []string) ([]*regexp.Regexp, error) {
	res := make([]*regexp.Regexp, 0, len(exprs))
	for _, e := range exprs {
		if _, err := regexp.Compile(e); err != nil {
			return nil, fmt.Errorf("--regex: %v", err)
		}
		res = append(res, regexp.MustCompile("^(?:"+e+")$"))
	}
	return res, nil
}

// selection is what a command's topic arguments name.
type selection struct {
	names    []string         // the topics as given (without --regex)
	res      []*regexp.Regexp // with --regex
	internal bool             // --internal: all or matching topics include internal ones
}

// newSelection reads the topic arguments; a bad regex is a usage error.
func newSelection(args []string, regex, internal bool) (selection, error) {
	s := selection{internal: internal}
	if !regex {
		s.names = args
		return s, nil
	}
	res, err := compileTopicRegexes(args)
	s.res = res
	return s, err
}

// topics is the metadata of the selected topics: the named ones (a
// missing one with its error; an internal one named explicitly is shown),
// else the cluster's topics matching a regex, or all of them when there
// are no arguments (internal ones only with --internal).
func (s selection) topics(ctx context.Context, adm *kadm.Client) (kadm.TopicDetails, error) {
	if len(s.names) > 0 {
		return adm.ListTopicsWithInternal(ctx, s.names...)
	}
	list := adm.ListTopics
	if s.internal {
		list = adm.ListTopicsWithInternal
	}
	all, err := list(ctx)
	if err != nil || len(s.res) == 0 {
		return all, err
	}
	for name := range all {
		if !slices.ContainsFunc(s.res, func(re *regexp.Regexp) bool { return re.MatchString(name) }) {
			delete(all, name)
		}
	}
	return all, nil
}
