package admin

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TopicResult is one topic's answer to Start/Stop/Pause/ResumeMirrorTopics.
type TopicResult struct {
	Topic string
	// Err is the topic's error, a *kerr.Error from mirrormsg.ErrorForCode
	// (e.g. MIRROR_TOPIC_ALREADY_PAUSED), or nil.
	Err error
	// Message is the broker's per-topic ErrorMessage, "" if it sent none.
	Message string
	// Dropped are the records a StartMirrorTopics with TruncateExisting
	// deleted, by partition: the destination held them and the source
	// cluster does not share them.
	Dropped []DroppedRecords
	// Truncation answers a dry-run start (StartOptions.DryRun), by
	// partition: what the start would truncate.
	Truncation []Truncation `json:",omitempty"`
	// LagOverBound are the partitions whose lag made a stop with a lag
	// bound refuse the topic (POLICY_VIOLATION; issue 27's RPO guard).
	LagOverBound []PartitionLagOverBound
}

// PartitionLagOverBound is a partition a stop refused for its lag: the lag
// measured at the stop (-1 unknown) and the bound applied (-1 none).
type PartitionLagOverBound struct {
	Partition     int32 `json:"partition"`
	Lag           int64 `json:"lag"`
	LagMs         int64 `json:"lag_ms"`
	MaxLagRecords int64 `json:"max_lag_records"`
	MaxLagMs      int64 `json:"max_lag_ms"`
}

// DroppedRecords is how many records a start deleted from one partition.
type DroppedRecords struct {
	Partition int32
	Records   int64
}

// Detail is the broker's message, or the error's description if it sent
// none; "" for a success.
func (r TopicResult) Detail() string {
	if r.Err == nil || r.Message != "" {
		return r.Message
	}
	var ke *kerr.Error
	if errors.As(r.Err, &ke) {
		return ke.Description
	}
	return r.Err.Error()
}

// TopicResults are the per-topic answers of one request, sorted by topic.
type TopicResults []TopicResult

// Failed returns the results with an error.
func (rs TopicResults) Failed() TopicResults {
	var out TopicResults
	for _, r := range rs {
		if r.Err != nil {
			out = append(out, r)
		}
	}
	return out
}

