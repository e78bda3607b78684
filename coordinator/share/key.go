package share

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/raftmeta"
)

// Key is a share-partition: a share group's view of one partition of a
// topic (Kafka's SharePartitionKey), whose state the coordinator keeps.
type Key struct {
	GroupID   string
	TopicID   raftmeta.Uuid
	Partition int32
}

// String is the coordinator key, "groupId:topicId:partition"
// (SharePartitionKey.asCoordinatorKey), the topic id written as Kafka's
// Uuid.toString. Share-partition leaders send it in FindCoordinator (key
// type 2), and the coordinator's partition is its hash.
func (k Key) String() string {
	return fmt.Sprintf("%s:%s:%d", k.GroupID, k.TopicID, k.Partition)
}

// PartitionFor is the __share_group_state partition holding k's state:
// Utils.abs(key.asCoordinatorKey().hashCode()) % numPartitions
// (ShareCoordinatorService.partitionFor), the Java hash the group
// coordinator places groups with.
func PartitionFor(k Key, numPartitions int32) int32 {
	return coordinator.PartitionFor(k.String(), numPartitions)
}

// ParseKey reads a coordinator key as Kafka's SharePartitionKey.validate
// and getInstance do: exactly three ":"-separated fields (Java's split, so
// trailing empty fields do not count), a group id that is not blank (it is
// trimmed, as Java's trim does), a topic id in Kafka's base64 form, and a
// decimal int32 partition.
func ParseKey(s string) (Key, error) {
	if s == "" {
		return Key{}, fmt.Errorf("share partition key cannot be empty")
	}
	fields := strings.Split(s, ":")
	for len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	if len(fields) != 3 {
		return Key{}, fmt.Errorf("invalid key format: expected groupId:topicId:partition, found %q", s)
	}
	group := strings.TrimFunc(fields[0], func(r rune) bool { return r <= ' ' })
	if group == "" {
		return Key{}, fmt.Errorf("share partition key %q has an empty group id", s)
	}
	// Java's base64 decoder takes the padded form too.
	id, err := raftmeta.ParseUuid(strings.TrimSuffix(fields[1], "=="))
	if err != nil {
		return Key{}, fmt.Errorf("invalid topic id: %w", err)
	}
	p, err := strconv.ParseInt(fields[2], 10, 32)
	if err != nil {
		return Key{}, fmt.Errorf("invalid partition %q", fields[2])
	}
	return Key{GroupID: group, TopicID: id, Partition: int32(p)}, nil
}
