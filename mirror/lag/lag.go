// Package lag is the one definition of a mirror partition's lag, which
// describe (text and --json), the strait_mirror_lag_* metrics and
// `strait mirror start --wait` all report (issue 33).
//
// Lag is the distance between what the source's consumers can read and
// what the destination's consumers can read:
//
//   - Records = source high watermark − destination high watermark (what a
//     READ_UNCOMMITTED consumer of the source reads that one of the
//     destination cannot yet): LAG, --json lag, strait_mirror_lag_records.
//   - Committed = source last stable offset − destination last stable
//     offset (the same for READ_COMMITTED consumers, KIP-98: an open
//     transaction holds an LSO back, not the HW): C-LAG, --json
//     committed_lag, strait_mirror_lag_committed_records.
//   - Ms = the age of the oldest source record the destination cannot
//     serve yet (the record at the destination's high watermark): now
//     minus its timestamp on the source; 0 when Records is 0. LAG-MS,
//     --json lag_ms, strait_mirror_lag_ms (the largest partition's).
//
// The destination's log end offset is reported beside it, never instead
// of it: records past the high watermark are not readable by consumers
// and would not survive a leader change (Kafka's HW rule, KIP-101), so a
// lag measured to the log end says "caught up" too early.
//
// The source side is a measurement. Describe takes one for each call
// (ListOffsets LATEST, manager.PartitionsMeasured), so a lag of 0 there
// means the destination's consumers can read everything the source had
// acknowledged when describe was asked. The metrics use the last one
// taken: while MIRRORING the source HW/LSO carried by the fetch
// responses; while PAUSED, PREPARING or FAILED a ListOffsets LATEST asked
// every PollInterval per mirror. A measurement that failed (describe) or
// is older than StaleAfter (metrics) makes the lag unknown — -1 on the
// wire, "unknown" by the CLI, NaN by the metrics — never 0, shown with
// the time of the last successful measurement. A measurement's time is
// when its request was sent, and the newest is kept: a fetch answer that
// comes late (a long poll) does not put back an older source HW than a
// ListOffsets asked meanwhile.
//
// Ms is measured where the source is: for each partition that lags, a
// consumer Fetch of the first source batch at the destination's high
// watermark (source.MeasureHeads, one small fetch per lagging partition,
// bounded by the measurement's timeout), by describe for each call and by
// the manager every PollInterval (once per destination high watermark: a
// record's timestamp does not change). Ms is now minus that record's
// timestamp (a LogAppendTime batch's max timestamp): exact, the age of
// the first record the destination's consumers cannot read. Mirrored
// batches are byte-identical, so the destination high watermark starts a
// source batch; were it inside one (a mirror started there), the record's
// own timestamp is read from that batch. While MIRRORING the destination high watermark moves
// on between measurements; until the next one the fetcher's last answer
// bounds Ms from its batch headers (source.LagSample, a lower bound when
// the destination high watermark trails the fetch offset). A partition
// whose head could not be read has an unknown Ms.
package lag

import "time"

// StaleAfter is how old the last successful source measurement may be
// before the lag is unknown. While MIRRORING the fetcher hears from the
// source at least every fetch max wait (500 ms); otherwise the manager
// asks every PollInterval. A few missed answers in a row mean the source
// cannot be reached.
const StaleAfter = 5 * time.Second

// PollInterval is how often, per mirror, the source is asked for its
// offsets for the partitions whose fetcher is not running (PAUSED,
// PREPARING, FAILED), one ListOffsets round per mirror at most this
// often, and for the record at the destination high watermark of each
// partition that lags, where that was not read yet (Ms).
const PollInterval = time.Second

// Unknown marks an offset, lag or age that is not known.
const Unknown int64 = -1

// Source is the last successful measurement of the source partition.
type Source struct {
	// HighWatermark and LastStableOffset are the source partition's,
	// Unknown when not measured.
	HighWatermark, LastStableOffset int64
	// MeasuredAt is when they were measured (zero: never).
	MeasuredAt time.Time
}

// Destination is the destination partition as its leader has it.
type Destination struct {
	HighWatermark, LastStableOffset, LogEndOffset int64
}

// OldestUnservedAge returns the age in milliseconds at now of the source
// record at offset (the first the destination cannot serve), Unknown when
// not known.
type OldestUnservedAge func(offset int64, now time.Time) int64

// Lag is one partition's lag.
type Lag struct {
	// Records is source HW − destination HW (at least 0), Unknown when
	// either side is unknown or the source measurement is stale.
	Records int64
	// Committed is source LSO − destination LSO (at least 0), Unknown
	// likewise.
	Committed int64
	// Ms is the age of the oldest source record the destination cannot
	// serve yet: 0 when Records is 0, Unknown when Records is or when no
	// timestamp tells.
	Ms int64
	// MeasuredAt is the source measurement's time, shown with an unknown
	// lag so the operator knows how old the last known number is.
	MeasuredAt time.Time
}

// Known reports whether the lag in records is known.
func (l Lag) Known() bool { return l.Records >= 0 }

// Of computes the lag at now. age may be nil.
func Of(src Source, dst Destination, age OldestUnservedAge, now time.Time) Lag {
	l := Lag{Records: Unknown, Committed: Unknown, Ms: Unknown, MeasuredAt: src.MeasuredAt}
	if src.MeasuredAt.IsZero() || now.Sub(src.MeasuredAt) > StaleAfter {
		return l
	}
	if src.HighWatermark >= 0 && dst.HighWatermark >= 0 {
		l.Records = max(0, src.HighWatermark-dst.HighWatermark)
	}
	if src.LastStableOffset >= 0 && dst.LastStableOffset >= 0 {
		l.Committed = max(0, src.LastStableOffset-dst.LastStableOffset)
	}
	switch {
	case l.Records == 0:
		l.Ms = 0
	case l.Records > 0 && age != nil:
		l.Ms = age(dst.HighWatermark, now)
	}
	return l
}

// CaughtUpTo reports whether the destination's consumers can read
// everything the source's consumers could read when the source's high
// watermark was sourceHW: destination HW ≥ sourceHW (`--wait`).
func CaughtUpTo(destinationHW, sourceHW int64) bool {
	return sourceHW >= 0 && destinationHW >= sourceHW
}
