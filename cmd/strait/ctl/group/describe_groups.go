package group

import (
	"context"
	"errors"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// described is a group as either describe API tells it: KIP-848
// consumer groups through ConsumerGroupDescribe, classic groups through
// DescribeGroups.
type described struct {
	Group        string
	Coordinator  int32
	State        string
	Type         string // "classic" or "consumer" (KIP-848)
	ProtocolType string // "consumer", "connect", ... ("consumer" for a KIP-848 group)
	Protocol     string // the assignor: the classic group's chosen protocol, the KIP-848 group's assignor
	Members      []member
	Err          error
}

type member struct {
	MemberID   string
	InstanceID *string
	ClientID   string
	ClientHost string
	Assigned   kadm.TopicsSet
}

// inactive is whether a group's commits may be changed by an admin: only
// an Empty or Dead group, as kafka-consumer-groups --reset-offsets
// requires (its members would overwrite the new commits otherwise).
func (d *described) inactive() bool { return d.State == "Empty" || d.State == "Dead" }

// describeGroups describes groups the way Kafka's admin client does
// (DescribeConsumerGroupsHandler): ConsumerGroupDescribe first; a group it
// does not know as a consumer group (GROUP_ID_NOT_FOUND), or every group
// when the cluster lacks the API (before Kafka 3.7/4.0), is described
// with the classic DescribeGroups. A group neither knows is
// GROUP_ID_NOT_FOUND: a classic DescribeGroups before v6 answers a
// missing group as Dead with no error.
func describeGroups(ctx context.Context, cl *kgo.Client, groups []string) map[string]*described {
	adm := kadm.NewClient(cl)
	out := make(map[string]*described, len(groups))
	var classic []string
	// Any failure of ConsumerGroupDescribe (an old cluster, an error of
	// the request) leaves the group to DescribeGroups, whose error, if it
	// fails too, is the one reported.
	consumer := describeConsumerGroups(ctx, cl, groups)
	for _, g := range groups {
		d, ok := consumer[g]
		if !ok || errors.Is(d.Err, kerr.GroupIDNotFound) {
			classic = append(classic, g)
			continue
		}
		out[g] = d
	}
	if len(classic) == 0 {
		return out
	}
	dg, err := adm.DescribeGroups(ctx, classic...)
	for _, g := range classic {
		cg, ok := dg[g]
		if !ok {
			if err == nil {
				err = kerr.GroupIDNotFound
			}
			out[g] = &described{Group: g, Err: err}
			continue
		}
		d := &described{Group: g, Coordinator: cg.Coordinator.NodeID, State: cg.State, Type: "classic",
			ProtocolType: cg.ProtocolType, Protocol: cg.Protocol, Err: cg.Err}
		if d.Err == nil && d.State == "Dead" && len(cg.Members) == 0 {
			d.Err = kerr.GroupIDNotFound
		}
		for _, m := range cg.Members {
			dm := member{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID,
				ClientHost: m.ClientHost, Assigned: make(kadm.TopicsSet)}
			if a, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range a.Topics {
					dm.Assigned.Add(t.Topic, t.Partitions...)
				}
			}
			d.Members = append(d.Members, dm)
		}
		out[g] = d
	}
	return out
}

// partitionLag is one partition of a group: its commit, its log's start
// and end, and the lag between.
type partitionLag struct {
	Topic     string
	Partition int32
	Commit    int64 // -1: nothing committed
	Start     int64 // -1: unknown
	End       int64 // the high watermark; -1: unknown
	Lag       int64 // -1: unknown
	Member    *member
	Err       error
}

