package coordinator

import "github.com/strait-io/strait/coordinator/assignor"

// topicID is a topic's Kafka Uuid, as the server-side assignors name it.
type topicID = assignor.TopicID

// consumerAssignor returns the server-side assignor named name among
// those a consumer group may use (group.consumer.assignors: uniform and
// range; simple is the share groups').
func consumerAssignor(name string) (assignor.Assignor, bool) {
	switch name {
	case assignor.UniformName, assignor.RangeName:
		return assignor.ByName(name)
	}
	return nil, false
}
