package config

import (
	"errors"
	"fmt"

	"github.com/strait-io/strait/broker/configdef"
)

// ShareGroupConfig is the group.share.* part of the config: KIP-932 share
// groups (Kafka's GroupCoordinatorConfig and ShareGroupConfig).
type ShareGroupConfig struct {
	SessionTimeoutMs       int32
	MinSessionTimeoutMs    int32
	MaxSessionTimeoutMs    int32
	HeartbeatIntervalMs    int32
	MinHeartbeatIntervalMs int32
	MaxHeartbeatIntervalMs int32
	MaxSize                int32
	// Assignors are the assignors' short names: exactly one, "simple".
	Assignors []string
	// The share partitions' settings.
	RecordLockDurationMs    int32
	MinRecordLockDurationMs int32
	MaxRecordLockDurationMs int32
	DeliveryCountLimit      int32
	PartitionMaxRecordLocks int32
}

func buildShareGroup(v values) (ShareGroupConfig, error) {
	s := ShareGroupConfig{
		SessionTimeoutMs:        v.i32("group.share.session.timeout.ms"),
		MinSessionTimeoutMs:     v.i32("group.share.min.session.timeout.ms"),
		MaxSessionTimeoutMs:     v.i32("group.share.max.session.timeout.ms"),
		HeartbeatIntervalMs:     v.i32("group.share.heartbeat.interval.ms"),
		MinHeartbeatIntervalMs:  v.i32("group.share.min.heartbeat.interval.ms"),
		MaxHeartbeatIntervalMs:  v.i32("group.share.max.heartbeat.interval.ms"),
		MaxSize:                 v.i32("group.share.max.size"),
		RecordLockDurationMs:    v.i32("group.share.record.lock.duration.ms"),
		MinRecordLockDurationMs: v.i32("group.share.min.record.lock.duration.ms"),
		MaxRecordLockDurationMs: v.i32("group.share.max.record.lock.duration.ms"),
		DeliveryCountLimit:      v.i32("group.share.delivery.count.limit"),
		PartitionMaxRecordLocks: v.i32("group.share.partition.max.record.locks"),
	}
	for _, a := range configdef.SplitList(v.str("group.share.assignors")) {
		if a == "org.apache.kafka.coordinator.group.assignor.SimpleAssignor" {
			a = "simple"
		}
		s.Assignors = append(s.Assignors, a)
	}
	return s, s.validate()
}

// validate checks the settings against each other as Kafka's
// GroupCoordinatorConfig and ShareGroupConfig do, with their messages.
func (s ShareGroupConfig) validate() error {
	if err := validateGroupTimeouts("group.share", s.SessionTimeoutMs, s.MinSessionTimeoutMs, s.MaxSessionTimeoutMs,
		s.HeartbeatIntervalMs, s.MinHeartbeatIntervalMs, s.MaxHeartbeatIntervalMs); err != nil {
		return err
	}
	switch {
	case len(s.Assignors) != 1:
		return fmt.Errorf("group.share.assignors must contain exactly one assignor, but found %d", len(s.Assignors))
	case s.RecordLockDurationMs < s.MinRecordLockDurationMs:
		return errors.New("group.share.record.lock.duration.ms must be greater than or equal to group.share.min.record.lock.duration.ms")
	case s.MaxRecordLockDurationMs < s.RecordLockDurationMs:
		return errors.New("group.share.max.record.lock.duration.ms must be greater than or equal to group.share.record.lock.duration.ms")
	}
	return nil
}

// validateGroupTimeouts checks a group protocol's session timeout and
// heartbeat interval against their bounds and each other, with Kafka's
// messages; prefix is "group.consumer" or "group.share".
func validateGroupTimeouts(prefix string, session, minSession, maxSession, heartbeat, minHeartbeat, maxHeartbeat int32) error {
	fail := func(format string) error { return fmt.Errorf(format, prefix, prefix) }
	switch {
	case maxHeartbeat < minHeartbeat:
		return fail("%s.max.heartbeat.interval.ms must be greater than or equal to %s.min.heartbeat.interval.ms")
	case maxSession < minSession:
		return fail("%s.max.session.timeout.ms must be greater than or equal to %s.min.session.timeout.ms")
	case session < minSession:
		return fail("%s.session.timeout.ms must be greater than or equal to %s.min.session.timeout.ms")
	case session > maxSession:
		return fail("%s.session.timeout.ms must be less than or equal to %s.max.session.timeout.ms")
	case heartbeat < minHeartbeat:
		return fail("%s.heartbeat.interval.ms must be greater than or equal to %s.min.heartbeat.interval.ms")
	case heartbeat > maxHeartbeat:
		return fail("%s.heartbeat.interval.ms must be less than or equal to %s.max.heartbeat.interval.ms")
	case heartbeat >= session:
		return fail("%s.heartbeat.interval.ms must be less than %s.session.timeout.ms")
	}
	return nil
}