// groupLag lists, for each described group, every partition it is
// assigned or has committed, with its lag: the log end (the high
// watermark, ListOffsets latest with read_uncommitted) minus the commit.
// A partition with no commit lags by its whole log (end - start), as rpk
// (kadm) counts it: the member will read it all. A commit past the end
// (the log truncated) counts as lag 0.
func groupLag(ctx context.Context, adm *kadm.Client, ds []*described) (map[string][]partitionLag, error) {
	var names []string
	for _, d := range ds {
		names = append(names, d.Group)
	}
	fetched := adm.FetchManyOffsets(ctx, names...)
	all := make(kadm.TopicsSet)
	for _, d := range ds {
		for _, m := range d.Members {
			all.Merge(m.Assigned)
		}
		if f, ok := fetched[d.Group]; ok && f.Err == nil {
			f.Fetched.Each(func(o kadm.OffsetResponse) { all.Add(o.Topic, o.Partition) })
		}
	}
	var starts, ends kadm.ListedOffsets
	if topics := all.Topics(); len(topics) > 0 {
		var err error
		if starts, err = adm.ListStartOffsets(ctx, topics...); err != nil && !isShardErr(err) {
			return nil, err
		}
		if ends, err = adm.ListEndOffsets(ctx, topics...); err != nil && !isShardErr(err) {
			return nil, err
		}
	}
	out := make(map[string][]partitionLag, len(ds))
	for _, d := range ds {
		f := fetched[d.Group]
		if f.Err != nil {
			d.Err = f.Err
			continue
		}
		rows := map[[2]any]*partitionLag{}
		row := func(t string, p int32) *partitionLag {
			k := [2]any{t, p}
			if r, ok := rows[k]; ok {
				return r
			}
			r := &partitionLag{Topic: t, Partition: p, Commit: -1}
			rows[k] = r
			return r
		}
		for i := range d.Members {
			for t, ps := range d.Members[i].Assigned {
				for p := range ps {
					row(t, p).Member = &d.Members[i]
				}
			}
		}
		f.Fetched.Each(func(o kadm.OffsetResponse) {
			r := row(o.Topic, o.Partition)
			r.Commit, r.Err = o.At, o.Err
		})
		var list []partitionLag
		for _, r := range rows {
			r.Start, r.End, r.Lag = -1, -1, -1
			if s, err := listed(starts, r.Topic, r.Partition); err == nil {
				r.Start = s
			}
			e, err := listed(ends, r.Topic, r.Partition)
			if r.Err == nil {
				r.Err = err
			}
			if err == nil {
				r.End = e
			}
			if r.Err == nil {
				r.Lag = lag(r.Commit, r.Start, r.End)
			}
			list = append(list, *r)
		}
		sort.Slice(list, func(i, j int) bool {
			if list[i].Topic != list[j].Topic {
				return list[i].Topic < list[j].Topic
			}
			return list[i].Partition < list[j].Partition
		})
		out[d.Group] = list
	}
	return out, nil
}

func lag(commit, start, end int64) int64 {
	from := commit
	if from < 0 {
		from = max(start, 0)
	}
	return max(end-from, 0)
}

// listed is the listed offset of t/p, or the error why there is none: a
// topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION.
func listed(l kadm.ListedOffsets, t string, p int32) (int64, error) {
	ps, ok := l[t]
	if !ok {
		return -1, kerr.UnknownTopicOrPartition
	}
	if o, ok := ps[p]; ok {
		return o.Offset, o.Err
	}
	if o, ok := ps[-1]; ok && o.Err != nil {
		return -1, o.Err
	}
	return -1, kerr.UnknownTopicOrPartition
}

func isShardErr(err error) bool {
	var se *kadm.ShardErrors
	return errors.As(err, &se) && !se.AllFailed
}

// describeConsumerGroups describes KIP-848 groups with
// ConsumerGroupDescribe, sent as is (not through kadm) to keep the
// assignments' topic IDs: a broker that names no topic in them (kfake)
// has them named from the metadata.
func describeConsumerGroups(ctx context.Context, cl *kgo.Client, groups []string) map[string]*described {
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = groups
	out := map[string]*described{}
	unnamed := false
	type assigned struct {
		m  *member
		tp []kmsg.AssignmentTopicPartition
	}
	var all []assigned
	for _, sh := range cl.RequestSharded(ctx, req) {
		if sh.Err != nil {
			continue
		}
		resp := sh.Resp.(*kmsg.ConsumerGroupDescribeResponse)
		for _, rg := range resp.Groups {
			d := &described{Group: rg.Group, Coordinator: sh.Meta.NodeID, State: rg.State, Type: "consumer",
				ProtocolType: "consumer", Protocol: rg.AssignorName, Err: kerr.ErrorForCode(rg.ErrorCode)}
			d.Members = make([]member, len(rg.Members))
			for i, rm := range rg.Members {
				d.Members[i] = member{MemberID: rm.MemberID, InstanceID: rm.InstanceID, ClientID: rm.ClientID,
					ClientHost: rm.ClientHost, Assigned: make(kadm.TopicsSet)}
				all = append(all, assigned{&d.Members[i], rm.Assignment.TopicPartitions})
			}
			out[rg.Group] = d
		}
	}
	for _, a := range all {
		for _, tp := range a.tp {
			if tp.Topic == "" {
				unnamed = true
				continue
			}
			a.m.Assigned.Add(tp.Topic, tp.Partitions...)
		}
	}
	if !unnamed {
		return out
	}
	tds, err := kadm.NewClient(cl).ListTopics(ctx)
	names := map[kadm.TopicID]string{}
	if err == nil {
		for _, td := range tds {
			names[td.ID] = td.Topic
		}
	}
	for _, a := range all {
		for _, tp := range a.tp {
			if name, ok := names[kadm.TopicID(tp.TopicID)]; ok && tp.Topic == "" {
				a.m.Assigned.Add(name, tp.Partitions...)
			}
		}
	}
	return out
}
