package fetcher

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// Defaults of the follower's fetch settings (Kafka's replica.fetch.*).
const (
	DefaultFetchWaitMaxMs        = 500      // replica.fetch.wait.max.ms
	DefaultFetchMinBytes         = 1        // replica.fetch.min.bytes
	DefaultFetchMaxBytes         = 1 << 20  // replica.fetch.max.bytes (per partition)
	DefaultFetchResponseMaxBytes = 10 << 20 // replica.fetch.response.max.bytes

	// Strait's own (coalesce.go).
	DefaultFetchCoalesceMinBytes = 128 << 10 // replica.fetch.coalesce.min.bytes
	DefaultFetchCoalesceWaitMs   = 3         // replica.fetch.coalesce.wait.ms
)

// Request versions a KafkaEndPoint builds; a client that negotiates
// versions (kgo) may lower them, and the answers are decoded by the
// version they carry. Fetch v12 is the oldest with LastFetchedEpoch and
// DivergingEpoch.
const (
	fetchVersion                = 17
	fetchVersionWithoutTopicIDs = 12
	offsetForLeaderEpochVersion = 4
	listOffsetsVersion          = 7
)

// KafkaEndPoint is a LeaderEndPoint over the Kafka protocol (Kafka's
// RemoteLeaderEndPoint): sessionless fetches (FINAL_EPOCH), each partition
// with its CurrentLeaderEpoch and LastFetchedEpoch, and OffsetForLeaderEpoch
// and ListOffsets as a replica. Send carries a request to the leader (a
// blocking wire/kclient connection in the replica manager); the builders
// and decoders are exported so a simulation can carry the requests
// itself.
type KafkaEndPoint struct {
	Leader BrokerEndPoint
	// ReplicaID is this replica's broker id, sent as the fetch's
	// ReplicaID/ReplicaState so the leader treats it as a follower.
	ReplicaID int32
	// BrokerEpoch returns this broker's epoch (ReplicaState.Epoch, KIP-903);
	// nil sends -1.
	BrokerEpoch func() int64
	// MaxWaitMs, MinBytes, MaxBytes and PartitionMaxBytes are
	// replica.fetch.wait.max.ms, replica.fetch.min.bytes,
	// replica.fetch.response.max.bytes and replica.fetch.max.bytes.
	MaxWaitMs, MinBytes, MaxBytes, PartitionMaxBytes int32
	// CoalesceMinBytes and CoalesceWaitMs are what a fetch asks for while
	// the leader streams (replica.fetch.coalesce.min.bytes and
	// replica.fetch.coalesce.wait.ms, coalesce.go); a zero wait fetches
	// with MinBytes and MaxWaitMs always.
	CoalesceMinBytes, CoalesceWaitMs int32
	// NoTruncationOnFetch disables KIP-595 truncation: fetches carry no
	// LastFetchedEpoch and replicas truncate with OffsetForLeaderEpoch.
	NoTruncationOnFetch bool
	// Send carries a request to the leader and returns its answer.
	Send func(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	// OnClose releases the connection (Close calls it).
	OnClose func() error

	// streaming: the last answer carried at least half of
	// CoalesceMinBytes. Only the fetcher's goroutine builds fetches and
	// reads answers.
	streaming bool
}

var _ LeaderEndPoint = (*KafkaEndPoint)(nil)

// Broker is the leader.
func (e *KafkaEndPoint) Broker() BrokerEndPoint { return e.Leader }

// IsTruncationOnFetchSupported reports whether KIP-595 truncation is on.
func (e *KafkaEndPoint) IsTruncationOnFetchSupported() bool { return !e.NoTruncationOnFetch }

// Close calls OnClose.
func (e *KafkaEndPoint) Close() error {
	if e.OnClose != nil {
		return e.OnClose()
	}
	return nil
}

func (e *KafkaEndPoint) brokerEpoch() int64 {
	if e.BrokerEpoch == nil {
		return -1
	}
	return e.BrokerEpoch()
}

// BuildFetch builds a sessionless replica fetch of parts, in order;
// consecutive partitions of a topic share a topic entry. It uses topic ids
// (v13+) unless a partition has none (Kafka's canUseTopicIds).
func (e *KafkaEndPoint) BuildFetch(parts []FetchPartition) *FetchRequest {
	if len(parts) == 0 {
		return nil
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version = fetchVersion
	for _, p := range parts {
		if p.TopicID == ([16]byte{}) {
			req.Version = fetchVersionWithoutTopicIDs
		}
	}
	req.ReplicaID = e.ReplicaID
	req.ReplicaState.ID, req.ReplicaState.Epoch = e.ReplicaID, e.brokerEpoch()
	req.MinBytes, req.MaxWaitMillis = e.fetchBounds()
	req.MaxBytes = e.MaxBytes
	req.SessionID, req.SessionEpoch = 0, -1
	out := &FetchRequest{Partitions: make(map[storage.TopicPartition]FetchPartition, len(parts)), Request: req}
	for _, p := range parts {
		out.Partitions[p.TP] = p
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != p.TP.Topic {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = p.TP.Topic, p.TopicID
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.FetchOffset = p.TP.Partition, p.CurrentLeaderEpoch, p.FetchOffset
		rp.LastFetchedEpoch, rp.LogStartOffset, rp.PartitionMaxBytes = p.LastFetchedEpoch, p.LogStartOffset, e.PartitionMaxBytes
		rt := &req.Topics[len(req.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return out
}

// DecodeFetch maps a fetch answer to partitions. A request-level error
// code is returned as its kerr error.
func DecodeFetch(req *FetchRequest, resp *kmsg.FetchResponse) (map[storage.TopicPartition]*FetchData, error) {
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("fetch: %w", kerr.ErrorForCode(resp.ErrorCode))
	}
	names := map[[16]byte]string{}
	for _, t := range req.Request.Topics {
		names[t.TopicID] = t.Topic
	}
	out := map[storage.TopicPartition]*FetchData{}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		name := t.Topic
		if resp.Version >= 13 {
			var ok bool
			if name, ok = names[t.TopicID]; !ok {
				continue
			}
		}
		for j := range t.Partitions {
			out[storage.TopicPartition{Topic: name, Partition: t.Partitions[j].Partition}] = &t.Partitions[j]
		}
	}
	return out, nil
}

// Fetch sends the request and decodes the answer.
func (e *KafkaEndPoint) Fetch(ctx context.Context, req *FetchRequest) (map[storage.TopicPartition]*FetchData, error) {
	kresp, err := e.Send(ctx, req.Request)
	if err != nil {
		e.streaming = false
		return nil, err
	}
	resp, ok := kresp.(*kmsg.FetchResponse)
	if !ok {
		return nil, fmt.Errorf("fetch: unexpected response %T", kresp)
	}
	data, err := DecodeFetch(req, resp)
	e.observeFetch(data)
	return data, err
}

// BuildEpochRequest builds an OffsetForLeaderEpoch request as a replica.
func (e *KafkaEndPoint) BuildEpochRequest(parts map[storage.TopicPartition]EpochRequest) *kmsg.OffsetForLeaderEpochRequest {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version, req.ReplicaID = offsetForLeaderEpochVersion, e.ReplicaID
	for _, tp := range sortedKeys(parts) {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != tp.Topic {
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = tp.Topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = tp.Partition, parts[tp].CurrentLeaderEpoch, parts[tp].LeaderEpoch
		rt := &req.Topics[len(req.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return req
}

// DecodeEpochResponse maps an OffsetForLeaderEpoch answer to partitions.
func DecodeEpochResponse(resp *kmsg.OffsetForLeaderEpochResponse) map[storage.TopicPartition]EpochEndOffset {
	out := map[storage.TopicPartition]EpochEndOffset{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[storage.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = EpochEndOffset{
				ErrorCode: p.ErrorCode, LeaderEpoch: p.LeaderEpoch, EndOffset: p.EndOffset}
		}
	}
	return out
}

// FetchEpochEndOffsets sends an OffsetForLeaderEpoch request.
func (e *KafkaEndPoint) FetchEpochEndOffsets(ctx context.Context, parts map[storage.TopicPartition]EpochRequest) (map[storage.TopicPartition]EpochEndOffset, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	kresp, err := e.Send(ctx, e.BuildEpochRequest(parts))
	if err != nil {
		return nil, err
	}
	resp, ok := kresp.(*kmsg.OffsetForLeaderEpochResponse)
	if !ok {
		return nil, fmt.Errorf("offset for leader epoch: unexpected response %T", kresp)
	}
	return DecodeEpochResponse(resp), nil
}

// BuildListOffsets builds a ListOffsets request as a replica for one
// partition and timestamp (storage.EarliestTimestamp or LatestTimestamp).
func (e *KafkaEndPoint) BuildListOffsets(tp storage.TopicPartition, currentLeaderEpoch int32, timestamp int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID = listOffsetsVersion, e.ReplicaID
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.Timestamp = tp.Partition, currentLeaderEpoch, timestamp
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// DecodeListOffsets finds tp in a ListOffsets answer; its error code comes
// back as the kerr error.
func DecodeListOffsets(tp storage.TopicPartition, resp *kmsg.ListOffsetsResponse) (OffsetAndEpoch, error) {
	for _, t := range resp.Topics {
		if t.Topic != tp.Topic {
			continue
		}
		for _, p := range t.Partitions {
			if p.Partition != tp.Partition {
				continue
			}
			if p.ErrorCode != 0 {
				return OffsetAndEpoch{}, fmt.Errorf("list offsets %s: %w", tp, kerr.ErrorForCode(p.ErrorCode))
			}
			return OffsetAndEpoch{Offset: p.Offset, LeaderEpoch: p.LeaderEpoch}, nil
		}
	}
	return OffsetAndEpoch{}, fmt.Errorf("list offsets %s: %w", tp, errors.New("partition missing from the answer"))
}

func (e *KafkaEndPoint) listOffset(ctx context.Context, tp storage.TopicPartition, currentLeaderEpoch int32, ts int64) (OffsetAndEpoch, error) {
	kresp, err := e.Send(ctx, e.BuildListOffsets(tp, currentLeaderEpoch, ts))
	if err != nil {
		return OffsetAndEpoch{}, err
	}
	resp, ok := kresp.(*kmsg.ListOffsetsResponse)
	if !ok {
		return OffsetAndEpoch{}, fmt.Errorf("list offsets: unexpected response %T", kresp)
	}
	return DecodeListOffsets(tp, resp)
}

// FetchEarliestOffset asks for the leader's log start offset.
func (e *KafkaEndPoint) FetchEarliestOffset(ctx context.Context, tp storage.TopicPartition, currentLeaderEpoch int32) (OffsetAndEpoch, error) {
	return e.listOffset(ctx, tp, currentLeaderEpoch, storage.EarliestTimestamp)
}

// FetchLatestOffset asks for the leader's log end offset.
func (e *KafkaEndPoint) FetchLatestOffset(ctx context.Context, tp storage.TopicPartition, currentLeaderEpoch int32) (OffsetAndEpoch, error) {
	return e.listOffset(ctx, tp, currentLeaderEpoch, storage.LatestTimestamp)
}