// Missing returns the topics of requested the broker gave no result for, in
// requested order.
func (rs TopicResults) Missing(requested []string) []string {
	var out []string
	for _, t := range requested {
		if !slices.ContainsFunc(rs, func(r TopicResult) bool { return r.Topic == t }) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// TopicPattern is the IncludePatterns entry StartMirrorTopics sends for
// topic: an anchored literal, matching topic only.
func TopicPattern(topic string) string {
	return "^" + regexp.QuoteMeta(topic) + "$"
}

// StartMirrorTopics starts (or restarts, from STOPPED: the failback entry
// point) mirroring topics from the source into mirror. Each name is sent as
// the pattern TopicPattern(name), added to the mirror's topics.include;
// missing destination topics are created from the source's. TimeoutMs is
// what ctx has left (30 s without a deadline). An existing destination
// topic holding records the source does not share is refused; see
// StartOptions.
func (c *Client) StartMirrorTopics(ctx context.Context, mirror string, topics ...string) (TopicResults, error) {
	return c.StartMirrorTopicsWith(ctx, mirror, StartOptions{}, topics...)
}

// StartOptions are StartMirrorTopics' settings.
type StartOptions struct {
	// TruncateExisting lets the start delete the records an existing
	// destination topic holds that the source cluster does not share (it
	// has no last mirrored epoch for them, so the start would truncate the
	// whole partition); TopicResult.Dropped reports them. Without it such
	// a topic is refused with INVALID_REQUEST naming its partitions and
	// records (Strait's tagged StartMirrorTopics field).
	TruncateExisting bool
	// DryRun changes nothing: each existing destination topic's result
	// carries, per partition, the divergence point the failback's
	// last-mirrored-epoch walk finds and the offsets it would truncate
	// (TopicResult.Truncation).
	DryRun bool
}

// StartMirrorTopicsWith is StartMirrorTopics with opts.
func (c *Client) StartMirrorTopicsWith(ctx context.Context, mirror string, opts StartOptions, topics ...string) (TopicResults, error) {
	if err := checkTopics(topics); err != nil {
		return nil, fmt.Errorf("StartMirrorTopics %s: %w", mirror, err)
	}
	req := mirrormsg.NewPtrStartMirrorTopicsRequest()
	req.MirrorName = mirror
	for _, t := range topics {
		req.IncludePatterns = append(req.IncludePatterns, TopicPattern(t))
	}
	req.TruncateExisting, req.DryRun = opts.TruncateExisting, opts.DryRun
	req.TimeoutMs = timeoutMs(ctx)
	resp, err := send(ctx, c.cl, req, isWrite, func(r *mirrormsg.StartMirrorTopicsResponse) int16 { return r.ErrorCode })
	if err != nil {
		return nil, fmt.Errorf("StartMirrorTopics %s: %w", mirror, err)
	}
	if err := codeError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return nil, fmt.Errorf("StartMirrorTopics %s: %w", mirror, err)
	}
	rs := make(TopicResults, 0, len(resp.Topics))
	for _, t := range resp.Topics {
		r := topicResult(t.Name, t.ErrorCode, t.ErrorMessage)
		for _, d := range t.DroppedRecords {
			r.Dropped = append(r.Dropped, DroppedRecords{Partition: d.PartitionIndex, Records: d.Records})
		}
		for _, p := range t.Truncation {
			r.Truncation = append(r.Truncation, Truncation{Partition: p.PartitionIndex, LastMirroredEpoch: p.LastMirroredEpoch,
				DivergenceOffset: p.DivergenceOffset, LogStartOffset: p.LogStartOffset, LogEndOffset: p.LogEndOffset,
				RefusedWithoutTruncateExisting: p.RefusedWithoutTruncateExisting})
		}
		rs = append(rs, r)
	}
	return sortResults(rs), nil
}

// StopMirrorTopics stops mirroring topics (failover or migration cut-over):
// each keeps what it mirrored, gets its LME recorded and the transactions
// the source left open aborted, and is made writable. StateOffset is sent as −1 (no precondition offset).
// The mirror config mirror.failover.max.lag.ms applies (StopOptions).
func (c *Client) StopMirrorTopics(ctx context.Context, mirror string, topics ...string) (TopicResults, error) {
	return c.StopMirrorTopicsWith(ctx, mirror, StopOptions{MaxLagMs: -1, MaxLagRecords: -1}, topics...)
}

// StopOptions are StopMirrorTopics' RPO guard (issue 27): the broker
// measures each partition's lag at the stop and refuses a topic with a
// partition over a bound, or whose lag is unknown (the source cannot be
// reached), with POLICY_VIOLATION and TopicResult.LagOverBound.
type StopOptions struct {
	// MaxLagMs bounds the age of the oldest record a stop abandons; -1
	// uses the mirror config mirror.failover.max.lag.ms (itself -1, no
	// bound, by default).
	MaxLagMs int64
	// MaxLagRecords bounds the records a stop abandons; -1 for none.
	MaxLagRecords int64
	// Force stops whatever the lag.
	Force bool
}

// StopMirrorTopicsWith is StopMirrorTopics with opts.
func (c *Client) StopMirrorTopicsWith(ctx context.Context, mirror string, opts StopOptions, topics ...string) (TopicResults, error) {
	if err := checkTopics(topics); err != nil {
		return nil, fmt.Errorf("StopMirrorTopics %s: %w", mirror, err)
	}
	req := mirrormsg.NewPtrStopMirrorTopicsRequest()
	req.MirrorName = mirror
	for _, t := range topics {
		tm := mirrormsg.NewStopMirrorTopicsRequestTopicMetadata()
		tm.TopicName = t
		req.Topics = append(req.Topics, tm)
	}
	req.MaxLagMs, req.MaxLagRecords, req.Force = opts.MaxLagMs, opts.MaxLagRecords, opts.Force
	resp, err := send(ctx, c.cl, req, isWrite, func(r *mirrormsg.StopMirrorTopicsResponse) int16 { return r.ErrorCode })
	if err != nil {
		return nil, fmt.Errorf("StopMirrorTopics %s: %w", mirror, err)
	}
	if err := codeError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return nil, fmt.Errorf("StopMirrorTopics %s: %w", mirror, err)
	}
	rs := make(TopicResults, 0, len(resp.Topics))
	for _, t := range resp.Topics {
		r := topicResult(t.Name, t.ErrorCode, t.ErrorMessage)
		for _, o := range t.LagOverBound {
			r.LagOverBound = append(r.LagOverBound, PartitionLagOverBound{Partition: o.PartitionIndex, Lag: o.Lag, LagMs: o.LagMs,
				MaxLagRecords: o.MaxLagRecords, MaxLagMs: o.MaxLagMs})
		}
		rs = append(rs, r)
	}
	return sortResults(rs), nil
}

