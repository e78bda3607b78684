package syncer

import (
	"fmt"
	"strconv"
	"time"

	"github.com/strait-io/strait/raftmeta"
)

// DefaultRefreshInterval is mirror.metadata.refresh.interval.ms's default
// (digest §5.2, the newest ClusterMirrorConfigs).
const DefaultRefreshInterval = 60 * time.Second

// RefreshIntervalConfig is the mirror config that sets the sync period.
const RefreshIntervalConfig = "mirror.metadata.refresh.interval.ms"

// settings are the mirror configs the syncer acts on, read again every
// round so a changed filter applies at the next sync.
type settings struct {
	topics, groups  nameFilter
	acls            []aclRule
	propertyExclude map[string]bool
	scram           scramSettings
	// quotas is mirror.client.quotas.sync.enable (quotas.go).
	quotas bool
	// forwardActive is mirror.consumer.offsets.sync.active.groups=
	// forward-only: groups active on the destination are synced forward
	// only (active_groups.go) rather than skipped.
	forwardActive bool
}

// configValue is a mirror config's value or its default.
func configValue(cfgs map[string]string, key string) string {
	return raftmeta.MirrorConfigValue(cfgs, key)
}

// RefreshInterval is the sync period a mirror's configs ask for.
func RefreshInterval(cfgs map[string]string) time.Duration {
	v, ok := cfgs[RefreshIntervalConfig]
	if !ok {
		return DefaultRefreshInterval
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return DefaultRefreshInterval
	}
	return time.Duration(ms) * time.Millisecond
}

func parseSettings(cfgs map[string]string) (settings, error) {
	var s settings
	var err error
	if s.topics, err = newNameFilter(configValue(cfgs, "mirror.topics.include"), configValue(cfgs, "mirror.topics.exclude")); err != nil {
		return s, fmt.Errorf("mirror.topics.%w", err)
	}
	if s.groups, err = newNameFilter(configValue(cfgs, "mirror.groups.include"), configValue(cfgs, "mirror.groups.exclude")); err != nil {
		return s, fmt.Errorf("mirror.groups.%w", err)
	}
	if s.acls, err = parseACLRules(configValue(cfgs, "mirror.acl.include")); err != nil {
		return s, fmt.Errorf("mirror.acl.include: %w", err)
	}
	if s.scram, err = parseScramSettings(cfgs); err != nil {
		return s, err
	}
	s.quotas = raftmeta.MirrorSyncsClientQuotas(cfgs)
	s.forwardActive = configValue(cfgs, raftmeta.MirrorActiveGroupsSyncConfig) == raftmeta.MirrorActiveGroupsForwardOnly
	s.propertyExclude = map[string]bool{raftmeta.MirrorNameConfig: true}
	for _, k := range splitList(configValue(cfgs, "mirror.topic.properties.exclude")) {
		s.propertyExclude[k] = true
	}
	return s, nil
}
