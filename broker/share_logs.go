package broker

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/replication"
	"github.com/strait-io/strait/replication/share"
	"github.com/strait-io/strait/storage"
)

// shareLogs is replication/share's view of this node's replicas
// (share.Logs): the log of a partition it leads, named by topic id as
// share requests name it, who leads a partition it does not, and word of
// new data, over the replica manager and the metadata image.
type shareLogs struct {
	rm    *replication.ReplicaManager
	image func() *raftmeta.Image
}

var _ share.Logs = shareLogs{}

// topicPartition names tp by topic name; an id the image does not know is
// UNKNOWN_TOPIC_ID, as Kafka's ShareFetch answers it.
func shareTopicPartition(img *raftmeta.Image, tp share.TopicPartition) (storage.TopicPartition, bool) {
	t, ok := img.TopicsByID[raftmeta.Uuid(tp.TopicID)]
	if !ok {
		return storage.TopicPartition{}, false
	}
	return storage.TopicPartition{Topic: t.Name, Partition: tp.Partition}, true
}

// Leader returns the local leader replica of tp (Kafka's
// ReplicaManager.getPartitionOrException for a share fetch): a partition
// hosted elsewhere or followed here is NOT_LEADER_OR_FOLLOWER, one the
// metadata does not know UNKNOWN_TOPIC_OR_PARTITION.
func (s shareLogs) Leader(tp share.TopicPartition) (share.PartitionLog, error) {
	img := s.image()
	stp, ok := shareTopicPartition(img, tp)
	if !ok {
		return nil, kerr.UnknownTopicID
	}
	p, ok := s.rm.Partition(stp)
	if !ok {
		if _, known := img.Partition(stp.Topic, stp.Partition); known {
			return nil, kerr.NotLeaderForPartition
		}
		return nil, kerr.UnknownTopicOrPartition
	}
	if !p.IsLeader() {
		return nil, kerr.NotLeaderForPartition
	}
	return shareLog{p: p, epoch: p.LeaderEpoch()}, nil
}

// CurrentLeader is the partition's leader in the image, with its endpoint
// on listener (KIP-951).
func (s shareLogs) CurrentLeader(tp share.TopicPartition, listener string) share.LeaderHint {
	h := share.LeaderHint{LeaderID: -1, LeaderEpoch: -1}
	img := s.image()
	stp, ok := shareTopicPartition(img, tp)
	if !ok {
		return h
	}
	pp, ok := img.Partition(stp.Topic, stp.Partition)
	if !ok || pp.Leader < 0 {
		return h
	}
	h.LeaderID, h.LeaderEpoch = pp.Leader, pp.LeaderEpoch
	if b, ok := img.Brokers[pp.Leader]; ok {
		for _, ep := range b.Endpoints {
			if ep.Listener == listener || listener == "" {
				h.Endpoint = &share.Endpoint{Host: ep.Host, Port: ep.Port}
				if b.Rack != "" {
					rack := b.Rack
					h.Endpoint.Rack = &rack
				}
				break
			}
		}
	}
	return h
}

// Watch wakes on what wakes a consumer's long poll of tps.
func (s shareLogs) Watch(tps []share.TopicPartition) (<-chan struct{}, func()) {
	img := s.image()
	stps := make([]storage.TopicPartition, 0, len(tps))
	for _, tp := range tps {
		if stp, ok := shareTopicPartition(img, tp); ok {
			stps = append(stps, stp)
		}
	}
	return s.rm.WatchConsumerReads(stps)
}

// shareLog is a partition's local log as its leader in one leader epoch
// serves it to share consumers.
type shareLog struct {
	p     *replication.Partition
	epoch int32
}

func (l shareLog) LeaderEpoch() int32    { return l.epoch }
func (l shareLog) LogStartOffset() int64 { return l.p.Log().LogStartOffset() }
func (l shareLog) HighWatermark() int64  { return l.p.HighWatermark() }

// Read reads whole batches from offset, up to the high watermark (the last
// stable offset for readCommitted), as a consumer's fetch reads (Kafka's
// share fetch goes through ReplicaManager.readFromLog). A replica no longer
// leading in the epoch it was found in is NOT_LEADER_OR_FOLLOWER: its log
// is a follower's now.
func (l shareLog) Read(offset int64, maxBytes int32, readCommitted bool) (share.LogRead, error) {
	if !l.p.IsLeader() || l.p.LeaderEpoch() != l.epoch {
		return share.LogRead{}, kerr.NotLeaderForPartition
	}
	isolation := storage.FetchHighWatermark
	if readCommitted {
		isolation = storage.FetchTxnCommitted
	}
	fd, err := l.p.Log().Read(offset, max(maxBytes, 0), isolation, true)
	if err != nil {
		return share.LogRead{}, shareReadError(err)
	}
	if fd.Records.Size == 0 || fd.FirstEntryIncomplete {
		return share.LogRead{}, nil
	}
	data := make([]byte, fd.Records.Size)
	if err := fd.Records.ReadInto(data); err != nil {
		// The segment was truncated under the read (a new leader's
		// truncation): this replica leads no more.
		return share.LogRead{}, kerr.NotLeaderForPartition
	}
	whole, _ := wholeBatches(data, offset)
	if len(whole) == 0 {
		// The first batch, which a read always returns whole, does not
		// parse.
		return share.LogRead{}, kerr.CorruptMessage
	}
	rd := share.LogRead{Records: whole}
	for _, a := range fd.AbortedTxns {
		rd.Aborted = append(rd.Aborted, share.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
	}
	return rd, nil
}

// shareReadError is the kerr error of a failed read: outside the log is
// OFFSET_OUT_OF_RANGE (the share partition moves to the log start), a log
// closed under the read NOT_LEADER_OR_FOLLOWER.
func shareReadError(err error) error {
	var oor *storage.OffsetOutOfRangeError
	switch {
	case errors.As(err, &oor):
		return kerr.OffsetOutOfRange
	case errors.Is(err, storage.ErrLogClosed):
		return kerr.NotLeaderForPartition
	}
	return kafkaError(err)
}

// OffsetForTimestamp is the first offset with a timestamp at or after ts,
// as ListOffsets finds it (share.auto.offset.reset=by_duration).
func (l shareLog) OffsetForTimestamp(ts int64) (int64, bool, error) {
	to, ok, err := l.p.Log().FetchOffsetByTimestamp(ts)
	if err != nil {
		return 0, false, shareReadError(err)
	}
	return to.Offset, ok, nil
}
