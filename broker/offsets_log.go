package broker

import (
	"context"
	"errors"
	"io"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/replication"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// coordinatorLog is a coordinator's view of its internal topic over the
// replica manager: coordinator appends with acks=all, and reads of whole
// batches up to the log end offset for loading. The group coordinator
// uses it over __consumer_offsets, the mirror state coordinator over
// __mirror_state.
type coordinatorLog struct {
	rm    *replication.ReplicaManager
	topic string
}

func (o coordinatorLog) tp(p int32) storage.TopicPartition {
	return storage.TopicPartition{Topic: o.topic, Partition: p}
}

func (o coordinatorLog) Append(ctx context.Context, partition int32, batch []byte) (int64, error) {
	info, err := o.rm.AppendCoordinator(ctx, o.tp(partition), batch)
	if err != nil {
		return 0, kafkaError(err)
	}
	return info.LastOffset, nil
}

func (o coordinatorLog) Read(_ context.Context, partition int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
	tp := o.tp(partition)
	fd, err := o.rm.ReadToLogEnd(tp, from, maxBytes)
	if err != nil && errors.Is(err, kerr.OffsetOutOfRange) && from < fd.LogStartOffset {
		// Loading starts at 0; retention may have moved the start since.
		from = fd.LogStartOffset
		fd, err = o.rm.ReadToLogEnd(tp, from, maxBytes)
	}
	if err != nil {
		return nil, 0, 0, kafkaError(err)
	}
	if fd.Records.Size == 0 {
		return nil, from, fd.LogEndOffset, nil
	}
	data := make([]byte, fd.Records.Size)
	if err := fd.Records.ReadInto(data); err != nil {
		return nil, 0, 0, kerr.KafkaStorageError
	}
	// Keep whole batches only; the next read starts after the last one.
	whole, next := wholeBatches(data, from)
	return whole, next, fd.LogEndOffset, nil
}

// partitionCoordinator is a coordinator serving the partitions of its
// internal topic that this broker leads.
type partitionCoordinator interface {
	OnElection(partition, epoch int32)
	OnResignation(partition int32)
}

// followLeadership tells c when this broker becomes the leader of a
// partition of topic and when it stops leading one, as Kafka's
// BrokerMetadataPublisher calls its coordinators' onElection and
// onResignation.
func (n *Node) followLeadership(topic string, c partitionCoordinator) {
	n.replicas.OnLeadershipChange(func(tp storage.TopicPartition, leader bool, epoch int32) {
		if tp.Topic != topic {
			return
		}
		if leader {
			c.OnElection(tp.Partition, epoch)
		} else {
			c.OnResignation(tp.Partition)
		}
	})
}

// kafkaError returns err's *kerr.Error, or UNKNOWN_SERVER_ERROR.
func kafkaError(err error) error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return kerr.CorruptMessage
	}
	return kerr.UnknownServerError
}

// wholeBatches cuts data after its last whole batch (a read may end
// inside one, which clients drop), and returns the offset after it (from
// when there is none).
func wholeBatches(data []byte, from int64) ([]byte, int64) {
	it := record.NewIter(data)
	next := from
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		next = b.NextOffset()
	}
	return data[:it.Pos()], next
}
