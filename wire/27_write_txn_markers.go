package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// WriteTxnMarkers: v1
//
// Behavior:
// * Sent by a transaction coordinator to partition leaders: each marker
//   ends a producer's transaction with a COMMIT or ABORT control batch,
//   answered once replicated (replication/write_txn_markers.go).
// * An inter-broker API (Kafka checks CLUSTER_ACTION); Strait enforces no
//   ACLs yet.
//
// Version notes:
// * v0: removed in Kafka 4.0 (KIP-896)
// * v1: flexible versions
// * v2: TransactionVersion (Kafka 4.2, KIP-1228): not implemented, so not
//   advertised although kmsg decodes it

func init() {
	register(api{key: 27, throttleExempt: true, min: 1, max: 1, handle: (*Server).handleWriteTxnMarkers})
}

// WriteTxnMarkers, sent by transaction coordinators, needs CLUSTER_ACTION;
// else every partition is CLUSTER_AUTHORIZATION_FAILED
// (KafkaApis.handleWriteTxnMarkersRequest).
func (s *Server) handleWriteTxnMarkers(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.WriteTxnMarkersRequest)
	if s.auth(ctx).cluster(opClusterAction) {
		return s.svc.Replicas.WriteTxnMarkers(ctx, req), nil
	}
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition, rp.ErrorCode = p, errClusterAuth
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp, nil
}
