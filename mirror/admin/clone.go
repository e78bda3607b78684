package admin

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// cloneConfig is raftmeta.MirrorCloneConfig (this package does not import
// raftmeta): the CreateTopics config that makes the new topic a clone.
const cloneConfig = "mirror.clone.of"

// ClonePoint is where a clone's partition starts: the destination high
// watermark of the mirror topic's partition when the clone was asked for.
type ClonePoint struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
}

// CloneResult is what CloneTopic made.
type CloneResult struct {
	Mirror  string       `json:"mirror"`
	Topic   string       `json:"topic"`
	Clone   string       `json:"clone"`
	TopicID string       `json:"topic_id"` // the clone's
	Points  []ClonePoint `json:"partitions"`
}

// CloneTopic creates clone, a writable copy of the mirror topic topic at
// its current point (a DR drill; issue 27): it reads the destination high
// watermark of each partition (ListOffsets, latest) and sends CreateTopics
// with mirror.clone.of "MIRROR:TOPIC:ID:P=HW,..."; the controller checks
// the topic belongs to the mirror and gives the clone the topic's
// partitions, replicas and configs; each replica copies its local data up
// to the point (sharing closed segments) while the mirror goes on.
func (c *Client) CloneTopic(ctx context.Context, mirror, topic, clone string) (CloneResult, error) {
	res := CloneResult{Mirror: mirror, Topic: topic, Clone: clone}
	adm := kadm.NewClient(c.cl)
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return res, fmt.Errorf("clone %s: metadata: %w", topic, err)
	}
	td, ok := tds[topic]
	if !ok || td.Err != nil {
		if ok {
			err = td.Err
		} else {
			err = fmt.Errorf("no metadata answer")
		}
		return res, fmt.Errorf("clone %s: metadata: %w", topic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return res, fmt.Errorf("clone %s: end offsets: %w", topic, err)
	}
	for p := range td.Partitions {
		o, ok := ends.Lookup(topic, p)
		if !ok || o.Err != nil {
			if ok {
				err = o.Err
			} else {
				err = fmt.Errorf("no answer")
			}
			return res, fmt.Errorf("clone %s: end offset of partition %d: %w", topic, p, err)
		}
		res.Points = append(res.Points, ClonePoint{Partition: p, Offset: o.Offset})
	}
	sort.Slice(res.Points, func(i, j int) bool { return res.Points[i].Partition < res.Points[j].Partition })
	parts := make([]string, len(res.Points))
	for i, pt := range res.Points {
		parts[i] = fmt.Sprintf("%d=%d", pt.Partition, pt.Offset)
	}
	spec := mirror + ":" + topic + ":" + kafkaUUID(td.ID) + ":" + strings.Join(parts, ",")

	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = timeoutMs(ctx)
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = clone, -1, -1
	cfg := kmsg.NewCreateTopicsRequestTopicConfig()
	cfg.Name, cfg.Value = cloneConfig, &spec
	rt.Configs = append(rt.Configs, cfg)
	req.Topics = append(req.Topics, rt)
	resp, err := send(ctx, c.cl, req, isWrite, func(r *kmsg.CreateTopicsResponse) int16 {
		if len(r.Topics) == 0 {
			return 0
		}
		return r.Topics[0].ErrorCode
	})
	if err != nil {
		return res, fmt.Errorf("clone %s as %s: %w", topic, clone, err)
	}
	if len(resp.Topics) != 1 {
		return res, fmt.Errorf("clone %s as %s: %d answers to CreateTopics", topic, clone, len(resp.Topics))
	}
	t := resp.Topics[0]
	if err := codeError(t.ErrorCode, t.ErrorMessage); err != nil {
		return res, fmt.Errorf("clone %s as %s: %w", topic, clone, err)
	}
	res.TopicID = kafkaUUID(t.TopicID)
	return res, nil
}

// kafkaUUID is Kafka's text form of a Uuid (URL-safe base64 without
// padding, Uuid.toString), which kadm.TopicID.String does not use.
func kafkaUUID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }
