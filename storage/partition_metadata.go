package storage

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/strait-io/strait/storage/vfs"
)

// TopicID is a Kafka topic id (a UUID).
type TopicID [16]byte

// String is Kafka's Uuid.toString: URL-safe base64 without padding.
func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// IsZero reports whether the id is unset (Kafka's ZERO_UUID).
func (id TopicID) IsZero() bool { return id == TopicID{} }

// ParseTopicID parses Kafka's 22-character base64 form.
func ParseTopicID(s string) (TopicID, error) {
	var id TopicID
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, fmt.Errorf("invalid topic id %q", s)
	}
	copy(id[:], b)
	return id, nil
}

// writePartitionMetadata writes partition.metadata as Kafka's
// PartitionMetadataFile does: "version: 0\ntopic_id: <id>\n", atomically.
// Without syncDir the new name is durable only once the caller syncs dir
// (a new directory's task does, new_dir.go).
func writePartitionMetadata(fsys vfs.FS, dir string, id TopicID, syncDir bool) error {
	data := []byte(fmt.Sprintf("version: 0\ntopic_id: %s\n", id))
	if !syncDir {
		return vfs.WriteFileRenamed(fsys, dir, PartitionMetadataFile, data)
	}
	return vfs.WriteFileAtomic(fsys, dir, PartitionMetadataFile, data)
}

// readPartitionMetadata returns the topic id in dir's partition.metadata, or
// a zero id and no error if there is none.
func readPartitionMetadata(fsys vfs.FS, dir string) (TopicID, error) {
	data, err := vfs.ReadFile(fsys, filepath.Join(dir, PartitionMetadataFile))
	if vfs.IsNotExist(err) {
		return TopicID{}, nil
	}
	if err != nil {
		return TopicID{}, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) != 2 || strings.TrimSpace(lines[0]) != "version: 0" || !strings.HasPrefix(lines[1], "topic_id: ") {
		return TopicID{}, fmt.Errorf("malformed %s in %s", PartitionMetadataFile, dir)
	}
	return ParseTopicID(strings.TrimSpace(strings.TrimPrefix(lines[1], "topic_id: ")))
}