// PauseMirrorTopics pauses mirroring topics: the fetchers stop, the topics
// stay read-only. Topics are sent by name with a zero TopicID.
func (c *Client) PauseMirrorTopics(ctx context.Context, mirror string, topics ...string) (TopicResults, error) {
	if err := checkTopics(topics); err != nil {
		return nil, fmt.Errorf("PauseMirrorTopics %s: %w", mirror, err)
	}
	req := mirrormsg.NewPtrPauseMirrorTopicsRequest()
	req.MirrorName = mirror
	for _, t := range topics {
		td := mirrormsg.NewPauseMirrorTopicsRequestTopicData()
		td.TopicName = t
		req.Topics = append(req.Topics, td)
	}
	resp, err := send(ctx, c.cl, req, isWrite, func(r *mirrormsg.PauseMirrorTopicsResponse) int16 { return r.ErrorCode })
	if err != nil {
		return nil, fmt.Errorf("PauseMirrorTopics %s: %w", mirror, err)
	}
	if err := codeError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return nil, fmt.Errorf("PauseMirrorTopics %s: %w", mirror, err)
	}
	rs := make(TopicResults, 0, len(resp.Topics))
	for _, t := range resp.Topics {
		rs = append(rs, topicResult(t.Name, t.ErrorCode, t.ErrorMessage))
	}
	return sortResults(rs), nil
}

// ResumeMirrorTopics resumes paused topics from their local log end
// offset, with no truncation. Topics are sent by name with a zero TopicID.
func (c *Client) ResumeMirrorTopics(ctx context.Context, mirror string, topics ...string) (TopicResults, error) {
	if err := checkTopics(topics); err != nil {
		return nil, fmt.Errorf("ResumeMirrorTopics %s: %w", mirror, err)
	}
	req := mirrormsg.NewPtrResumeMirrorTopicsRequest()
	req.MirrorName = mirror
	for _, t := range topics {
		td := mirrormsg.NewResumeMirrorTopicsRequestTopicData()
		td.TopicName = t
		req.Topics = append(req.Topics, td)
	}
	resp, err := send(ctx, c.cl, req, isWrite, func(r *mirrormsg.ResumeMirrorTopicsResponse) int16 { return r.ErrorCode })
	if err != nil {
		return nil, fmt.Errorf("ResumeMirrorTopics %s: %w", mirror, err)
	}
	if err := codeError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return nil, fmt.Errorf("ResumeMirrorTopics %s: %w", mirror, err)
	}
	rs := make(TopicResults, 0, len(resp.Topics))
	for _, t := range resp.Topics {
		rs = append(rs, topicResult(t.Name, t.ErrorCode, t.ErrorMessage))
	}
	return sortResults(rs), nil
}

// checkTopics rejects an empty list or name before anything is sent: a
// request naming no topic would succeed doing nothing.
func checkTopics(topics []string) error {
	if len(topics) == 0 {
		return fmt.Errorf("no topics")
	}
	for _, t := range topics {
		if t == "" {
			return fmt.Errorf("empty topic name")
		}
	}
	return nil
}

func topicResult(name string, code int16, msg *string) TopicResult {
	r := TopicResult{Topic: name, Err: kafkaError(code)}
	if msg != nil && r.Err != nil {
		r.Message = *msg
	}
	return r
}

func sortResults(rs TopicResults) TopicResults {
	slices.SortStableFunc(rs, func(a, b TopicResult) int { return strings.Compare(a.Topic, b.Topic) })
	return rs
}
