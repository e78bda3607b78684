package raftmeta

import (
	"fmt"
	"strconv"
	"strings"
)

// MirrorCloneConfig makes a topic created by CreateTopics a drill clone of
// a mirror topic (`strait mirror clone`, issue 27): a writable copy of the
// mirror topic's partitions up to the given offsets, made by each replica
// from its local copy while the mirror goes on. Its value is
// "MIRROR:TOPIC:TOPIC_ID:P=OFFSET,P=OFFSET..." (CloneSpec.String); in
// CreateTopics TOPIC_ID may be empty. Only CreateTopics sets it: the
// config APIs cannot change it afterwards.
const MirrorCloneConfig = "mirror.clone.of"

// CloneSpec is a parsed mirror.clone.of.
type CloneSpec struct {
	Mirror  string
	Topic   string
	TopicID Uuid    // zero when the request left it out
	UpTo    []int64 // the clone point of partition i
}

// ParseCloneSpec parses a mirror.clone.of value.
func ParseCloneSpec(v string) (CloneSpec, error) {
	var s CloneSpec
	f := strings.Split(v, ":")
	if len(f) != 4 || f[0] == "" || f[1] == "" || f[3] == "" {
		return s, fmt.Errorf("%s must be MIRROR:TOPIC:TOPIC_ID:P=OFFSET[,P=OFFSET...], got %q", MirrorCloneConfig, v)
	}
	s.Mirror, s.Topic = f[0], f[1]
	if f[2] != "" {
		id, err := ParseUuid(f[2])
		if err != nil {
			return s, fmt.Errorf("%s: bad topic id %q", MirrorCloneConfig, f[2])
		}
		s.TopicID = id
	}
	points := map[int]int64{}
	for _, pv := range strings.Split(f[3], ",") {
		ps, os, ok := strings.Cut(pv, "=")
		p, perr := strconv.Atoi(ps)
		off, oerr := strconv.ParseInt(os, 10, 64)
		if !ok || perr != nil || oerr != nil || p < 0 || off < 0 || p >= maxRecordsPerOp {
			return s, fmt.Errorf("%s: bad partition point %q (want P=OFFSET, both >= 0)", MirrorCloneConfig, pv)
		}
		if _, dup := points[p]; dup {
			return s, fmt.Errorf("%s: partition %d given twice", MirrorCloneConfig, p)
		}
		points[p] = off
	}
	s.UpTo = make([]int64, len(points))
	for p, off := range points {
		if p >= len(points) {
			return s, fmt.Errorf("%s: partitions must be 0..%d", MirrorCloneConfig, len(points)-1)
		}
		s.UpTo[p] = off
	}
	return s, nil
}

func (s CloneSpec) String() string {
	parts := make([]string, len(s.UpTo))
	for p, off := range s.UpTo {
		parts[p] = fmt.Sprintf("%d=%d", p, off)
	}
	id := ""
	if !s.TopicID.IsZero() {
		id = s.TopicID.String()
	}
	return s.Mirror + ":" + s.Topic + ":" + id + ":" + strings.Join(parts, ",")
}
