package storage

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/validator"
)

// LogConfig is a partition's storage configuration. The fields are Kafka's
// topic-level configs, under their Kafka names in ParseLogConfig, with
// Kafka's defaults (TopicConfig / LogConfig.java).
type LogConfig struct {
	SegmentBytes       int32         // segment.bytes
	SegmentMs          int64         // segment.ms
	SegmentJitterMs    int64         // segment.jitter.ms
	SegmentIndexBytes  int32         // segment.index.bytes
	IndexIntervalBytes int32         // index.interval.bytes
	RetentionMs        int64         // retention.ms; -1 keeps forever
	RetentionBytes     int64         // retention.bytes; -1 is unbounded
	MaxMessageBytes    int32         // max.message.bytes
	FlushMessages      int64         // flush.messages
	FlushMs            int64         // flush.ms
	FileDeleteDelayMs  int64         // file.delete.delay.ms
	CleanupPolicy      CleanupPolicy // cleanup.policy
	// The log cleaner's topic configs (cleanup.policy=compact).
	MinCleanableRatio  float64 // min.cleanable.dirty.ratio
	MinCompactionLagMs int64   // min.compaction.lag.ms
	MaxCompactionLagMs int64   // max.compaction.lag.ms
	DeleteRetentionMs  int64   // delete.retention.ms: how long tombstones stay
	TimestampType      record.TimestampType
	TimestampBeforeMs  int64 // message.timestamp.before.max.ms
	TimestampAfterMs   int64 // message.timestamp.after.max.ms
	// ProducerIDExpirationMs is the broker's producer.id.expiration.ms.
	ProducerIDExpirationMs int64
	// MaxDecompressedBytes bounds what one produced batch may decompress to
	// during validation. Not a Kafka config: Kafka has no bound.
	MaxDecompressedBytes int64
}

// CleanupPolicy is cleanup.policy: delete, compact or both.
type CleanupPolicy struct{ Delete, Compact bool }

func (p CleanupPolicy) String() string {
	switch {
	case p.Delete && p.Compact:
		return "compact,delete"
	case p.Compact:
		return "compact"
	default:
		return "delete"
	}
}

// DefaultLogConfig returns Kafka's defaults.
func DefaultLogConfig() LogConfig {
	v := validator.DefaultConfig()
	return LogConfig{
		SegmentBytes:           1 << 30,
		SegmentMs:              7 * 24 * time.Hour.Milliseconds(),
		SegmentIndexBytes:      10 << 20,
		IndexIntervalBytes:     4096,
		RetentionMs:            7 * 24 * time.Hour.Milliseconds(),
		RetentionBytes:         -1,
		MaxMessageBytes:        1048588,
		FlushMessages:          math.MaxInt64,
		FlushMs:                math.MaxInt64,
		FileDeleteDelayMs:      60000,
		CleanupPolicy:          CleanupPolicy{Delete: true},
		MinCleanableRatio:      0.5,
		MinCompactionLagMs:     0,
		MaxCompactionLagMs:     math.MaxInt64,
		DeleteRetentionMs:      86400000,
		TimestampType:          record.CreateTime,
		TimestampBeforeMs:      math.MaxInt64,
		TimestampAfterMs:       3600000,
		ProducerIDExpirationMs: 86400000,
		MaxDecompressedBytes:   v.MaxDecompressedBytes,
	}
}

