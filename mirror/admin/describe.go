package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strait-io/strait/mirror/lag"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// MirrorDescription is one mirror of DescribeMirrors.
type MirrorDescription struct {
	Name string `json:"mirror"`
	// Err is the mirror's error (a *kerr.Error, e.g.
	// UNKNOWN_CLUSTER_MIRROR), nil if it was described.
	Err error `json:"-"`
	// AuthorizedOperations is the response's bitfield, math.MinInt32 when
	// the broker did not compute it.
	AuthorizedOperations int32              `json:"-"`
	Topics               []TopicDescription `json:"topics"`
	// ScramSyncError is why the mirror's SCRAM user sync cannot run (a
	// source that cannot export credentials, a PLAINTEXT link), "" when
	// it runs or is disabled.
	ScramSyncError string `json:"scram_sync_error,omitempty"`
	// SkippedGroupOffsets is what the mirror's last consumer group offset
	// sync round left alone, and why (issue 27).
	SkippedGroupOffsets []SkippedGroupOffset `json:"skipped_group_offsets,omitempty"`
	// FailoverMaxLagMs is the mirror config mirror.failover.max.lag.ms,
	// the lag a stop refuses above (issue 27's RPO guard), nil if unset.
	FailoverMaxLagMs *int64 `json:"failover_max_lag_ms"`
}

// SkippedGroupOffset is a group (Partition -1) or one of its partitions
// whose offset the sync did not write: Reason "group-active" (the group
// has members on the destination and
// mirror.consumer.offsets.sync.active.groups is skip) or
// "destination-ahead" (forward-only, and the destination's committed
// offset, Committed, is not behind the source's, Source).
type SkippedGroupOffset struct {
	Group     string `json:"group"`
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	Reason    string `json:"reason"`
	Committed int64  `json:"committed_offset"`
	Source    int64  `json:"source_offset"`
}

// TopicDescription is one topic of a mirror, its partitions sorted by
// index.
type TopicDescription struct {
	Name       string                 `json:"topic"`
	Partitions []PartitionDescription `json:"partitions"`
}

// PartitionDescription is one partition's mirror state
// (DescribeMirrorsResponse's PartitionDetail). An offset, lag or epoch of
// −1 is not yet available.
type PartitionDescription struct {
	Partition int32 `json:"partition"`
	// State is the partition's mirror state (MIRRORING, PAUSED, ...).
	State string `json:"state"`
	// SourceHighWatermark is the source partition's high watermark as last
	// measured (LagMeasuredAt).
	SourceHighWatermark int64 `json:"source_high_watermark"`
	// DestinationHighWatermark is what the destination's consumers can
	// read; DestinationLogEndOffset, beside it, what its leader holds.
	DestinationHighWatermark int64 `json:"destination_high_watermark"`
	DestinationLogEndOffset  int64 `json:"destination_log_end_offset"`
	// Lag is SourceHighWatermark − DestinationHighWatermark: the records
	// the source's consumers can read that the destination's cannot yet
	// (mirror/lag). −1 when unknown (LagUnknown): the source was not
	// measured lately, never reported as 0.
	Lag int64 `json:"lag"`
	// LagUnknown is Lag < 0: the lag is not known (the source cannot be
	// reached, or was never measured); LagMeasuredAt says since when.
	LagUnknown bool `json:"lag_unknown"`
	// CommittedLag is the same for read_committed consumers: source LSO −
	// destination LSO, −1 when unknown.
	CommittedLag int64 `json:"committed_lag"`
	// LagMs is the age in milliseconds of the oldest source record the
	// destination cannot serve yet, from the source's timestamps: 0 when
	// Lag is 0, −1 when unknown.
	LagMs int64 `json:"lag_ms"`
	// LagMeasuredAt is when the source side of the lag was last measured
	// successfully, nil if never.
	LagMeasuredAt *time.Time `json:"lag_measured_at"`
	// LastMirrorEpoch is the LME, the last source leader epoch mirrored.
	LastMirrorEpoch int32 `json:"last_mirror_epoch"`
	// RetryCount counts the partition's consecutive failures, each
	// retried automatically; −1 when the last one is not retryable.
	RetryCount int32 `json:"retry_count"`
	// OffsetsSkipped counts source offsets never mirrored because the
	// source's log start offset passed the fetch offset (retention).
	OffsetsSkipped int64 `json:"offsets_skipped"`
	// LastError is the partition's last error, "" if none.
	LastError string `json:"last_error"`
	// OverFailoverBound: a stop now would be refused for this partition
	// (its lag is over the mirror's FailoverMaxLagMs, or unknown); false
	// when the mirror sets no bound.
	OverFailoverBound bool `json:"over_failover_bound"`
}

