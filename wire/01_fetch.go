package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// Fetch: v4-17
//
// Behavior:
// * Served by the replica manager: fetch sessions (KIP-227), long poll up
//   to MaxWaitMillis until MinBytes are available, read_uncommitted reads
//   up to the high watermark and read_committed up to the last stable
//   offset with the aborted transactions in range.
// * The record data comes back as segment file slices. On a plaintext
//   listener a response with at least 64 KiB of it is sent with
//   sendfile(2) from the files when nothing is queued ahead on the
//   connection (sendfile.go); otherwise the fetch encoder reads it straight
//   into one pooled response buffer (fetch_encode.go, bufpool.go).
// * A slice cut short by a concurrent truncation: the pooled path sends
//   what was read (a trailing partial batch is dropped by clients); the
//   sendfile path, whose length prefix is already out, closes the
//   connection, as Kafka's FileRecords.writeTo throws on a file truncated
//   during a transfer.
//
// Version notes:
// * v4: IsolationLevel, LastStableOffset, AbortedTransactions (KIP-98)
// * v5: LogStartOffset (KIP-107)
// * v7: fetch sessions (KIP-227)
// * v9: CurrentLeaderEpoch (KIP-320)
// * v11: RackID and PreferredReadReplica (KIP-392)
// * v12: flexible versions; LastFetchedEpoch and DivergingEpoch (KIP-595)
// * v13: topic ids (KIP-516)
// * v15: ReplicaState (KIP-903)
// * v16, v17: CurrentLeader and NodeEndpoints (KIP-951), directory ids

func init() { register(api{key: 1, min: 4, max: 17, handle: (*Server).handleFetch}) }

// handleFetch: a consumer needs READ on each topic and a follower (a
// replica id) CLUSTER_ACTION (KafkaApis.handleFetchRequest); the replica
// manager answers the partitions refused, those of the request and of its
// fetch session alike, TOPIC_AUTHORIZATION_FAILED (authz_fetch.go).
func (s *Server) handleFetch(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FetchRequest)
	if c := s.auth(ctx); c.on {
		ctx = reqctx.WithReadAllowed(ctx, s.readCheck(c, isFollowerFetch(req)))
	}
	res := s.svc.Replicas.Fetch(ctx, req)
	for i := range res.Resp.Topics {
		for j := range res.Resp.Topics[i].Partitions {
			// Empty, never null: librdkafka rejects null records.
			if res.Resp.Topics[i].Partitions[j].RecordBatches == nil {
				res.Resp.Topics[i].Partitions[j].RecordBatches = []byte{}
			}
		}
	}
	return &fetchResponse{FetchResponse: res.Resp, slices: res.Slices}, nil
}
