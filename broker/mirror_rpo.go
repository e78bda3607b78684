package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/lag"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// The RPO guard (issue 27): a stop is a failover, and what it abandons is
// the lag at that moment. With a bound (the request's MaxLagMs and
// MaxLagRecords, Strait tags, or else the mirror config
// mirror.failover.max.lag.ms) the broker that receives StopMirrorTopics
// measures every partition of the topics it stops, fresh, where each is
// led (DescribeMirrors: ListOffsets on the source now, issue 33's lag),
// and refuses a topic with a partition over the bound or of unknown lag
// (the source is down: anything may be missing) unless the request sets
// Force. The check is here, not in the CLI, because any admin client may
// send the stop; every client request reaches the controller through a
// broker.
//
// All or nothing: a failover of several topics (stop --topic a --topic b,
// or --all) is one decision. If any topic is over the bound, none is
// stopped: the request is not forwarded, every topic it names is answered
// POLICY_VIOLATION (those over the bound with each partition's lag and the
// bound, the others saying they were held back with them) and all stay as
// they were (PAUSED at the barrier stop's cut).
//
// Error code: POLICY_VIOLATION (44), Kafka's "request parameters do not
// satisfy the configured policy" (CreateTopicPolicy, AlterConfigPolicy):
// the bound is an operator's policy the stop did not meet, not a malformed
// request (INVALID_REQUEST) nor a partition state (KIP-1279's
// INVALID_CLUSTER_MIRROR_STATES); a script can tell it apart and retry
// later or with --force.

// failoverBound is the bound a stop applies: the request's, the mirror
// config's for a MaxLagMs of -1.
func failoverBound(img *raftmeta.Image, req *mirrormsg.StopMirrorTopicsRequest) lag.Bound {
	b := lag.Bound{Records: max(req.MaxLagRecords, lag.Unknown), Ms: max(req.MaxLagMs, lag.Unknown)}
	if b.Ms < 0 {
		b.Ms = raftmeta.MirrorFailoverMaxLagMs(img.MirrorConfig(req.MirrorName))
	}
	return b
}

// guardFailoverLag applies the RPO guard to req. It returns nil when the
// stop may go on, else a result for every topic of req, none stopped (all
// or nothing). With a bound, Patterns are resolved here to the topics they
// select (the controller's rule: the mirror's topics not stopped whose
// whole name matches), so only the topics measured are stopped.
func (s mirrorService) guardFailoverLag(ctx context.Context, req *mirrormsg.StopMirrorTopicsRequest) []mirrormsg.StopMirrorTopicsResponseTopicResult {
	n := s.n
	img := n.quorum.Image()
	if _, ok := img.Mirrors[req.MirrorName]; !ok || req.Force {
		return nil
	}
	bound := failoverBound(img, req)
	if !bound.Active() {
		return nil
	}
	if !resolveStopPatterns(img, req) {
		return nil // a bad pattern: the controller refuses the request
	}
	var checked []string
	for _, t := range req.Topics {
		if m, d := img.TopicMirror(t.TopicName); m == req.MirrorName && d != partition.DesiredStop && !slices.Contains(checked, t.TopicName) {
			checked = append(checked, t.TopicName)
		}
	}
	if len(checked) == 0 {
		return nil // nothing this guard may refuse: the controller answers
	}
	dreq := mirrormsg.NewPtrDescribeMirrorsRequest()
	dreq.MirrorNames = []string{req.MirrorName}
	measured := map[string][]mirrormsg.DescribeMirrorsResponsePartitionDetail{}
	for _, m := range s.DescribeMirrors(ctx, dreq).Mirrors {
		for _, t := range m.Topics {
			measured[t.TopicName] = t.Partitions
		}
	}
	var refused []mirrormsg.StopMirrorTopicsResponseTopicResult
	for _, name := range checked {
		over := overBound(bound, measured[name])
		if len(over) == 0 {
			continue
		}
		refused = append(refused, refusal(req.MirrorName, name, bound, over))
		n.logger.Warn("stop refused: the mirror topic's lag is over the failover bound (--force stops it anyway)",
			"mirror", req.MirrorName, "topic", name, "bound", bound.String(), "partitions", describeOver(over))
	}
	if len(refused) == 0 {
		return nil
	}
	return holdBack(req, refused)
}

