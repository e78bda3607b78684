package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterReplicaLogDirs: v1-2
//
// Behavior:
// * Answered by the replicas service; this file only routes, gates
//   versions and authorizes.
//
// Version notes:
// * v1: the same as v0, which Kafka 4.0 removed (KIP-896)
// * v2: flexible versions

func init() { register(api{key: 34, min: 1, max: 2, handle: (*Server).handleAlterReplicaLogDirs}) }

// AlterReplicaLogDirs needs ALTER on the cluster, else every partition
// answers CLUSTER_AUTHORIZATION_FAILED
// (KafkaApis.handleAlterReplicaLogDirsRequest).
func (s *Server) handleAlterReplicaLogDirs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterReplicaLogDirsRequest)
	if s.auth(ctx).cluster(opAlter) {
		return s.svc.Replicas.AlterReplicaLogDirs(ctx, req), nil
	}
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, errClusterAuth
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return resp, nil
}
