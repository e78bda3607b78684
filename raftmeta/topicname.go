package raftmeta

import (
	"fmt"
	"strings"
)

// ClusterMetadataTopic is KRaft's metadata log topic name; no user topic
// may take it (ControllerApis.createTopics).
const ClusterMetadataTopic = "__cluster_metadata"

// maxTopicNameLength is Topic.MAX_NAME_LENGTH: a partition directory is
// <topic>-<partition>, and the whole must fit a 255-byte file name.
const maxTopicNameLength = 249

// ValidateTopicName is Kafka's Topic.validate: 1 to 249 characters of
// [a-zA-Z0-9._-], and not "." or "..". The error text is Kafka's.
func ValidateTopicName(name string) error {
	reason := ""
	switch {
	case name == "":
		reason = "the empty string is not allowed"
	case name == ".":
		reason = "'.' is not allowed"
	case name == "..":
		reason = "'..' is not allowed"
	case len(name) > maxTopicNameLength:
		reason = fmt.Sprintf("the length of '%s' is longer than the max allowed length %d", name, maxTopicNameLength)
	default:
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
				reason = fmt.Sprintf("'%s' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'", name)
				break
			}
		}
	}
	if reason != "" {
		return fmt.Errorf("Topic name is invalid: %s", reason)
	}
	return nil
}

// unifyCollisionChars is Topic.unifyCollisionChars: '.' and '_' collide in
// metric names, so topics that differ only there cannot coexist.
func unifyCollisionChars(name string) string { return strings.ReplaceAll(name, ".", "_") }

func hasCollisionChars(name string) bool { return strings.ContainsAny(name, "._") }
