package syncer

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// configDiff is what IncrementalAlterConfigs must do to a destination
// topic so its dynamic configs equal the source topic's, excluded
// properties aside: the keys to SET and the keys to DELETE.
type configDiff struct {
	set    map[string]string
	delete []string
}

func (d configDiff) empty() bool { return len(d.set) == 0 && len(d.delete) == 0 }

// diffConfigs compares the source's and the destination's dynamic
// (non-default) configs of one topic. Excluded keys are never set nor
// deleted: the destination keeps its own (digest §5.1
// mirror.topic.properties.exclude; mirror.name always).
func diffConfigs(source, dest map[string]string, exclude map[string]bool) configDiff {
	d := configDiff{set: map[string]string{}}
	for k, v := range source {
		if exclude[k] {
			continue
		}
		if cur, ok := dest[k]; !ok || cur != v {
			d.set[k] = v
		}
	}
	for _, k := range slices.Sorted(maps.Keys(dest)) {
		if _, ok := source[k]; !ok && !exclude[k] {
			d.delete = append(d.delete, k)
		}
	}
	return d
}

// alterOps is the diff as IncrementalAlterConfigs operations, in key
// order.
func (d configDiff) alterOps() []kadm.AlterConfig {
	var ops []kadm.AlterConfig
	for _, k := range slices.Sorted(maps.Keys(d.set)) {
		v := d.set[k]
		ops = append(ops, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v})
	}
	for _, k := range d.delete {
		ops = append(ops, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	return ops
}

// dynamicConfigs are a described topic's configs set on the topic itself
// (DYNAMIC_TOPIC_CONFIG): the non-default values the sync copies.
func dynamicConfigs(rc kadm.ResourceConfig) map[string]string {
	out := map[string]string{}
	for _, c := range rc.Configs {
		if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil && !c.Sensitive {
			out[c.Key] = *c.Value
		}
	}
	return out
}
