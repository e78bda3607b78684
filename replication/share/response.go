package share

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareFetchBuilder lays out a ShareFetch answer, partitions grouped by
// topic in the order they are first added.
type shareFetchBuilder struct {
	resp   *kmsg.ShareFetchResponse
	topics map[[16]byte]int
	parts  map[TopicPartition][2]int
}

func newShareFetchBuilder(resp *kmsg.ShareFetchResponse) *shareFetchBuilder {
	return &shareFetchBuilder{resp: resp, topics: map[[16]byte]int{}, parts: map[TopicPartition][2]int{}}
}

// partition returns tp's entry, adding it: no error, empty records (never
// null: clients differ on null), and no leader (-1/-1, Kafka's default;
// 0/0 would name node 0).
func (b *shareFetchBuilder) partition(tp TopicPartition) *kmsg.ShareFetchResponseTopicPartition {
	if at, ok := b.parts[tp]; ok {
		return &b.resp.Topics[at[0]].Partitions[at[1]]
	}
	ti, ok := b.topics[tp.TopicID]
	if !ok {
		ti = len(b.resp.Topics)
		b.topics[tp.TopicID] = ti
		rt := kmsg.NewShareFetchResponseTopic()
		rt.TopicID = tp.TopicID
		b.resp.Topics = append(b.resp.Topics, rt)
	}
	rp := kmsg.NewShareFetchResponseTopicPartition()
	rp.Partition = tp.Partition
	rp.Records = []byte{}
	rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
	pi := len(b.resp.Topics[ti].Partitions)
	b.resp.Topics[ti].Partitions = append(b.resp.Topics[ti].Partitions, rp)
	b.parts[tp] = [2]int{ti, pi}
	return &b.resp.Topics[ti].Partitions[pi]
}

// addShareFetchLeaders fills CurrentLeader and NodeEndpoints for the
// partitions whose fetch failed for leadership (Kafka's
// processShareFetchResponse).
func (m *Manager) addShareFetchLeaders(resp *kmsg.ShareFetchResponse, listener string) {
	leaders := map[int32]*Endpoint{}
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			if rp.ErrorCode == 0 || !needsLeader(kerrForCode(rp.ErrorCode)) {
				continue
			}
			h := m.logs.CurrentLeader(TopicPartition{rt.TopicID, rp.Partition}, listener)
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = h.LeaderID, h.LeaderEpoch
			if h.LeaderID >= 0 && h.Endpoint != nil {
				leaders[h.LeaderID] = h.Endpoint
			}
		}
	}
	for _, id := range sortedIDs(leaders) {
		ep := leaders[id]
		ne := kmsg.NewShareFetchResponseNodeEndpoint()
		ne.NodeID, ne.Host, ne.Port, ne.Rack = id, ep.Host, ep.Port, ep.Rack
		resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
	}
}

func sortedIDs(m map[int32]*Endpoint) []int32 {
	ids := make([]int32, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
