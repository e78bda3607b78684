package configdef

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ValidateTopicConfigs checks a topic's config overrides as the controller
// must before accepting CreateTopics, AlterConfigs or
// IncrementalAlterConfigs (Kafka's ControllerConfigurationValidator and
// LogConfig.validate), against Kafka's defaults for the keys it does not
// set. The error is a *Error with kerr.InvalidConfig and Kafka's message:
//
//   - a nil value: "Null value not supported for topic configs: a,b";
//   - an unknown key: "Unknown topic config name: x";
//   - a bad value: "Invalid value v for configuration k: reason";
//   - remote.storage.enable=true, min.compaction.lag.ms above
//     max.compaction.lag.ms: Kafka's cross-key messages.
//
// Keys are checked in sorted order so the first error is deterministic.
func ValidateTopicConfigs(configs map[string]*string) error {
	return ValidateTopicConfigsWith(nil, configs)
}

// ValidateTopicConfigsWith is ValidateTopicConfigs where the keys the topic
// does not set take the broker's values (Sources.TopicDefaults), as Kafka
// validates against KafkaConfig.extractLogConfigMap. A nil brokerDefaults
// means Kafka's defaults.
func ValidateTopicConfigsWith(brokerDefaults map[string]string, configs map[string]*string) error {
	keys, err := knownKeys(configs, "topic", topicByName)
	if err != nil {
		return err
	}
	values := make(map[string]string, len(topicDefs))
	for i := range topicDefs {
		d := &topicDefs[i]
		if v, ok := brokerDefaults[d.Name]; ok {
			values[d.Name] = v
		} else if d.Default != nil {
			values[d.Name] = *d.Default
		}
	}
	for _, k := range keys {
		canon, err := topicByName[k].Normalize(*configs[k])
		if err != nil {
			return err
		}
		values[k] = canon
	}
	return validateTopicValues(values)
}

// knownKeys returns the keys of a resource's configs, sorted, or Kafka's
// ControllerConfigurationValidator error for a null value or the first
// key that is not one of defs (what is "topic" or "group").
func knownKeys(configs map[string]*string, what string, defs map[string]*Def) ([]string, error) {
	keys := make([]string, 0, len(configs))
	var nulls []string
	for k, v := range configs {
		keys = append(keys, k)
		if v == nil {
			nulls = append(nulls, k)
		}
	}
	sort.Strings(keys)
	if len(nulls) > 0 {
		sort.Strings(nulls)
		return nil, &Error{Code: kerr.InvalidConfig, Key: nulls[0],
			Msg: "Null value not supported for " + what + " configs: " + strings.Join(nulls, ",")}
	}
	for _, k := range keys {
		if _, ok := defs[k]; !ok {
			return nil, &Error{Code: kerr.InvalidConfig, Key: k, Msg: "Unknown " + what + " config name: " + k}
		}
	}
	return keys, nil
}

// validateTopicValues holds the checks that involve several keys
// (LogConfig.validateValues and validateTopicLogConfigValues). Strait has
// no tiered storage, which Kafka calls remote.log.storage.system.enable=false.
func validateTopicValues(v map[string]string) error {
	if v["remote.storage.enable"] == "true" {
		return &Error{Code: kerr.InvalidConfig, Key: "remote.storage.enable",
			Msg: "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."}
	}
	minLag, _ := strconv.ParseInt(v["min.compaction.lag.ms"], 10, 64)
	maxLag, _ := strconv.ParseInt(v["max.compaction.lag.ms"], 10, 64)
	if minLag > maxLag {
		return &Error{Code: kerr.InvalidConfig, Key: "min.compaction.lag.ms",
			Msg: fmt.Sprintf("conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", minLag, maxLag)}
	}
	return nil
}
