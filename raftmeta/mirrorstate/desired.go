package mirrorstate

import (
	"fmt"
	"strings"
)

// Desired is the state metadata asks a mirror topic's partitions to reach.
// The seed encodes it in the topic config mirror.name (ParseMirrorName); the
// values are those of the later MirrorTopicStateChangeRecord.DesiredState
// (digest §4.2: 0 start, 1 stop, 2 pause), so either encoding maps onto it.
type Desired int8

const (
	// DesiredNone: the topic is not a mirror topic (mirror.name unset, or
	// its mirror was deleted). The machine removes its fetcher and idles.
	DesiredNone Desired = -1
	// DesiredStart: mirror (start, resume, or retry after FAILED).
	DesiredStart Desired = 0
	// DesiredStop: fail over — stop mirroring and become writable.
	DesiredStop Desired = 1
	// DesiredPause: stop fetching, stay read-only.
	DesiredPause Desired = 2
)

func (d Desired) String() string {
	switch d {
	case DesiredNone:
		return "none"
	case DesiredStart:
		return "start"
	case DesiredStop:
		return "stop"
	case DesiredPause:
		return "pause"
	}
	return fmt.Sprintf("Desired(%d)", int8(d))
}

// The seed's mirror.name suffixes: StopMirrorTopics appends ".removed",
// PauseMirrorTopics appends ".paused" and ResumeMirrorTopics removes it.
const (
	SuffixRemoved = ".removed"
	SuffixPaused  = ".paused"
)

// ParseMirrorName reads a mirror.name topic config value: "" is not a
// mirror topic; "m" starts (or resumes) mirror m; "m.paused" pauses it;
// "m.removed" stops it. Mirror names must therefore not themselves end in a
// suffix; CreateMirror should reject such names.
func ParseMirrorName(value string) (mirror string, d Desired) {
	switch {
	case value == "":
		return "", DesiredNone
	case strings.HasSuffix(value, SuffixRemoved):
		return strings.TrimSuffix(value, SuffixRemoved), DesiredStop
	case strings.HasSuffix(value, SuffixPaused):
		return strings.TrimSuffix(value, SuffixPaused), DesiredPause
	}
	return value, DesiredStart
}

// FormatMirrorName is the inverse of ParseMirrorName: the mirror.name value
// the controller writes for mirror and d.
func FormatMirrorName(mirror string, d Desired) string {
	switch d {
	case DesiredStop:
		return mirror + SuffixRemoved
	case DesiredPause:
		return mirror + SuffixPaused
	case DesiredNone:
		return ""
	}
	return mirror
}
