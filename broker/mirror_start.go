package broker

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// defaultMirrorTopicsExclude is mirror.topics.exclude's default: the
// source's internal topics are never mirrored by pattern.
const defaultMirrorTopicsExclude = "__.*"

// StartMirrorTopics resolves the request's patterns against the source
// cluster, which the controller cannot reach, and forwards the request
// with the resolved Topics (name, source topic id, partition count: the
// Strait tag the controller creates missing destination topics from).
//
// Behavior:
//   - A request that already carries Topics is forwarded as it is.
//   - The mirror must exist in this broker's image (UNKNOWN_CLUSTER_MIRROR)
//     and the request must name patterns (INVALID_REQUEST), each a valid
//     regular expression matching whole names, as Kafka's
//     Pattern.matches (INVALID_REQUEST naming the pattern).
//   - The source is asked through a short-lived client built from the
//     mirror's configs (bootstrap.servers, security.protocol, sasl.*,
//     ssl.*). A source that does not answer within the request's
//     TimeoutMs (30 s without one) fails the request with
//     BROKER_NOT_AVAILABLE and a message naming the mirror and its
//     bootstrap servers; configs this version cannot use with
//     INVALID_CONFIG.
//   - A pattern that is a plain name (admin.TopicPattern's "^name$", or
//     "name") names one topic: absent from the source it gets
//     UNKNOWN_TOPIC_OR_PARTITION, excluded it gets INVALID_REQUEST, each
//     in its own topic result. Other patterns match the source's topics
//     that are not internal; matching none is no error for the pattern.
//   - Excluded are the topics matching ExcludePatterns (tag 0) or the
//     mirror's mirror.topics.exclude (default "__.*").
//   - A mirror whose bootstrap servers are this cluster's listeners, or
//     whose source answers with this cluster's id, is INVALID_CONFIG for
//     the whole request (mirror_self.go): it would wipe every topic.
//   - An existing destination topic in no mirror or stopped that holds
//     records the source has no LME for (a start would truncate them all)
//     is INVALID_REQUEST naming its partitions and records, unless
//     TruncateExisting (tag 2) or the mirror config mirror.truncate.existing
//     allows it: its records are then deleted first and reported in the
//     topic's DroppedRecords (mirror_existing.go).
//   - DryRun (tag 3) changes nothing: each topic's answer carries, per
//     partition, what the start's log alignment would truncate
//     (Truncation, tag 2; mirror_dryrun.go), and nothing is forwarded.
//   - Nothing left to start is INVALID_REQUEST for the whole request,
//     unless some topic has its own error; the forwarded answer carries
//     the controller's per-topic results plus this broker's.
func (s mirrorService) StartMirrorTopics(ctx context.Context, req *mirrormsg.StartMirrorTopicsRequest) *mirrormsg.StartMirrorTopicsResponse {
	if len(req.Topics) > 0 && !req.DryRun {
		return s.n.forward(ctx, req).(*mirrormsg.StartMirrorTopicsResponse)
	}
	resp := req.ResponseKind().(*mirrormsg.StartMirrorTopicsResponse)
	resp.MirrorName = req.MirrorName
	fail := func(e *kerr.Error, format string, args ...any) *mirrormsg.StartMirrorTopicsResponse {
		resp.ErrorCode, resp.ErrorMessage = e.Code, kmsg.StringPtr(fmt.Sprintf(format, args...))
		return resp
	}
	img := s.n.quorum.Image()
	if _, ok := img.Mirrors[req.MirrorName]; !ok {
		return fail(mirrormsg.UnknownClusterMirror, "Cluster mirror '%s' does not exist.", req.MirrorName)
	}
	if len(req.IncludePatterns) == 0 {
		return fail(kerr.InvalidRequest, "StartMirrorTopics names no topics.")
	}
	sel, err := newTopicSelector(req.IncludePatterns, req.ExcludePatterns, img.MirrorConfig(req.MirrorName))
	if err != nil {
		return fail(kerr.InvalidRequest, "%s", err)
	}

	timeout := forwardTimeout
	if req.TimeoutMs > 0 {
		timeout = time.Duration(req.TimeoutMs) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cfgs := img.MirrorConfig(req.MirrorName)
	if e := s.n.checkNotSelf(ctx, req.MirrorName, cfgs, false); e != nil {
		resp.ErrorCode, resp.ErrorMessage = e.code, kmsg.StringPtr(e.msg)
		return resp
	}
	src, err := s.n.mirrorSource(req.MirrorName, cfgs, timeout)
	if err != nil {
		return fail(kerr.InvalidConfig, "Cluster mirror '%s': %v", req.MirrorName, err)
	}
	defer src.Close()
	topics, local, e := resolveSourceTopics(ctx, src, req.MirrorName, cfgs, sel)
	if e == nil && req.DryRun {
		resp.Topics = s.n.dryRunStart(ctx, src, img, topics, local)
		return resp
	}
	var guard existingRecordsGuard
	if e == nil {
		guard, e = s.n.guardExistingRecords(ctx, src, img, req, topics, local)
		topics, local = guard.topics, guard.local
	}
	if e != nil {
		resp.ErrorCode, resp.ErrorMessage = e.code, kmsg.StringPtr(e.msg)
		return resp
	}
	if len(topics) == 0 {
		if len(local) == 0 {
			return fail(kerr.InvalidRequest, "No topic of the source cluster of mirror '%s' matches %s.", req.MirrorName, strings.Join(req.IncludePatterns, ", "))
		}
		resp.Topics = local
		return resp
	}
	fwd := *req
	fwd.Topics = topics
	if dl, ok := ctx.Deadline(); ok {
		fwd.TimeoutMs = int32(max(time.Until(dl).Milliseconds(), 1))
	}
	out := s.n.forward(ctx, &fwd).(*mirrormsg.StartMirrorTopicsResponse)
	if out.ErrorCode == 0 {
		// As after a forwarded CreateTopics: a request right after this
		// one finds the topics (and their mirror.name) here too.
		var started []string
		for _, t := range out.Topics {
			if t.ErrorCode == 0 {
				started = append(started, t.Name)
			}
		}
		s.n.waitForMirrorTopics(ctx, req.MirrorName, started)
		out.Topics = append(out.Topics, local...)
	}
	// Deleted whatever the controller answered: say so.
	for i := range out.Topics {
		if rs := guard.dropped[out.Topics[i].Name]; len(rs) > 0 {
			out.Topics[i].DroppedRecords = droppedRecords(rs)
		}
	}
	return out
}

// waitForMirrorTopics waits until this node's image has the named topics
// in mirror, or gives up quietly as waitForTopics does.
func (n *Node) waitForMirrorTopics(ctx context.Context, mirror string, names []string) {
	n.waitForImage(ctx, func(img *raftmeta.Image) bool {
		for _, name := range names {
			if m, _ := img.TopicMirror(name); m != mirror {
				return false
			}
		}
		return true
	})
}

// topicSelector is the include and exclude patterns of a
// StartMirrorTopics, compiled to match whole names.
type topicSelector struct {
	// names are the include patterns that are plain names, in request
	// order; patterns the others.
	names    []string
	patterns []*regexp.Regexp
	exclude  []*regexp.Regexp
}

func newTopicSelector(include, exclude []string, mirrorConfigs map[string]string) (*topicSelector, error) {
	sel := &topicSelector{}
	for _, p := range include {
		if name, ok := literalPattern(p); ok {
			if !slices.Contains(sel.names, name) {
				sel.names = append(sel.names, name)
			}
			continue
		}
		re, err := wholeName(p)
		if err != nil {
			return nil, fmt.Errorf("include pattern %q: %w", p, err)
		}
		sel.patterns = append(sel.patterns, re)
	}
	ex := slices.Clone(exclude)
	cfgExclude, set := mirrorConfigs["mirror.topics.exclude"]
	if !set {
		cfgExclude = defaultMirrorTopicsExclude
	}
	for _, p := range strings.Split(cfgExclude, ",") {
		if p = strings.TrimSpace(p); p != "" {
			ex = append(ex, p)
		}
	}
	for _, p := range ex {
		re, err := wholeName(p)
		if err != nil {
			return nil, fmt.Errorf("exclude pattern %q: %w", p, err)
		}
		sel.exclude = append(sel.exclude, re)
	}
	return sel, nil
}

// wholeName compiles p to match whole topic names, as Java's
// Pattern.matcher(name).matches() in Kafka's topic filters.
func wholeName(p string) (*regexp.Regexp, error) {
	return regexp.Compile("^(?:" + p + ")$")
}

// literalPattern reports whether p matches exactly one name, and which:
// a literal, optionally anchored at both ends (admin.TopicPattern).
func literalPattern(p string) (string, bool) {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return "", false
	}
	re = re.Simplify()
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	if len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
		subs = subs[1:]
	}
	if len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText {
		subs = subs[:len(subs)-1]
	}
	if len(subs) != 1 || subs[0].Op != syntax.OpLiteral || subs[0].Flags&syntax.FoldCase != 0 {
		return "", false
	}
	return string(subs[0].Rune), true
}

