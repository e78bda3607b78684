package configdef

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
)

// mirrorNameConfig is raftmeta.MirrorNameConfig (this package does not
// import raftmeta).
const mirrorNameConfig = "mirror.name"

// mirrorCloneConfig is raftmeta.MirrorCloneConfig: a drill clone's source
// and clone point, kept by the controller like mirror.name.
const mirrorCloneConfig = "mirror.clone.of"

// EffectiveTopicConfigs returns the value of every topic config for a topic
// with the given overrides, in canonical form: the override, else the
// broker's value (Sources.TopicDefaults), else the topic default (Kafka's
// LogConfig.fromProps(extractLogConfigMap, topicOverrides)). The replica
// manager reads min.insync.replicas and compression.type from it. An
// unknown or invalid override is an error (*Error, kerr.InvalidConfig);
// overrides that passed ValidateTopicConfigs have none.
func EffectiveTopicConfigs(src Sources, topicOverrides map[string]string) (map[string]string, error) {
	out := src.TopicDefaults()
	for i := range topicDefs {
		if d := &topicDefs[i]; d.Default != nil && !hasKey(out, d.Name) {
			out[d.Name] = *d.Default
		}
	}
	for k, v := range topicOverrides {
		// mirror.name (KIP-1279) is the controller's record of a topic's
		// mirror, not a log setting: the controller keeps it away from the
		// config APIs and their validation (raftmeta.MirrorNameConfig).
		if k == mirrorNameConfig || k == mirrorCloneConfig {
			continue
		}
		d, ok := topicByName[k]
		if !ok {
			return nil, &Error{Code: kerr.InvalidConfig, Key: k, Msg: "Unknown topic config name: " + k}
		}
		canon, err := d.Normalize(v)
		if err != nil {
			return nil, err
		}
		out[k] = canon
	}
	return out, nil
}

// EffectiveLogConfig is the storage configuration of a topic's partitions:
// EffectiveTopicConfigs converted by storage.ParseLogConfig, with the
// broker's producer.id.expiration.ms, which the log also reads. Keys
// storage does not use (min.insync.replicas, compression.type, ...) are
// skipped.
func EffectiveLogConfig(src Sources, topicOverrides map[string]string) (storage.LogConfig, error) {
	props, err := EffectiveTopicConfigs(src, topicOverrides)
	if err != nil {
		return storage.LogConfig{}, err
	}
	if v, ok := src.BrokerValue("producer.id.expiration.ms"); ok {
		props["producer.id.expiration.ms"] = v
	}
	c, err := storage.ParseLogConfig(storage.DefaultLogConfig(), props, false)
	if err != nil {
		return storage.LogConfig{}, fmt.Errorf("configdef: effective log config: %w", err)
	}
	return c, nil
}
