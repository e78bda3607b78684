package raftmeta

import (
	"cmp"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta/mirrorstate"
)

// MirrorNameConfig is the topic config that makes a topic a mirror topic
// (the seed): "<mirror>" mirrors it, "<mirror>.paused" pauses it and
// "<mirror>.removed" stops it (mirrorstate.ParseMirrorName). Only the mirror
// RPCs write it.
const MirrorNameConfig = "mirror.name"

// MirrorStateTopic is the compacted internal topic holding the mirror
// partitions' states (the seed's __mirror_state); CreateMirror creates it
// with the first mirror.
const MirrorStateTopic = "__mirror_state"

// Mirror is a KIP-1279 cluster mirror (MirrorRecord). Its source-connection
// and filter configs are Image.Configs[ConfigResource{ConfigResourceMirror,
// Name}].
type Mirror struct {
	Name         string
	ID           Uuid
	CreateTimeMs int64
}

// MirrorTopic is a topic whose mirror.name names a mirror, with the state
// the metadata asks its partitions to reach.
type MirrorTopic struct {
	Topic   *Topic
	Desired mirrorstate.Desired
}

// MirrorConfig returns a mirror's configs (nil if none).
func (img *Image) MirrorConfig(name string) map[string]string {
	return img.Configs[ConfigResource{Type: ConfigResourceMirror, Name: name}]
}

// TopicMirror reads a topic's mirror.name: the mirror it names ("" for
// none) and the desired state (mirrorstate.DesiredNone for none). A topic
// may name a mirror that no longer exists: DeleteMirror leaves stopped
// topics' "<mirror>.removed" in place.
func (img *Image) TopicMirror(topic string) (string, mirrorstate.Desired) {
	return mirrorstate.ParseMirrorName(img.TopicConfig(topic)[MirrorNameConfig])
}

// MirrorTopics returns the topics whose mirror.name names mirror, stopped
// ones included, sorted by name.
func (img *Image) MirrorTopics(mirror string) []MirrorTopic {
	var out []MirrorTopic
	for res, cfg := range img.Configs {
		if res.Type != ConfigResourceTopic {
			continue
		}
		v, ok := cfg[MirrorNameConfig]
		if !ok {
			continue
		}
		m, d := mirrorstate.ParseMirrorName(v)
		t, ok := img.Topics[res.Name]
		if m != mirror || d == mirrorstate.DesiredNone || !ok {
			continue
		}
		out = append(out, MirrorTopic{Topic: t, Desired: d})
	}
	slices.SortFunc(out, func(a, b MirrorTopic) int { return cmp.Compare(a.Topic.Name, b.Topic.Name) })
	return out
}

// MirrorNames returns the mirrors' names sorted.
func (img *Image) MirrorNames() []string {
	names := make([]string, 0, len(img.Mirrors))
	for n := range img.Mirrors {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// isMirrorName reports whether key is a topic config only the mirror
// operations write: mirror.name, or a clone's mirror.clone.of.
func isMirrorName(res ConfigResource, key string) bool {
	return res.Type == ConfigResourceTopic && (key == MirrorNameConfig || key == MirrorCloneConfig)
}

// guardMirrorName keeps the config APIs from writing a topic's mirror.name:
// only the mirror RPCs move a topic in and out of a mirror, after their
// checks. Setting it to its current value is dropped from changes (a
// client writing back what it described); any other change is
// INVALID_CONFIG.
func guardMirrorName(img *Image, res ConfigResource, changes map[string]*string) *apiError {
	if _, ok := changes[MirrorCloneConfig]; ok && res.Type == ConfigResourceTopic {
		cur, had := img.Configs[res][MirrorCloneConfig]
		if v := changes[MirrorCloneConfig]; !had || v == nil || *v != cur {
			return errorf(kerr.InvalidConfig, "%s is set when a clone is created, not by altering configs.", MirrorCloneConfig)
		}
		delete(changes, MirrorCloneConfig)
	}
	v, ok := changes[MirrorNameConfig]
	if !ok || res.Type != ConfigResourceTopic {
		return nil
	}
	cur, had := img.Configs[res][MirrorNameConfig]
	if (v == nil && !had) || (v != nil && had && *v == cur) {
		delete(changes, MirrorNameConfig)
		return nil
	}
	return errorf(kerr.InvalidConfig, "%s is set by the mirror RPCs (StartMirrorTopics, StopMirrorTopics, PauseMirrorTopics, ResumeMirrorTopics), not by altering configs.", MirrorNameConfig)
}

// withoutMirrorName is what the ConfigValidator sees of a topic's configs:
// all but mirror.name, which the controller alone manages (the broker's
// topic config definitions need not know it).
func withoutMirrorName(res ConfigResource, configs map[string]*string) map[string]*string {
	_, named := configs[MirrorNameConfig]
	_, cloned := configs[MirrorCloneConfig]
	if (!named && !cloned) || res.Type != ConfigResourceTopic {
		return configs
	}
	out := maps.Clone(configs)
	delete(out, MirrorNameConfig)
	delete(out, MirrorCloneConfig)
	return out
}
