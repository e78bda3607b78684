package coordinator

import (
	"slices"
	"sort"

	"github.com/strait-io/strait/raftmeta"
)

const (
	// regexRefreshMinIntervalMs is the least time between two resolutions
	// of a group's regexes (REGEX_BATCH_REFRESH_MIN_INTERVAL_MS).
	regexRefreshMinIntervalMs = 10_000
	// regexRefreshMaxIntervalMs resolves them again even without new
	// topics (group.consumer.regex.refresh.interval.ms' default).
	regexRefreshMaxIntervalMs = 10 * 60_000
)

// maybeUpdateRegexes notes a change of the member's regex and resolves the
// group's regexes when needed: a regex nobody subscribed to yet, a newer
// metadata image (topics may have been created) once the last resolution
// is regexRefreshMinIntervalMs old, or regexRefreshMaxIntervalMs passing
// (GroupMetadataManager.maybeUpdateRegularExpressions and
// handleRegularExpressionsResult, resolved synchronously here). It returns
// the regexes as they will be once recs are replayed, whether the member's
// regex changed, and whether the group epoch must be bumped for it (a
// regex that is resolved changed, or its topics did).
func (s *shard) maybeUpdateRegexes(g *consumerGroup, member, updated *consumerMember, img *raftmeta.Image, now int64, recs *[]cgRecord) (map[string]resolvedRegex, bool, bool, *cgError) {
	oldRe, newRe := member.subscribedTopicRegex, updated.subscribedTopicRegex
	regexes := g.regexes
	changed, bump, refresh := false, false, false
	counts := g.subscribedRegexCounts()
	if g.member(member.id) == nil {
		// A new member, or one replacing a static member whose regex is
		// still counted.
		oldRe = ""
		if old := g.staticMember(updated.instanceID); old != nil && old.id != member.id {
			oldRe = old.subscribedTopicRegex
		}
	}
	if oldRe != newRe {
		changed = true
		if oldRe != "" && counts[oldRe] == 1 {
			*recs = append(*recs, cgTombstone(cgRecordRegularExpression, g.id, "", oldRe))
			regexes = withoutRegex(regexes, oldRe)
		}
		switch {
		case newRe != "" && counts[newRe] == 0:
			if _, err := compileTopicRegex(newRe); err != nil {
				return nil, false, false, cgErrorf(invalidRegularExpression, "SubscribedTopicRegex `%s` is not a valid regular expression: %v.", newRe, err)
			}
			refresh = true
		case newRe != "":
			_, bump = regexes[newRe]
		default:
			bump = oldRe != ""
		}
		if oldRe != "" {
			counts[oldRe]--
			if counts[oldRe] == 0 {
				delete(counts, oldRe)
			}
		}
		if newRe != "" {
			counts[newRe]++
		}
	}
	if len(counts) == 0 {
		return regexes, changed, bump, nil
	}
	if !refresh && now <= g.lastRegexRefreshMs+regexRefreshMinIntervalMs {
		return regexes, changed, bump, nil
	}
	for re := range counts {
		r, ok := regexes[re]
		if !ok || r.version < int64(img.Offset) {
			refresh = true
		}
	}
	if !refresh && now <= g.lastRegexRefreshMs+regexRefreshMaxIntervalMs {
		return regexes, changed, bump, nil
	}
	g.lastRegexRefreshMs = now
	resolved := make(map[string]resolvedRegex, len(regexes))
	for k, v := range regexes {
		resolved[k] = v
	}
	for _, re := range sortedKeysOf(counts) {
		topics, ok := resolveRegex(re, img)
		if !ok {
			continue // cannot compile: left unresolved, matching nothing
		}
		old, had := resolved[re]
		if had && slices.Equal(old.topics, topics) {
			continue
		}
		r := resolvedRegex{topics: topics, version: int64(img.Offset), timestamp: now}
		resolved[re] = r
		*recs = append(*recs, newRegexRecord(g.id, re, r))
		bump = true
	}
	return resolved, changed, bump, nil
}

// resolveRegex lists the topics whose whole name matches re (TopicRegexResolver).
func resolveRegex(re string, img *raftmeta.Image) ([]string, bool) {
	rx, err := compileTopicRegex(re)
	if err != nil {
		return nil, false
	}
	topics := []string{}
	for name := range img.Topics {
		if rx.MatchString(name) {
			topics = append(topics, name)
		}
	}
	sort.Strings(topics)
	return topics, true
}