// DescribeMirrors describes the named mirrors, or every mirror when no name
// is given. With names, the result has one entry per distinct name in the
// order given; a name the broker did not answer for gets
// UNKNOWN_CLUSTER_MIRROR, as Kafka's AdminClient.describeTopics fails a
// topic missing from the Metadata response with UNKNOWN_TOPIC_OR_PARTITION.
// Without names, the mirrors are sorted by name. Topics are sorted by name
// and partitions by index.
func (c *Client) DescribeMirrors(ctx context.Context, names ...string) ([]MirrorDescription, error) {
	req := mirrormsg.NewPtrDescribeMirrorsRequest()
	var wanted []string
	for _, n := range names {
		if !slices.Contains(wanted, n) {
			wanted = append(wanted, n)
		}
	}
	req.MirrorNames = wanted // nil: every mirror
	resp, err := send(ctx, c.cl, req, isRead, func(r *mirrormsg.DescribeMirrorsResponse) int16 { return r.ErrorCode })
	if err != nil {
		return nil, fmt.Errorf("DescribeMirrors: %w", err)
	}
	if err := codeError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return nil, fmt.Errorf("DescribeMirrors: %w", err)
	}
	got := make(map[string]MirrorDescription, len(resp.Mirrors))
	var order []string
	for _, m := range resp.Mirrors {
		if _, dup := got[m.MirrorName]; !dup {
			order = append(order, m.MirrorName)
		}
		got[m.MirrorName] = describedMirror(m)
	}
	if wanted == nil {
		slices.Sort(order)
		wanted = order
	}
	out := make([]MirrorDescription, 0, len(wanted))
	for _, n := range wanted {
		d, ok := got[n]
		if !ok {
			d = MirrorDescription{Name: n, Err: mirrormsg.UnknownClusterMirror}
		}
		out = append(out, d)
	}
	return out, nil
}

func describedMirror(m mirrormsg.DescribeMirrorsResponseDescribedMirror) MirrorDescription {
	d := MirrorDescription{
		Name:                 m.MirrorName,
		Err:                  kafkaError(m.ErrorCode),
		AuthorizedOperations: m.AuthorizedOperations,
		Topics:               make([]TopicDescription, 0, len(m.Topics)),
	}
	if m.ScramSyncError != nil {
		d.ScramSyncError = *m.ScramSyncError
	}
	for _, o := range m.SkippedGroupOffsets {
		d.SkippedGroupOffsets = append(d.SkippedGroupOffsets, SkippedGroupOffset{Group: o.GroupID, Topic: o.TopicName,
			Partition: o.PartitionIndex, Reason: o.Reason, Committed: o.CommittedOffset, Source: o.SourceOffset})
	}
	if m.FailoverMaxLagMs >= 0 {
		d.FailoverMaxLagMs = &m.FailoverMaxLagMs
	}
	bound := lag.Bound{Records: lag.Unknown, Ms: m.FailoverMaxLagMs}
	for _, t := range m.Topics {
		td := TopicDescription{Name: t.TopicName, Partitions: make([]PartitionDescription, 0, len(t.Partitions))}
		for _, p := range t.Partitions {
			pd := PartitionDescription{
				Partition:                p.PartitionIndex,
				State:                    p.State,
				SourceHighWatermark:      p.SourceOffset,
				DestinationHighWatermark: p.DestinationHighWatermark,
				DestinationLogEndOffset:  p.DestinationOffset,
				Lag:                      p.Lag,
				LagUnknown:               p.Lag < 0,
				CommittedLag:             p.CommittedLag,
				LagMs:                    p.LagMs,
				LastMirrorEpoch:          p.LastMirrorEpoch,
				RetryCount:               p.RetryCount,
				OffsetsSkipped:           p.OffsetsSkipped,
			}
			if p.LagMeasuredAtMs >= 0 {
				at := time.UnixMilli(p.LagMeasuredAtMs).UTC()
				pd.LagMeasuredAt = &at
			}
			if p.ErrorMessage != nil {
				pd.LastError = *p.ErrorMessage
			}
			// A stopped partition has no lag a stop could abandon.
			stopped := p.State == "STOPPED" || p.State == "STOPPING"
			pd.OverFailoverBound = !stopped && bound.Exceeded(p.Lag, p.LagMs)
			td.Partitions = append(td.Partitions, pd)
		}
		slices.SortFunc(td.Partitions, func(a, b PartitionDescription) int { return cmp.Compare(a.Partition, b.Partition) })
		d.Topics = append(d.Topics, td)
	}
	slices.SortFunc(d.Topics, func(a, b TopicDescription) int { return strings.Compare(a.Name, b.Name) })
	return d
}
