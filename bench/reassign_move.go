package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// moveWait bounds a move that outlasts its produce phase.
const moveWait = 10 * time.Minute

// createAssignedTopic creates topic with the replicas of each partition
// given (CreateTopics' manual assignment) and min.insync.replicas minISR,
// once brokers brokers are visible, and waits until every ISR is full.
func createAssignedTopic(ctx context.Context, cl *kgo.Client, brokers int, topic string, assignment [][]int32, minISR int) error {
	ctx, cancel := context.WithTimeout(ctx, topicReadyWait)
	defer cancel()
	err := poll(ctx, func() (bool, error) {
		md, err := metadata(ctx, cl, nil)
		return err == nil && len(md.Brokers) >= brokers, nil
	})
	if err != nil {
		return fmt.Errorf("bench: waiting for %d brokers: %w", brokers, err)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, replicas := range assignment {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	c := kmsg.NewCreateTopicsRequestTopicConfig()
	c.Name, c.Value = "min.insync.replicas", kmsg.StringPtr(strconv.Itoa(minISR))
	rt.Configs = append(rt.Configs, c)
	req.Topics = append(req.Topics, rt)
	err = poll(ctx, func() (bool, error) {
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
		}
		var ke *kerr.Error
		switch {
		case err == nil, errors.Is(err, kerr.TopicAlreadyExists):
			return true, nil
		case errors.As(err, &ke) && ke.Retriable, errors.Is(err, kerr.NotController), ctx.Err() != nil:
			return false, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("bench: create topic %s: %w", topic, err)
	}
	if err := waitFullISR(ctx, cl, topic, int32(len(assignment))); err != nil {
		return fmt.Errorf("bench: waiting for the ISR of %s to be full: %w", topic, err)
	}
	return nil
}

// produceDuringMove asks for topic's partitions to move from the replicas
// from (where they are now) to the replicas to
// (AlterPartitionReassignments), runs produce meanwhile, and waits for the
// move to complete; it returns produce's Result and how long the move took.
// With throttle > 0 the move is throttled as kafka-reassign-partitions.sh
// --throttle does (KIP-73): that rate on every broker, the partitions'
// current replicas as leader.replication.throttled.replicas and the added
// ones as follower.replication.throttled.replicas, removed afterwards.
func produceDuringMove(ctx context.Context, adm *kadm.Client, topic string, from, to [][]int32, throttle int64, produce func() (Result, error)) (Result, time.Duration, error) {
	if throttle > 0 {
		clear, err := throttleMove(ctx, adm, topic, from, to, throttle)
		if err != nil {
			return Result{}, 0, err
		}
		defer clear()
	}
	req := kadm.AlterPartitionAssignmentsReq{}
	for p, replicas := range to {
		req.Assign(topic, int32(p), replicas)
	}
	began := time.Now()
	resps, err := adm.AlterPartitionAssignments(ctx, req)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		return Result{}, 0, fmt.Errorf("bench: reassign %s: %w", topic, err)
	}
	// ListPartitionReassignments names the partitions it asks about (an
	// empty list asks about none).
	partitions := kadm.TopicsSet{}
	for p := range to {
		partitions.Add(topic, int32(p))
	}
	moved := make(chan error, 1)
	var took time.Duration
	go func() {
		wait, cancel := context.WithTimeout(ctx, moveWait)
		defer cancel()
		moved <- poll(wait, func() (bool, error) {
			l, err := adm.ListPartitionReassignments(wait, partitions)
			if err != nil || len(l[topic]) > 0 {
				return false, nil
			}
			took = time.Since(began)
			return true, nil
		})
	}()
	res, err := produce()
	if merr := <-moved; merr != nil && err == nil {
		err = fmt.Errorf("bench: waiting for the move of %s: %w", topic, merr)
	}
	return res, took, err
}

// throttleMove sets the throttles of the move from the replicas from to
// the replicas to and returns what removes them.
//
// The current replicas are the ones the workload put the partitions on,
// not what a Metadata request says: kadm.Metadata answers from the
// client's metadata cache (kgo's RequestCachedMetadata, up to
// MetadataMinAge = 5 s old), which after a quick earlier move still holds
// the replicas from before it. Throttling those named the wrong leader
// replicas and left out the broker now leading (the earlier move's
// destination): it got no rate, and the move back ran unthrottled.
func throttleMove(ctx context.Context, adm *kadm.Client, topic string, from, to [][]int32, rate int64) (func(), error) {
	var leaders, followers []string
	var brokers []int32
	for p, target := range to {
		current := from[p]
		for _, b := range current {
			leaders = append(leaders, fmt.Sprintf("%d:%d", p, b))
		}
		for _, b := range target {
			if !slices.Contains(current, b) {
				followers = append(followers, fmt.Sprintf("%d:%d", p, b))
			}
		}
		brokers = append(brokers, current...)
		brokers = append(brokers, target...)
	}
	slices.Sort(brokers)
	brokers = slices.Compact(brokers)
	alter := func(op kadm.IncrementalOp, value string) error {
		v := kadm.StringPtr(value)
		rates := []kadm.AlterConfig{
			{Op: op, Name: "leader.replication.throttled.rate", Value: v},
			{Op: op, Name: "follower.replication.throttled.rate", Value: v},
		}
		rs, err := adm.AlterBrokerConfigs(ctx, rates, brokers...)
		if err == nil {
			err = errors.Join(errs(rs)...)
		}
		if err != nil {
			return err
		}
		rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
			{Op: op, Name: "leader.replication.throttled.replicas", Value: kadm.StringPtr(strings.Join(leaders, ","))},
			{Op: op, Name: "follower.replication.throttled.replicas", Value: kadm.StringPtr(strings.Join(followers, ","))},
		}, topic)
		if err == nil {
			err = errors.Join(errs(rs)...)
		}
		return err
	}
	if err := alter(kadm.SetConfig, strconv.FormatInt(rate, 10)); err != nil {
		return nil, fmt.Errorf("bench: throttle the move of %s: %w", topic, err)
	}
	return func() { _ = alter(kadm.DeleteConfig, "") }, nil
}

// errs are the errors of an AlterConfigs answer.
func errs(rs kadm.AlterConfigsResponses) []error {
	var out []error
	for _, r := range rs {
		if r.Err != nil {
			out = append(out, fmt.Errorf("%s: %w", r.Name, r.Err))
		}
	}
	return out
}
