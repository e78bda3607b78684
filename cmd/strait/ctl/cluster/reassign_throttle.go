package cluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The replication throttles of a move (KIP-73), set and cleared as
// kafka-reassign-partitions.sh --throttle does: the rate on every broker a
// moving partition is or will be on, leader throttles on the replicas the
// partitions have (any of them may lead and send), follower throttles on
// the replicas being added (they fetch). A throttle slows only replicas
// outside the ISR, so producers with acks=all do not wait on it.
const (
	leaderRateKey       = "leader.replication.throttled.rate"
	followerRateKey     = "follower.replication.throttled.rate"
	leaderReplicasKey   = "leader.replication.throttled.replicas"
	followerReplicasKey = "follower.replication.throttled.replicas"
)

// moveThrottles are the configs one set of moves needs.
type moveThrottles struct {
	// Brokers are every broker a moving partition is or will be on.
	Brokers []int32
	// Leader and Follower are each topic's
	// leader/follower.replication.throttled.replicas values
	// ("partition:broker,...").
	Leader, Follower map[string]string
}

// throttlesFor computes the throttles of moves from the partitions'
// current assignment (ReassignPartitionsCommand.calculateLeaderThrottles
// and calculateFollowerThrottles).
func throttlesFor(current, moves []assignment) moveThrottles {
	th := moveThrottles{Leader: map[string]string{}, Follower: map[string]string{}}
	leader, follower := map[string][]string{}, map[string][]string{}
	for _, m := range moves {
		var before []int32
		if i := slices.IndexFunc(current, func(a assignment) bool { return a.Topic == m.Topic && a.Partition == m.Partition }); i >= 0 {
			before = current[i].Replicas
		}
		for _, r := range before {
			leader[m.Topic] = append(leader[m.Topic], fmt.Sprintf("%d:%d", m.Partition, r))
		}
		for _, r := range m.Replicas {
			if !slices.Contains(before, r) {
				follower[m.Topic] = append(follower[m.Topic], fmt.Sprintf("%d:%d", m.Partition, r))
			}
		}
		for _, r := range slices.Concat(before, m.Replicas) {
			if !slices.Contains(th.Brokers, r) {
				th.Brokers = append(th.Brokers, r)
			}
		}
	}
	slices.Sort(th.Brokers)
	for t, v := range leader {
		th.Leader[t] = strings.Join(v, ",")
	}
	for t, v := range follower {
		th.Follower[t] = strings.Join(v, ",")
	}
	return th
}

// setThrottles sets the throttles at rate bytes/s; on a refusal it clears
// what it set and names the refused key (a cluster without replication
// throttles refuses the rates as configs it cannot change dynamically).
// Its errors keep the broker's message: they do not wrap the *kerr.Error,
// which kit would print alone.
func setThrottles(ctx context.Context, cl *kgo.Client, th moveThrottles, rate int64) error {
	adm := kadm.NewClient(cl)
	v := strconv.FormatInt(rate, 10)
	brokerCfgs := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: leaderRateKey, Value: &v}, {Op: kadm.SetConfig, Name: followerRateKey, Value: &v}}
	if err := alterOK(adm.AlterBrokerConfigs(ctx, brokerCfgs, th.Brokers...)); err != nil {
		_ = clearThrottles(ctx, cl, th)
		return fmt.Errorf("setting the throttle rate on brokers %v: %v", th.Brokers, err)
	}
	for _, topic := range throttledTopics(th) {
		var cfgs []kadm.AlterConfig
		for key, m := range map[string]map[string]string{leaderReplicasKey: th.Leader, followerReplicasKey: th.Follower} {
			if val, ok := m[topic]; ok {
				cfgs = append(cfgs, kadm.AlterConfig{Op: kadm.SetConfig, Name: key, Value: kadm.StringPtr(val)})
			}
		}
		if err := alterOK(adm.AlterTopicConfigs(ctx, cfgs, topic)); err != nil {
			_ = clearThrottles(ctx, cl, th)
			return fmt.Errorf("setting the throttled replicas of %s: %v", topic, err)
		}
	}
	return nil
}

// clearThrottles removes the throttle configs of th's brokers and topics
// (what --verify does once every move is complete).
func clearThrottles(ctx context.Context, cl *kgo.Client, th moveThrottles) error {
	adm := kadm.NewClient(cl)
	del := func(keys ...string) []kadm.AlterConfig {
		var out []kadm.AlterConfig
		for _, k := range keys {
			out = append(out, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
		}
		return out
	}
	if err := alterOK(adm.AlterBrokerConfigs(ctx, del(leaderRateKey, followerRateKey), th.Brokers...)); err != nil {
		return fmt.Errorf("clearing the throttle rate on brokers %v: %v", th.Brokers, err)
	}
	if topics := throttledTopics(th); len(topics) > 0 {
		if err := alterOK(adm.AlterTopicConfigs(ctx, del(leaderReplicasKey, followerReplicasKey), topics...)); err != nil {
			return fmt.Errorf("clearing the throttled replicas of %v: %v", topics, err)
		}
	}
	return nil
}

func throttledTopics(th moveThrottles) []string {
	var topics []string
	for t := range th.Leader {
		topics = append(topics, t)
	}
	for t := range th.Follower {
		if !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
	}
	slices.Sort(topics)
	return topics
}

// alterOK is the first error of an AlterConfigs answer.
func alterOK(resps kadm.AlterConfigsResponses, err error) error {
	if err != nil {
		return err
	}
	for _, r := range resps {
		if r.Err != nil {
			if r.ErrMessage != "" {
				return fmt.Errorf("%w (%s)", r.Err, r.ErrMessage)
			}
			return r.Err
		}
	}
	return nil
}