// holdBack completes refused with a POLICY_VIOLATION for every other topic
// of req: a stop with a topic over the bound stops none of them.
func holdBack(req *mirrormsg.StopMirrorTopicsRequest, refused []mirrormsg.StopMirrorTopicsResponseTopicResult) []mirrormsg.StopMirrorTopicsResponseTopicResult {
	over := make([]string, 0, len(refused))
	for _, r := range refused {
		over = append(over, r.Name)
	}
	out := refused
	for _, t := range req.Topics {
		if slices.ContainsFunc(out, func(r mirrormsg.StopMirrorTopicsResponseTopicResult) bool { return r.Name == t.TopicName }) {
			continue
		}
		r := mirrormsg.NewStopMirrorTopicsResponseTopicResult()
		r.Name, r.ErrorCode = t.TopicName, kerr.PolicyViolation.Code
		r.ErrorMessage = kmsg.StringPtr(fmt.Sprintf(
			"Not stopping topic '%s' of mirror '%s': a stop is all or nothing, and %s of the same stop %s over the failover bound; "+
				"nothing was stopped. Wait for the mirror to catch up, stop the topics within the bound alone, or stop with --force (Force).",
			t.TopicName, req.MirrorName, strings.Join(over, ", "), isOrAre(len(over))))
		out = append(out, r)
	}
	return out
}

func isOrAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// resolveStopPatterns replaces req's Patterns by the topics they select
// (raftmeta.StopPatternTopics, the controller's rule), false for a pattern
// that does not compile.
func resolveStopPatterns(img *raftmeta.Image, req *mirrormsg.StopMirrorTopicsRequest) bool {
	if len(req.Patterns) == 0 {
		return true
	}
	var named []string
	for _, t := range req.Topics {
		named = append(named, t.TopicName)
	}
	names, err := raftmeta.StopPatternTopics(img, req.MirrorName, req.Patterns, named)
	if err != nil {
		return false
	}
	for _, name := range names {
		tm := mirrormsg.NewStopMirrorTopicsRequestTopicMetadata()
		tm.TopicName = name
		req.Topics = append(req.Topics, tm)
	}
	req.Patterns = nil
	return true
}

// overBound returns the partitions of ps over bound. A topic described
// without partitions (none of its leaders answered) has no measured lag:
// its partitions are reported unknown.
func overBound(bound lag.Bound, ps []mirrormsg.DescribeMirrorsResponsePartitionDetail) []mirrormsg.StopMirrorTopicsResponseLagOverBoundPartition {
	var over []mirrormsg.StopMirrorTopicsResponseLagOverBoundPartition
	for _, p := range ps {
		records, ms := p.Lag, p.LagMs
		if records == 0 {
			ms = 0
		}
		if !bound.Exceeded(records, ms) {
			continue
		}
		o := mirrormsg.NewStopMirrorTopicsResponseLagOverBoundPartition()
		o.PartitionIndex, o.Lag, o.LagMs, o.MaxLagRecords, o.MaxLagMs = p.PartitionIndex, records, ms, bound.Records, bound.Ms
		over = append(over, o)
	}
	if len(ps) == 0 {
		o := mirrormsg.NewStopMirrorTopicsResponseLagOverBoundPartition()
		o.PartitionIndex, o.MaxLagRecords, o.MaxLagMs = -1, bound.Records, bound.Ms
		over = append(over, o)
	}
	return over
}

// refusal is the POLICY_VIOLATION result of a topic over the bound.
func refusal(mirror, topic string, bound lag.Bound, over []mirrormsg.StopMirrorTopicsResponseLagOverBoundPartition) mirrormsg.StopMirrorTopicsResponseTopicResult {
	r := mirrormsg.NewStopMirrorTopicsResponseTopicResult()
	r.Name, r.ErrorCode = topic, kerr.PolicyViolation.Code
	r.ErrorMessage = kmsg.StringPtr(fmt.Sprintf(
		"Refusing to stop topic '%s' of mirror '%s': its lag is over the failover bound (%s) or unknown; %s. "+
			"Stopping now would abandon those records. Wait for the mirror to catch up, or stop with --force (Force).",
		topic, mirror, bound, describeOver(over)))
	r.LagOverBound = over
	return r
}

// describeOver names each partition with its lag: "partition 0: 120
// records, 5300 ms; partition 2: unknown".
func describeOver(over []mirrormsg.StopMirrorTopicsResponseLagOverBoundPartition) string {
	parts := make([]string, 0, len(over))
	for _, o := range over {
		if o.PartitionIndex < 0 {
			parts = append(parts, "every partition: unknown (no partition leader described it)")
			continue
		}
		parts = append(parts, fmt.Sprintf("partition %d: %s", o.PartitionIndex, lag.Describe(o.Lag, o.LagMs)))
	}
	return strings.Join(parts, "; ")
}
