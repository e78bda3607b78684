package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicReadyWait bounds the wait for every broker to be visible, the topic
// to be created and every partition's ISR to be full.
const topicReadyWait = 60 * time.Second

// createReplicatedTopic waits until nodes brokers are in the metadata
// (Kafka lists only unfenced brokers), creates topic with replication
// factor nodes and min.insync.replicas minISR, and waits until every
// partition has a leader and all nodes in its ISR: the throughput phase
// starts from a steady cluster, not one still electing.
func createReplicatedTopic(ctx context.Context, bootstrap []string, topic string, partitions int32, nodes, minISR int) error {
	ctx, cancel := context.WithTimeout(ctx, topicReadyWait)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...))
	if err != nil {
		return fmt.Errorf("bench: admin client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	// Raw Metadata requests: kadm's answers come from kgo's metadata
	// cache, which can keep a broker list from before the last broker
	// was unfenced for longer than this whole wait.
	err = poll(ctx, func() (bool, error) {
		md, err := metadata(ctx, cl, nil)
		return err == nil && len(md.Brokers) >= nodes, nil
	})
	if err != nil {
		return fmt.Errorf("bench: waiting for %d brokers: %w", nodes, err)
	}
	configs := map[string]*string{"min.insync.replicas": kadm.StringPtr(strconv.Itoa(minISR))}
	err = poll(ctx, func() (bool, error) {
		resp, err := adm.CreateTopic(ctx, partitions, int16(nodes), configs, topic)
		if err == nil {
			err = resp.Err
		}
		var ke *kerr.Error
		switch {
		case err == nil, errors.Is(err, kerr.TopicAlreadyExists):
			return true, nil
		case errors.As(err, &ke) && ke.Retriable, errors.Is(err, kerr.NotController):
			return false, nil
		case ctx.Err() != nil:
			return false, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("bench: create topic %s: %w", topic, err)
	}
	if err := waitFullISR(ctx, cl, topic, partitions); err != nil {
		return fmt.Errorf("bench: waiting for the ISR of %s to hold all %d replicas: %w", topic, nodes, err)
	}
	return nil
}

// waitFullISR waits until each of the partitions of topic has a leader and
// all its replicas in its ISR.
func waitFullISR(ctx context.Context, cl *kgo.Client, topic string, partitions int32) error {
	return poll(ctx, func() (bool, error) {
		md, err := metadata(ctx, cl, []string{topic})
		if err != nil || len(md.Topics) != 1 {
			return false, nil
		}
		t := md.Topics[0]
		if t.ErrorCode != 0 || len(t.Partitions) != int(partitions) {
			return false, nil
		}
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 || len(p.ISR) != len(p.Replicas) {
				return false, nil
			}
		}
		return true, nil
	})
}

// metadata asks any broker for the brokers and topics (none for nil),
// bypassing kgo's cache.
func metadata(ctx context.Context, cl *kgo.Client, topics []string) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	return req.RequestWith(ctx, cl)
}

// poll calls check every 50 ms until it reports done or an error, or ctx
// ends.
func poll(ctx context.Context, check func() (bool, error)) error {
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
