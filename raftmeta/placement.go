package raftmeta

import (
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// apiError is a Kafka error code with its message, what a request item
// fails with.
type apiError struct {
	code int16
	msg  string
}

func errorf(e *kerr.Error, format string, args ...any) *apiError {
	return &apiError{code: e.Code, msg: fmt.Sprintf(format, args...)}
}

func (e *apiError) message() *string {
	if e == nil || e.msg == "" {
		return nil
	}
	return strp(e.msg)
}

// placeReplicas assigns replicas to numPartitions new partitions numbered
// from startPartition. active are the registered brokers that are neither
// fenced nor shutting down, inactive the other registered ones, each
// sorted. It is Kafka's rack-unaware assignment
// (AdminUtils.assignReplicasToBrokersRackUnaware, the idea
// StripedReplicaPlacer keeps): leaders go round-robin from a start index,
// followers follow at a shift that grows each time the partitions wrap
// around the brokers, so leaders and followers both spread. Kafka draws the
// start index and shift at random; we derive them from the topic name, so
// a placement varies between topics yet is reproducible in tests.
//
// As in StripedReplicaPlacer, inactive brokers are used only once the
// active ones run out, and never for the leader: a topic asking for three
// replicas of a three-broker cluster with one broker down gets its third
// replica there, out of the ISR until that broker is back, rather than
// fewer replicas or none.
func placeReplicas(active, inactive []int32, topic string, startPartition, numPartitions int32, rf int16) ([][]int32, *apiError) {
	n := int32(len(active))
	if n == 0 {
		return nil, errorf(kerr.InvalidReplicationFactor, "Unable to replicate the partition %d time(s): All brokers are currently fenced.", rf)
	}
	if registered := len(active) + len(inactive); int(rf) > registered {
		return nil, errorf(kerr.InvalidReplicationFactor,
			"Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered.", rf, rf, registered)
	}
	onActive := min(int32(rf), n)
	h := fnv.New32a()
	h.Write([]byte(topic))
	seed := int32(h.Sum32() & 0x7fffffff)
	startIndex := seed % n
	shift := (seed / n) % n
	out := make([][]int32, 0, numPartitions)
	for i := int32(0); i < numPartitions; i++ {
		pid := startPartition + i
		if pid > 0 && pid%n == 0 {
			shift++
		}
		first := (pid + startIndex) % n
		replicas := make([]int32, 0, rf)
		replicas = append(replicas, active[first])
		for j := int32(0); j < onActive-1; j++ {
			replicas = append(replicas, active[(first+1+(shift+j)%(n-1))%n])
		}
		for j := int32(0); j < int32(rf)-onActive; j++ {
			replicas = append(replicas, inactive[(pid+j)%int32(len(inactive))])
		}
		out = append(out, replicas)
	}
	return out, nil
}

// placeOnBrokers is placeReplicas over img's registered brokers.
func placeOnBrokers(img *Image, topic string, startPartition, numPartitions int32, rf int16) ([][]int32, *apiError) {
	return placeReplicas(img.ActiveBrokers(), img.InactiveBrokers(), topic, startPartition, numPartitions, rf)
}

// validateManualAssignment is ReplicationControlManager's
// validateManualPartitionAssignment: a non-empty list of distinct
// registered brokers, as many as the other partitions have (rf, or any
// when rf is 0). It returns the ISR: the replicas on active brokers.
func validateManualAssignment(img *Image, replicas []int32, rf int, partition int32) ([]int32, *apiError) {
	if len(replicas) == 0 {
		return nil, errorf(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.")
	}
	sorted := slices.Clone(replicas)
	slices.Sort(sorted)
	for i, id := range sorted {
		if _, ok := img.Brokers[id]; !ok {
			return nil, errorf(kerr.InvalidReplicaAssignment,
				"The manual partition assignment includes broker %d, but no such broker is registered.", id)
		}
		if i > 0 && sorted[i-1] == id {
			return nil, errorf(kerr.InvalidReplicaAssignment,
				"The manual partition assignment includes the broker %d more than once.", id)
		}
	}
	if rf > 0 && len(replicas) != rf {
		return nil, errorf(kerr.InvalidReplicaAssignment,
			"The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s).", len(replicas), rf)
	}
	isr := activeReplicas(img, replicas)
	if len(isr) == 0 {
		return nil, errorf(kerr.InvalidReplicaAssignment,
			"All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.", partition)
	}
	return isr, nil
}

// activeReplicas keeps the replicas on active brokers (registered,
// unfenced, not shutting down), in order: a new partition's ISR
// (ReplicationControlManager's isActive filter).
func activeReplicas(img *Image, replicas []int32) []int32 {
	isr := make([]int32, 0, len(replicas))
	for _, id := range replicas {
		if img.BrokerActive(id) {
			isr = append(isr, id)
		}
	}
	return isr
}

// newPartitionRecord is a new partition: ISR the active replicas, leader
// the first of them, epochs 0 (ReplicationControlManager's
// buildPartitionRegistration).
func newPartitionRecord(id Uuid, partition int32, replicas, isr []int32) *PartitionRecord {
	return &PartitionRecord{
		PartitionID:    partition,
		TopicID:        id,
		Replicas:       replicas,
		ISR:            isr,
		Leader:         isr[0],
		LeaderEpoch:    0,
		PartitionEpoch: 0,
	}
}
