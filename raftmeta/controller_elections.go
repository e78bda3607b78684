package raftmeta

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// uncleanLeaderElectionKey is the topic and broker config that allows a
// replica outside the ISR to lead.
const uncleanLeaderElectionKey = "unclean.leader.election.enable"

// maxElectionsPerImbalance bounds the preferred-leader elections of one
// rebalance pass (QuorumController's maxElectionsPerImbalance).
const maxElectionsPerImbalance = 1000

// uncleanLeaderElection is a topic's effective
// unclean.leader.election.enable: the topic's config, else the cluster-wide
// dynamic broker config, else the static one
// (ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic).
func (c *replicationControl) uncleanLeaderElection(img *Image, topic string) bool {
	for _, m := range []map[string]string{
		img.TopicConfig(topic),
		img.Configs[ConfigResource{Type: ConfigResourceBroker, Name: ""}],
	} {
		if v, ok := m[uncleanLeaderElectionKey]; ok {
			if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
				return b
			}
		}
	}
	return c.cfg.UncleanLeaderElectionEnable
}

// electionTypePreferred and electionTypeUnclean are ElectionType's values.
const (
	electionTypePreferred int8 = 0
	electionTypeUnclean   int8 = 1
)

// ElectLeaders: v0-2 (ReplicationControlManager.electLeaders).
//
// Behavior:
//   - ElectionType PREFERRED (v0 always) elects the first replica if it is
//     an active ISR member; UNCLEAN elects from the ISR, else any active
//     replica. Another type is INVALID_REQUEST for the whole request.
//   - Null Topics means every partition; those already led as asked
//     (ELECTION_NOT_NEEDED) are then left out of the answer.
//   - Per partition: UNKNOWN_TOPIC_OR_PARTITION; ELECTION_NOT_NEEDED when
//     the preferred replica leads (PREFERRED) or any leader exists
//     (UNCLEAN); PREFERRED_LEADER_NOT_AVAILABLE /
//     ELIGIBLE_LEADERS_NOT_AVAILABLE when no record would change anything.
//   - TimeoutMillis > 0 bounds the write (REQUEST_TIMED_OUT).
func (c *replicationControl) ElectLeaders(ctx context.Context, req *kmsg.ElectLeadersRequest) *kmsg.ElectLeadersResponse {
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	ctx, cancel := withTimeout(ctx, req.TimeoutMillis)
	defer cancel()
	typ := electionTypePreferred
	if req.Version >= 1 {
		typ = req.ElectionType
	}
	if typ != electionTypePreferred && typ != electionTypeUnclean {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	var results []kmsg.ElectLeadersResponseTopic
	err := c.write(ctx, func(img *Image) []Record {
		results = nil
		var records []Record
		add := func(st *kmsg.ElectLeadersResponseTopic, partition int32, all bool) {
			rec, e := c.electLeader(img, st.Topic, partition, typ)
			if rec != nil {
				records = append(records, rec)
			}
			if all && e == kerr.ElectionNotNeeded {
				return
			}
			sp := kmsg.NewElectLeadersResponseTopicPartition()
			sp.Partition = partition
			if e != nil {
				sp.ErrorCode = e.Code
				sp.ErrorMessage = kmsg.StringPtr(e.Description)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		if req.Topics == nil {
			for _, name := range img.TopicNames() {
				st := kmsg.NewElectLeadersResponseTopic()
				st.Topic = name
				for i := range img.Topics[name].Partitions {
					add(&st, int32(i), true)
				}
				results = append(results, st)
			}
		} else {
			for _, rt := range req.Topics {
				st := kmsg.NewElectLeadersResponseTopic()
				st.Topic = rt.Topic
				for _, p := range rt.Partitions {
					add(&st, p, false)
				}
				results = append(results, st)
			}
		}
		return records
	})
	if err != nil {
		code, msg := writeErrorCode(err)
		if req.Version >= 1 {
			resp.ErrorCode = code
		}
		if results == nil {
			// Not even validated (not the controller): answer for what
			// was asked.
			for _, rt := range req.Topics {
				st := kmsg.NewElectLeadersResponseTopic()
				st.Topic = rt.Topic
				for _, p := range rt.Partitions {
					sp := kmsg.NewElectLeadersResponseTopicPartition()
					sp.Partition = p
					st.Partitions = append(st.Partitions, sp)
				}
				results = append(results, st)
			}
		}
		// Every partition fails with the write's error.
		for i := range results {
			for j := range results[i].Partitions {
				if results[i].Partitions[j].ErrorCode == 0 {
					results[i].Partitions[j].ErrorCode = code
					results[i].Partitions[j].ErrorMessage = kmsg.StringPtr(msg)
				}
			}
		}
	}
	resp.Topics = results
	return resp
}

// electLeader is ReplicationControlManager.electLeader for one partition.
func (c *replicationControl) electLeader(img *Image, topic string, partition int32, typ int8) (*PartitionChangeRecord, *kerr.Error) {
	p, ok := img.Partition(topic, partition)
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	if (typ == electionTypePreferred && p.Leader == p.Replicas[0]) || (typ == electionTypeUnclean && p.Leader != NoLeader) {
		return nil, kerr.ElectionNotNeeded
	}
	pc := partitionChange{p: p, mayLead: img.BrokerActive, election: electPreferred}
	if typ == electionTypeUnclean {
		pc.election = electUnclean
	}
	rec := pc.build()
	if rec == nil {
		if typ == electionTypePreferred {
			return nil, kerr.PreferredLeaderNotAvailable
		}
		return nil, kerr.EligibleLeadersNotAvailable
	}
	return rec, nil
}

// ElectUncleanLeaders elects a leader, out of the ISR if need be, for every
// leaderless partition whose topic allows unclean elections
// (maybeElectUncleanLeaders), in one batch; it returns how many it
// changed. The quorum calls it periodically: a topic may allow unclean
// elections only after its partitions went offline.
func (c *replicationControl) ElectUncleanLeaders(ctx context.Context) (int, error) {
	n := 0
	err := c.write(ctx, func(img *Image) []Record {
		if c.allLedKnown && c.allLed == img.Offset {
			return nil // no record since the last pass found every partition led
		}
		topics := leaderlessTopics(img)
		c.allLed, c.allLedKnown = img.Offset, len(topics) == 0
		var records []Record
		for _, name := range topics {
			if !c.uncleanLeaderElection(img, name) {
				continue
			}
			for _, p := range img.Topics[name].Partitions {
				if p.Leader != NoLeader || len(records) >= maxElectionsPerImbalance {
					continue
				}
				if rec, _ := c.electLeader(img, name, p.Index, electionTypeUnclean); rec != nil {
					c.logger.Warn("unclean leader election", "topic", name, "partition", p.Index, "leader", rec.Leader)
					records = append(records, rec)
				}
			}
		}
		n = len(records)
		return records
	})
	if err != nil {
		return 0, fmt.Errorf("raftmeta: unclean leader elections: %w", err)
	}
	return n, nil
}

// leaderlessTopics names, sorted, the topics with a partition that has no
// leader. The controller's tick looks for them every SessionCheckInterval
// (100 ms) when the image changed: an unsorted pass over the partitions
// finds none on a healthy cluster without sorting the topic names or
// reading each topic's configs.
func leaderlessTopics(img *Image) []string {
	var names []string
	for name, t := range img.Topics {
		for _, p := range t.Partitions {
			if p.Leader == NoLeader {
				names = append(names, name)
				break
			}
		}
	}
	slices.Sort(names)
	return names
}

// RebalanceLeaders moves leadership back to preferred replicas for the
// brokers whose leader imbalance (the share of the partitions they are
// preferred for that another replica leads) exceeds
// leader.imbalance.per.broker.percentage, as the ZooKeeper controller's
// checkAndTriggerAutoLeaderRebalance did (KRaft's
// maybeBalancePartitionLeaders ignores the percentage). A preferred replica
// is elected only when it is an active ISR member. It returns how many
// partitions changed.
func (c *replicationControl) RebalanceLeaders(ctx context.Context) (int, error) {
	n := 0
	err := c.write(ctx, func(img *Image) []Record {
		preferred := map[int32]int{}
		imbalanced := map[int32]int{}
		for _, t := range img.Topics {
			for _, p := range t.Partitions {
				pref := p.Replicas[0]
				preferred[pref]++
				if p.Leader != pref {
					imbalanced[pref]++
				}
			}
		}
		var records []Record
		for _, name := range img.TopicNames() {
			for _, p := range img.Topics[name].Partitions {
				pref := p.Replicas[0]
				if p.Leader == pref || imbalanced[pref]*100 <= c.cfg.LeaderImbalancePerBrokerPercentage*preferred[pref] {
					continue
				}
				if len(records) >= maxElectionsPerImbalance {
					break
				}
				if rec, _ := c.electLeader(img, name, p.Index, electionTypePreferred); rec != nil && rec.Leader == pref {
					records = append(records, rec)
				}
			}
		}
		n = len(records)
		if n > 0 {
			c.logger.Info("moving leadership back to preferred replicas", "partitions", n)
		}
		return records
	})
	if err != nil {
		return 0, fmt.Errorf("raftmeta: rebalance leaders: %w", err)
	}
	return n, nil
}

// tick runs the active controller's periodic work: fence expired sessions,
// unclean elections, and the leader rebalance when it is due by the
// controller's clock.
func (c *Controller) tick(ctx context.Context) error {
	if _, err := c.cluster.FenceStaleBrokers(ctx); err != nil {
		return err
	}
	if _, err := c.replication.ElectUncleanLeaders(ctx); err != nil {
		return err
	}
	if !c.cfg.AutoLeaderRebalanceEnable {
		return nil
	}
	due := false
	if err := c.write(ctx, func(img *Image) []Record {
		s := c.cluster.sessionsFor(img)
		if now := c.cfg.Clock.Now(); now.Sub(s.lastRebalance) >= c.cfg.LeaderImbalanceCheckInterval {
			s.lastRebalance = now
			due = true
		}
		return nil
	}); err != nil || !due {
		return err
	}
	_, err := c.replication.RebalanceLeaders(ctx)
	return err
}
