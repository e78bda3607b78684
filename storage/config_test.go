package storage

import (
	"errors"
	"strings"
	"testing"

	"github.com/strait-io/strait/storage/record"
)

func TestParseLogConfig(t *testing.T) {
	c, err := ParseLogConfig(DefaultLogConfig(), map[string]string{
		"segment.bytes":          "1048576",
		"retention.ms":           "-1",
		"cleanup.policy":         "compact,delete",
		"message.timestamp.type": "LogAppendTime",
		"flush.messages":         "1",
		"min.insync.replicas":    "2", // not a storage key: left for the caller
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.SegmentBytes != 1<<20 || c.RetentionMs != -1 || !c.CleanupPolicy.Compact || !c.CleanupPolicy.Delete ||
		c.TimestampType != record.LogAppendTime || c.FlushMessages != 1 {
		t.Fatalf("%+v", c)
	}
	d := DefaultLogConfig()
	if d.SegmentBytes != 1<<30 || d.RetentionMs != 604800000 || d.MaxMessageBytes != 1048588 ||
		d.TimestampAfterMs != 3600000 || d.IndexIntervalBytes != 4096 || d.SegmentIndexBytes != 10<<20 {
		t.Fatalf("defaults differ from Kafka's: %+v", d)
	}
}

func TestParseLogConfigNamesTheBadKey(t *testing.T) {
	for _, tc := range []struct {
		props  map[string]string
		strict bool
		key    string
	}{
		{map[string]string{"segment.bytes": "ten"}, false, "segment.bytes"},
		{map[string]string{"segment.bytes": "1"}, false, "segment.bytes"},
		{map[string]string{"retention.ms": "-2"}, false, "retention.ms"},
		{map[string]string{"cleanup.policy": "shred"}, false, "cleanup.policy"},
		{map[string]string{"message.timestamp.type": "Now"}, false, "message.timestamp.type"},
		{map[string]string{"segmnet.bytes": "1"}, true, "segmnet.bytes"},
	} {
		_, err := ParseLogConfig(DefaultLogConfig(), tc.props, tc.strict)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.key) {
			t.Fatalf("%v: err %v", tc.props, err)
		}
	}
}
