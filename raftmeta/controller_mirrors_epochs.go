package raftmeta

import (
	"context"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// BumpLeaderEpochs: v0 (KIP-1279: the leader of a mirror partition keeps
// its leader epoch at or above the source's, DLE ≥ SLE, and bumps it when
// it stops mirroring). Fenced like AlterPartition.
//
// Behavior:
//   - The requester is BrokerId (tag 0), or with -1 the node the
//     controller channel names (the local node for an in-process call). An
//     unregistered broker, or a BrokerEpoch (tag 1) other than -1 and not
//     the broker's, is STALE_BROKER_EPOCH for the whole request, with no
//     topics.
//   - An unknown topic id is UNKNOWN_TOPIC_ID for each of its partitions,
//     an unknown partition UNKNOWN_TOPIC_OR_PARTITION; a topic whose
//     mirror.name is unset is TOPIC_NOT_IN_CLUSTER_MIRROR (stopped mirror
//     topics may bump: STOPPING does).
//   - The requester must lead the partition (NOT_LEADER_OR_FOLLOWER). Its
//     LeaderEpoch (tag 0; -1 skips the check) must be the partition's: a
//     lower one is FENCED_LEADER_EPOCH, a higher one NOT_CONTROLLER (this
//     controller is behind), as AlterPartition answers.
//   - MinLeaderEpoch above the leader epoch appends a PartitionChangeRecord
//     with it: the epoch becomes MinLeaderEpoch, the leader stays. At or
//     below the epoch nothing is appended and the answer is success (the
//     leader already has it: a retried request is harmless). -1 (the
//     default) asks for one bump, current epoch + 1. math.MaxInt32 is
//     INVALID_REQUEST: the next election could not raise it.
//   - A partition listed twice is judged against the first one's result.
func (c *mirrorControl) BumpLeaderEpochs(ctx context.Context, req *mirrormsg.BumpLeaderEpochsRequest) *mirrormsg.BumpLeaderEpochsResponse {
	resp := req.ResponseKind().(*mirrormsg.BumpLeaderEpochsResponse)
	broker := req.BrokerID
	if broker == -1 {
		broker = c.requestingNode(ctx)
	}
	var stale bool
	var topics []mirrormsg.BumpLeaderEpochsResponseTopicPartitions
	err := c.write(ctx, func(img *Image) []Record {
		stale, topics = false, nil
		if b, ok := img.Brokers[broker]; !ok || (req.BrokerEpoch != -1 && b.Epoch != req.BrokerEpoch) {
			stale = true
			return nil
		}
		var records []Record
		// Partitions bumped by this request, as they will be.
		bumped := map[Uuid]map[int32]*Partition{}
		for _, rt := range req.Topics {
			st := mirrormsg.NewBumpLeaderEpochsResponseTopicPartitions()
			t := img.TopicsByID[Uuid(rt.TopicID)]
			var topicErr *kerr.Error
			switch {
			case t == nil:
				topicErr = kerr.UnknownTopicID
			case img.TopicConfig(t.Name)[MirrorNameConfig] == "":
				st.TopicName = t.Name
				topicErr = mirrormsg.TopicNotInClusterMirror
			default:
				st.TopicName = t.Name
			}
			for _, rp := range rt.Partitions {
				sp := mirrormsg.NewBumpLeaderEpochsResponsePartitionDetail()
				sp.PartitionIndex = rp.PartitionIndex
				if topicErr != nil {
					sp.ErrorCode = topicErr.Code
					st.Partitions = append(st.Partitions, sp)
					continue
				}
				if rp.PartitionIndex < 0 || int(rp.PartitionIndex) >= len(t.Partitions) {
					sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
					st.Partitions = append(st.Partitions, sp)
					continue
				}
				p := t.Partitions[rp.PartitionIndex]
				if b := bumped[t.ID][rp.PartitionIndex]; b != nil {
					p = b
				}
				rec, e := bumpLeaderEpoch(p, broker, rp.LeaderEpoch, rp.MinLeaderEpoch)
				switch {
				case e != nil:
					sp.ErrorCode = e.Code
				case rec != nil:
					records = append(records, rec)
					if bumped[t.ID] == nil {
						bumped[t.ID] = map[int32]*Partition{}
					}
					bumped[t.ID][p.Index] = p.apply(rec)
				}
				st.Partitions = append(st.Partitions, sp)
			}
			topics = append(topics, st)
		}
		return records
	})
	if resp.ErrorCode = brokerWriteCode(err, stale); resp.ErrorCode == 0 {
		resp.Topics = topics
	}
	return resp
}

// bumpLeaderEpoch validates one partition's bump and builds its record
// (nil: the epoch is already high enough).
func bumpLeaderEpoch(p *Partition, broker, leaderEpoch, minEpoch int32) (*PartitionChangeRecord, *kerr.Error) {
	switch {
	case p.Leader != broker:
		return nil, kerr.NotLeaderForPartition
	case leaderEpoch != -1 && leaderEpoch > p.LeaderEpoch:
		return nil, kerr.NotController
	case leaderEpoch != -1 && leaderEpoch < p.LeaderEpoch:
		return nil, kerr.FencedLeaderEpoch
	case minEpoch == math.MaxInt32 || minEpoch < -1:
		return nil, kerr.InvalidRequest
	}
	if minEpoch == -1 {
		minEpoch = p.LeaderEpoch + 1
	}
	if minEpoch <= p.LeaderEpoch {
		return nil, nil
	}
	return &PartitionChangeRecord{PartitionID: p.Index, TopicID: p.TopicID, Leader: NoLeaderChange, MinLeaderEpoch: minEpoch}, nil
}
