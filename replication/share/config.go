package share

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config is the broker's share group configuration (Kafka's
// ShareGroupConfig), with Kafka's defaults for zero values.
type Config struct {
	// RecordLockDuration is group.share.record.lock.duration.ms: how long
	// an acquired record stays locked to its member (30s).
	RecordLockDuration time.Duration
	// DeliveryCountLimit is group.share.delivery.count.limit (5).
	DeliveryCountLimit int16
	// MaxRecordLocks is group.share.partition.max.record.locks: the most
	// in-flight records per share partition (2000).
	MaxRecordLocks int64
	// MaxShareSessions is group.share.max.share.sessions: the most share
	// sessions this broker keeps (2000).
	MaxShareSessions int
	// FetchMaxBytes is fetch.max.bytes, which caps a ShareFetch's MaxBytes
	// as it caps a Fetch's (Kafka's KafkaApis). 0: no cap.
	FetchMaxBytes int32
	// PersisterTimeout bounds one persister call (5s, Kafka's
	// share.coordinator.write.timeout.ms).
	PersisterTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.RecordLockDuration <= 0 {
		c.RecordLockDuration = 30 * time.Second
	}
	if c.DeliveryCountLimit <= 0 {
		c.DeliveryCountLimit = 5
	}
	if c.MaxRecordLocks <= 0 {
		c.MaxRecordLocks = 2000
	}
	if c.MaxShareSessions <= 0 {
		c.MaxShareSessions = 2000
	}
	if c.PersisterTimeout <= 0 {
		c.PersisterTimeout = 5 * time.Second
	}
	return c
}

// GroupConfig is a share group's own configuration (Kafka's GroupConfig
// for share groups, set with IncrementalAlterConfigs on the GROUP
// resource). Zero values take the broker's.
type GroupConfig struct {
	// RecordLockDuration is share.record.lock.duration.ms.
	RecordLockDuration time.Duration
	// AutoOffsetReset is share.auto.offset.reset: where a share
	// partition without a stored start offset starts. "latest" (the
	// default: only records produced from now on), "earliest", or
	// "by_duration:<ISO-8601 duration>" (the first record at most that
	// old).
	AutoOffsetReset string
	// ReadCommitted is share.isolation.level=read_committed: records are
	// read up to the last stable offset and aborted transactions'
	// records are archived, never delivered.
	ReadCommitted bool
}

// GroupConfigs looks up a share group's configuration; the broker adapts
// the group coordinator's dynamic group configs to it.
type GroupConfigs interface {
	ShareGroupConfig(groupID string) GroupConfig
}

// resetStrategy is a parsed share.auto.offset.reset.
type resetStrategy struct {
	earliest bool
	duration time.Duration // by_duration; 0 otherwise
}

// parseAutoOffsetReset parses share.auto.offset.reset as Kafka's
// ShareGroupAutoOffsetResetStrategy does.
func parseAutoOffsetReset(v string) (resetStrategy, error) {
	switch s := strings.ToLower(strings.TrimSpace(v)); {
	case s == "" || s == "latest":
		return resetStrategy{}, nil
	case s == "earliest":
		return resetStrategy{earliest: true}, nil
	case strings.HasPrefix(s, "by_duration:"):
		d, err := parseISODuration(strings.TrimPrefix(s, "by_duration:"))
		if err != nil {
			return resetStrategy{}, fmt.Errorf("share.auto.offset.reset %q: %w", v, err)
		}
		return resetStrategy{duration: d}, nil
	}
	return resetStrategy{}, fmt.Errorf("share.auto.offset.reset %q: want latest, earliest or by_duration:<ISO-8601 duration>", v)
}

// ValidateAutoOffsetReset checks a share.auto.offset.reset value as
// Kafka's ShareGroupAutoOffsetResetStrategy.Validator does, for the GROUP
// config's validation: exactly "latest", "earliest", or "by_duration:"
// and a non-negative ISO-8601 duration; unlike parseAutoOffsetReset, which
// reads what is stored, the words are case-sensitive.
func ValidateAutoOffsetReset(v string) error {
	switch {
	case v == "latest" || v == "earliest":
		return nil
	case strings.HasPrefix(v, "by_duration:"):
		if _, err := parseISODuration(strings.ToLower(strings.TrimPrefix(v, "by_duration:"))); err == nil {
			return nil
		}
	}
	return fmt.Errorf("Invalid value `%s` for configuration share.auto.offset.reset. "+
		"The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.", v)
}

// parseISODuration parses Java's Duration.parse format, PnDTnHnMn.nS
// (lower case), without a sign; negative durations are invalid there.
func parseISODuration(s string) (time.Duration, error) {
	rest, ok := strings.CutPrefix(s, "p")
	if !ok || rest == "" {
		return 0, fmt.Errorf("duration %q does not start with P", s)
	}
	var total time.Duration
	inTime := false
	for rest != "" {
		if rest[0] == 't' {
			if inTime || len(rest) == 1 {
				return 0, fmt.Errorf("duration %q: misplaced T", s)
			}
			inTime, rest = true, rest[1:]
			continue
		}
		i := strings.IndexAny(rest, "dhms")
		if i <= 0 {
			return 0, fmt.Errorf("duration %q: want a number and a unit", s)
		}
		v, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("duration %q: bad number %q", s, rest[:i])
		}
		unit := map[byte]time.Duration{'d': 24 * time.Hour, 'h': time.Hour, 'm': time.Minute, 's': time.Second}[rest[i]]
		if (rest[i] == 'd') == inTime {
			return 0, fmt.Errorf("duration %q: unit %c in the wrong part", s, rest[i])
		}
		total += time.Duration(v * float64(unit))
		rest = rest[i+1:]
	}
	return total, nil
}