// logConfigKeys maps each topic config name to its parser.
var logConfigKeys = map[string]func(c *LogConfig, v string) error{
	"segment.bytes":                   intIn(func(c *LogConfig) *int32 { return &c.SegmentBytes }, 14, math.MaxInt32),
	"segment.ms":                      longIn(func(c *LogConfig) *int64 { return &c.SegmentMs }, 1, math.MaxInt64),
	"segment.jitter.ms":               longIn(func(c *LogConfig) *int64 { return &c.SegmentJitterMs }, 0, math.MaxInt64),
	"segment.index.bytes":             intIn(func(c *LogConfig) *int32 { return &c.SegmentIndexBytes }, 4, math.MaxInt32),
	"index.interval.bytes":            intIn(func(c *LogConfig) *int32 { return &c.IndexIntervalBytes }, 0, math.MaxInt32),
	"retention.ms":                    longIn(func(c *LogConfig) *int64 { return &c.RetentionMs }, -1, math.MaxInt64),
	"retention.bytes":                 longIn(func(c *LogConfig) *int64 { return &c.RetentionBytes }, -1, math.MaxInt64),
	"max.message.bytes":               intIn(func(c *LogConfig) *int32 { return &c.MaxMessageBytes }, 0, math.MaxInt32),
	"flush.messages":                  longIn(func(c *LogConfig) *int64 { return &c.FlushMessages }, 1, math.MaxInt64),
	"flush.ms":                        longIn(func(c *LogConfig) *int64 { return &c.FlushMs }, 0, math.MaxInt64),
	"file.delete.delay.ms":            longIn(func(c *LogConfig) *int64 { return &c.FileDeleteDelayMs }, 0, math.MaxInt64),
	"message.timestamp.before.max.ms": longIn(func(c *LogConfig) *int64 { return &c.TimestampBeforeMs }, 0, math.MaxInt64),
	"message.timestamp.after.max.ms":  longIn(func(c *LogConfig) *int64 { return &c.TimestampAfterMs }, 0, math.MaxInt64),
	"producer.id.expiration.ms":       longIn(func(c *LogConfig) *int64 { return &c.ProducerIDExpirationMs }, 1, math.MaxInt64),
	"min.cleanable.dirty.ratio":       doubleIn(func(c *LogConfig) *float64 { return &c.MinCleanableRatio }, 0, 1),
	"min.compaction.lag.ms":           longIn(func(c *LogConfig) *int64 { return &c.MinCompactionLagMs }, 0, math.MaxInt64),
	"max.compaction.lag.ms":           longIn(func(c *LogConfig) *int64 { return &c.MaxCompactionLagMs }, 1, math.MaxInt64),
	"delete.retention.ms":             longIn(func(c *LogConfig) *int64 { return &c.DeleteRetentionMs }, 0, math.MaxInt64),
	"cleanup.policy": func(c *LogConfig, v string) error {
		var p CleanupPolicy
		for _, part := range strings.Split(v, ",") {
			switch strings.TrimSpace(strings.ToLower(part)) {
			case "delete":
				p.Delete = true
			case "compact":
				p.Compact = true
			default:
				return fmt.Errorf("invalid value %q: must be a list of delete and compact", v)
			}
		}
		c.CleanupPolicy = p
		return nil
	},
	"message.timestamp.type": func(c *LogConfig, v string) error {
		switch v {
		case "CreateTime":
			c.TimestampType = record.CreateTime
		case "LogAppendTime":
			c.TimestampType = record.LogAppendTime
		default:
			return fmt.Errorf("invalid value %q: must be CreateTime or LogAppendTime", v)
		}
		return nil
	},
}

// LogConfigKeys lists the topic config names ParseLogConfig understands.
func LogConfigKeys() []string {
	keys := make([]string, 0, len(logConfigKeys))
	for k := range logConfigKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ConfigError names the config key whose value is bad.
type ConfigError struct {
	Key, Value string
	Err        error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("config %s=%q: %v", e.Key, e.Value, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ParseLogConfig applies topic configs over base. Keys it does not own are
// left for the caller (topic configs such as min.insync.replicas belong to
// other layers) unless strict is set, in which case they are errors.
func ParseLogConfig(base LogConfig, props map[string]string, strict bool) (LogConfig, error) {
	c := base
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the first bad key deterministically
	for _, k := range keys {
		parse, ok := logConfigKeys[k]
		if !ok {
			if strict {
				return base, &ConfigError{Key: k, Value: props[k], Err: fmt.Errorf("unknown config")}
			}
			continue
		}
		if err := parse(&c, props[k]); err != nil {
			return base, &ConfigError{Key: k, Value: props[k], Err: err}
		}
	}
	return c, nil
}

func longIn(field func(*LogConfig) *int64, lo, hi int64) func(*LogConfig, string) error {
	return func(c *LogConfig, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("not a long")
		}
		if n < lo || n > hi {
			return fmt.Errorf("value must be in [%d, %d]", lo, hi)
		}
		*field(c) = n
		return nil
	}
}

func doubleIn(field func(*LogConfig) *float64, lo, hi float64) func(*LogConfig, string) error {
	return func(c *LogConfig, v string) error {
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(n) {
			return fmt.Errorf("not a double")
		}
		if n < lo || n > hi {
			return fmt.Errorf("value must be in [%g, %g]", lo, hi)
		}
		*field(c) = n
		return nil
	}
}

func intIn(field func(*LogConfig) *int32, lo, hi int32) func(*LogConfig, string) error {
	return func(c *LogConfig, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return fmt.Errorf("not an int")
		}
		if int32(n) < lo || int32(n) > hi {
			return fmt.Errorf("value must be in [%d, %d]", lo, hi)
		}
		*field(c) = int32(n)
		return nil
	}
}

// validatorConfig is the part of the config LogValidator needs.
func (c LogConfig) validatorConfig() validator.Config {
	return validator.Config{
		TimestampType:        c.TimestampType,
		TimestampBeforeMaxMs: c.TimestampBeforeMs,
		TimestampAfterMaxMs:  c.TimestampAfterMs,
		Compacted:            c.CleanupPolicy.Compact,
		MaxMessageBytes:      c.MaxMessageBytes,
		SegmentBytes:         c.SegmentBytes,
		MaxDecompressedBytes: max(c.MaxDecompressedBytes, int64(c.MaxMessageBytes)),
	}
}

func msDuration(ms int64) time.Duration {
	if ms > int64(1<<63-1)/int64(time.Millisecond) {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(ms) * time.Millisecond
}