// excludedBy returns the exclude pattern name matches, or "".
func (sel *topicSelector) excludedBy(name string) string {
	for _, re := range sel.exclude {
		if re.MatchString(name) {
			s := re.String()
			return s[len("^(?:") : len(s)-len(")$")]
		}
	}
	return ""
}

// matchesPattern reports whether a non-literal include pattern matches.
func (sel *topicSelector) matchesPattern(name string) bool {
	for _, re := range sel.patterns {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// startError is a whole-request error of StartMirrorTopics.
type startError struct {
	code int16
	msg  string
}

// resolveSourceTopics asks the mirror's source for the topics sel selects:
// the topics to start, with their source ids and partition counts, and
// per-topic errors for named topics that cannot be started. A source that
// is this cluster (source.ErrSelfMirror) fails the whole request.
func resolveSourceTopics(ctx context.Context, src *source.Cluster, mirror string, cfgs map[string]string, sel *topicSelector) ([]mirrormsg.StartMirrorTopicsRequestSourceTopic, []mirrormsg.StartMirrorTopicsResponseTopicResult, *startError) {
	bootstrap := source.BootstrapServers(cfgs)
	unreachable := func(err error) *startError {
		if errors.Is(err, source.ErrSelfMirror) {
			return selfMirrorError(mirror, err)
		}
		return &startError{kerr.BrokerNotAvailable.Code, fmt.Sprintf(
			"Could not read the topics of the source cluster of mirror '%s' (bootstrap.servers=%s): %v",
			mirror, strings.Join(bootstrap, ","), err)}
	}
	// First of all: is it another cluster?
	if _, err := src.ClusterID(ctx); err != nil {
		return nil, nil, unreachable(err)
	}

	candidates := slices.Clone(sel.names)
	if len(sel.patterns) > 0 {
		all, err := listSourceTopics(ctx, src.Client())
		if err != nil {
			return nil, nil, unreachable(err)
		}
		for _, name := range all {
			if sel.matchesPattern(name) && !slices.Contains(candidates, name) && sel.excludedBy(name) == "" {
				candidates = append(candidates, name)
			}
		}
	}
	if len(candidates) == 0 {
		return nil, nil, nil
	}
	infos, err := src.Topics(ctx, candidates...)
	if err != nil {
		return nil, nil, unreachable(err)
	}
	var topics []mirrormsg.StartMirrorTopicsRequestSourceTopic
	var local []mirrormsg.StartMirrorTopicsResponseTopicResult
	topicError := func(name string, e *kerr.Error, format string, args ...any) {
		r := mirrormsg.NewStartMirrorTopicsResponseTopicResult()
		r.Name, r.ErrorCode, r.ErrorMessage = name, e.Code, kmsg.StringPtr(fmt.Sprintf(format, args...))
		local = append(local, r)
	}
	named := map[string]bool{}
	for _, name := range sel.names {
		named[name] = true
	}
	for _, name := range candidates {
		info := infos[name]
		if named[name] {
			if p := sel.excludedBy(name); p != "" {
				topicError(name, kerr.InvalidRequest, "Topic '%s' matches the exclude pattern '%s' of mirror '%s'.", name, p, mirror)
				continue
			}
		}
		if info.Err != nil {
			if !named[name] {
				continue // gone since it was listed
			}
			ke := kerr.UnknownTopicOrPartition
			if e := kerrOf(info.Err); e != nil {
				ke = e
			}
			topicError(name, ke, "Topic '%s' cannot be mirrored from the source cluster of mirror '%s': %v.", name, mirror, info.Err)
			continue
		}
		st := mirrormsg.NewStartMirrorTopicsRequestSourceTopic()
		st.Name, st.TopicID, st.NumPartitions = name, info.ID, info.Partitions
		topics = append(topics, st)
	}
	return topics, local, nil
}

// kerrOf returns err's *kerr.Error, nil if it has none.
func kerrOf(err error) *kerr.Error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke
	}
	return nil
}

// listSourceTopics lists the source's topics that are not internal
// (Metadata for every topic, never creating one).
func listSourceTopics(ctx context.Context, cl *kgo.Client) ([]string, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = nil // every topic
	req.AllowAutoTopicCreation = false
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range resp.Topics {
		if t.Topic == nil || t.IsInternal || t.ErrorCode != 0 {
			continue
		}
		out = append(out, *t.Topic)
	}
	slices.Sort(out)
	return out, nil
}
