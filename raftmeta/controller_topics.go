package raftmeta

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateTopics: v0-7 (ControllerApis.createTopics +
// ReplicationControlManager.createTopics).
//
// Behavior:
//   - A name given twice fails with INVALID_REQUEST, listed once after the
//     other topics; __cluster_metadata with INVALID_REQUEST.
//   - Topic.validate, then TOPIC_ALREADY_EXISTS, then '.'/'_' collisions
//     with an existing topic or an earlier one of the same request
//     (INVALID_TOPIC_EXCEPTION; Kafka misses the in-request case).
//   - Configs: a null value, or one the ConfigValidator rejects, is
//     INVALID_CONFIG.
//   - ReplicaAssignment needs NumPartitions and ReplicationFactor -1
//     (INVALID_REQUEST); partitions 0..n-1 once each, distinct registered
//     brokers, the same count everywhere, one unfenced
//     (INVALID_REPLICA_ASSIGNMENT).
//   - Else ReplicationFactor 0 or < -1 is INVALID_REPLICATION_FACTOR,
//     NumPartitions 0 or < -1 INVALID_PARTITIONS, -1 takes num.partitions /
//     default.replication.factor; more replicas than unfenced brokers is
//     INVALID_REPLICATION_FACTOR.
//   - More than 10000 records for the request: INVALID_PARTITIONS for the
//     topic that would pass the bound (Kafka fails the request with
//     UNKNOWN_SERVER_ERROR).
//   - ValidateOnly checks everything and appends nothing (no TopicID).
//   - TimeoutMillis > 0 bounds the wait for the write (REQUEST_TIMED_OUT).
//
// Version notes:
//   - v1: ValidateOnly, ErrorMessage
//   - v4: -1 defaults (KIP-464)
//   - v5: NumPartitions, ReplicationFactor, Configs in the response (KIP-525)
//   - v7: TopicID (KIP-516)
func (c *replicationControl) CreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) *kmsg.CreateTopicsResponse {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	ctx, cancel := withTimeout(ctx, req.TimeoutMillis)
	defer cancel()

	names := make([]string, len(req.Topics))
	for i := range req.Topics {
		names[i] = req.Topics[i].Topic
	}
	type created struct {
		id   Uuid
		np   int32
		rf   int16
		cfgs map[string]string
	}
	outs := make([]created, len(req.Topics))
	// Normalised names of the topics this request creates, for the
	// collision check.
	collide := map[string]string{}
	build := func(img *Image, i, pending int) ([]Record, *apiError) {
		rt := &req.Topics[i]
		recs, e := c.createTopic(img, rt, collide)
		if e != nil {
			return nil, e
		}
		if pending+len(recs) > maxRecordsPerOp {
			return nil, errorf(kerr.InvalidPartitions, "Creating topic '%s' would append more than %d metadata records in one request.", rt.Topic, maxRecordsPerOp)
		}
		tr := recs[0].(*TopicRecord)
		collide[unifyCollisionChars(tr.Name)] = tr.Name
		o := &outs[i]
		o.id = tr.TopicID
		o.cfgs = map[string]string{}
		for _, r := range recs[1:] {
			switch r := r.(type) {
			case *ConfigRecord:
				o.cfgs[r.Name] = *r.Value
			case *PartitionRecord:
				o.np++
				o.rf = int16(len(r.Replicas))
			}
		}
		return recs, nil
	}
	c.writeTopics(ctx, names, req.ValidateOnly, build, func(i int, name string, code int16, msg *string) {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic, st.ErrorCode = name, code
		if i >= 0 && code == 0 {
			o := outs[i]
			if req.Version >= 7 && !req.ValidateOnly {
				st.TopicID = o.id
			}
			if req.Version >= 5 {
				st.NumPartitions = o.np
				st.ReplicationFactor = o.rf
				st.Configs = c.describeNewTopicConfigs(name, o.cfgs)
			}
		}
		if req.Version >= 1 {
			st.ErrorMessage = msg
		}
		resp.Topics = append(resp.Topics, st)
	})
	return resp
}

// createTopic validates one topic and returns its records: the
// TopicRecord, its ConfigRecords, its PartitionRecords.
func (c *replicationControl) createTopic(img *Image, rt *kmsg.CreateTopicsRequestTopic, created map[string]string) ([]Record, *apiError) {
	for _, cfg := range rt.Configs {
		if cfg.Name == MirrorNameConfig {
			return nil, errorf(kerr.InvalidConfig, "%s is set by StartMirrorTopics, not by CreateTopics.", MirrorNameConfig)
		}
	}
	for _, cfg := range rt.Configs {
		if cfg.Name == MirrorCloneConfig && cfg.Value != nil {
			// A drill clone of a mirror topic is the mirror domain's.
			return c.mirrors.createClone(img, rt, *cfg.Value, created)
		}
	}
	return c.createTopicWithID(img, rt, created, Uuid{})
}

// createTopicWithID is createTopic with the topic id given (a zero id draws
// a new one): StartMirrorTopics creates a mirror topic with its source
// topic's id (KIP-1279). An id in use is TOPIC_ALREADY_EXISTS.
func (c *replicationControl) createTopicWithID(img *Image, rt *kmsg.CreateTopicsRequestTopic, created map[string]string, id Uuid) ([]Record, *apiError) {
	name := rt.Topic
	if name == ClusterMetadataTopic {
		return nil, errorf(kerr.InvalidRequest, "Creation of internal topic %s is prohibited.", ClusterMetadataTopic)
	}
	if err := ValidateTopicName(name); err != nil {
		return nil, errorf(kerr.InvalidTopicException, "%s", err.Error())
	}
	if _, ok := img.Topics[name]; ok {
		return nil, errorf(kerr.TopicAlreadyExists, "Topic '%s' already exists.", name)
	}
	if hasCollisionChars(name) {
		norm := unifyCollisionChars(name)
		if other, ok := created[norm]; ok {
			return nil, errorf(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", name, other)
		}
		for other := range img.Topics {
			if unifyCollisionChars(other) == norm {
				return nil, errorf(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", name, other)
			}
		}
	}

	configs := map[string]*string{}
	var nulls []string
	for _, cfg := range rt.Configs {
		if cfg.Value == nil {
			nulls = append(nulls, cfg.Name)
		}
		configs[cfg.Name] = cfg.Value
	}
	if len(nulls) > 0 {
		return nil, errorf(kerr.InvalidConfig, "Null value not supported for topic configs: %s", strings.Join(nulls, ","))
	}
	if len(configs) > 0 {
		if e := c.configs.validateConfigs(ConfigResource{Type: ConfigResourceTopic, Name: name}, configs); e != nil {
			return nil, e
		}
	}

	var assignments [][]int32
	var isrs [][]int32
	if len(rt.ReplicaAssignment) > 0 {
		if rt.ReplicationFactor != -1 {
			return nil, errorf(kerr.InvalidRequest, "A manual partition assignment was specified, but replication factor was not set to -1.")
		}
		if rt.NumPartitions != -1 {
			return nil, errorf(kerr.InvalidRequest, "A manual partition assignment was specified, but numPartitions was not set to -1.")
		}
		byPartition := map[int32][]int32{}
		rf := 0
		for _, ra := range rt.ReplicaAssignment {
			if _, dup := byPartition[ra.Partition]; dup {
				return nil, errorf(kerr.InvalidReplicaAssignment, "Found multiple manual partition assignments for partition %d", ra.Partition)
			}
			if _, e := validateManualAssignment(img, ra.Replicas, rf, ra.Partition); e != nil {
				return nil, e
			}
			rf = len(ra.Replicas)
			byPartition[ra.Partition] = ra.Replicas
		}
		for p := int32(0); p < int32(len(byPartition)); p++ {
			replicas, ok := byPartition[p]
			if !ok {
				return nil, errorf(kerr.InvalidReplicaAssignment, "partitions should be a consecutive 0-based integer sequence")
			}
			assignments = append(assignments, slices.Clone(replicas))
			isrs = append(isrs, activeReplicas(img, replicas))
		}
	} else {
		if rt.ReplicationFactor < -1 || rt.ReplicationFactor == 0 {
			return nil, errorf(kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value.")
		}
		if rt.NumPartitions < -1 || rt.NumPartitions == 0 {
			return nil, errorf(kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value.")
		}
		np, rf := rt.NumPartitions, rt.ReplicationFactor
		if np == -1 {
			np = c.cfg.NumPartitions
		}
		if rf == -1 {
			rf = c.cfg.DefaultReplicationFactor
		}
		if np > maxRecordsPerOp {
			return nil, errorf(kerr.InvalidPartitions, "Creating topic '%s' with %d partitions would append more than %d metadata records in one request.", name, np, maxRecordsPerOp)
		}
		placed, e := placeOnBrokers(img, name, 0, np, rf)
		if e != nil {
			return nil, e
		}
		assignments = placed
		for _, replicas := range placed {
			isrs = append(isrs, activeReplicas(img, replicas))
		}
	}

	if !id.IsZero() {
		if other, ok := img.TopicsByID[id]; ok {
			return nil, errorf(kerr.TopicAlreadyExists, "Topic id %s of '%s' already belongs to topic '%s'.", id, name, other.Name)
		}
	} else {
		var err error
		id, err = c.newUuid(func(u Uuid) bool { _, ok := img.TopicsByID[u]; return ok })
		if err != nil {
			return nil, errorf(kerr.UnknownServerError, "%s", err.Error())
		}
	}
	records := []Record{&TopicRecord{Name: name, TopicID: id}}
	// ConfigRecords go after the TopicRecord and before the
	// PartitionRecords, as in Kafka.
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		records = append(records, &ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: name, Name: k, Value: configs[k]})
	}
	for p, replicas := range assignments {
		records = append(records, newPartitionRecord(id, int32(p), replicas, isrs[p]))
	}
	return records, nil
}

// describeNewTopicConfigs is the Configs of a CreateTopics v5+ answer.
func (c *replicationControl) describeNewTopicConfigs(topic string, dynamic map[string]string) []kmsg.CreateTopicsResponseTopicConfig {
	if c.cfg.DescribeTopicConfigs != nil {
		return c.cfg.DescribeTopicConfigs(topic, dynamic)
	}
	out := make([]kmsg.CreateTopicsResponseTopicConfig, 0, len(dynamic))
	for _, k := range slices.Sorted(maps.Keys(dynamic)) {
		cfg := kmsg.NewCreateTopicsResponseTopicConfig()
		cfg.Name = k
		cfg.Value = strp(dynamic[k])
		cfg.Source = int8(kmsg.ConfigSourceDynamicTopicConfig)
		out = append(out, cfg)
	}
	return out
}

// DeleteTopics: v0-6 (ControllerApis.deleteTopics +
// ReplicationControlManager.deleteTopics).
//
// Behavior:
//   - By name (v0-5 TopicNames, v6 Topics[].Topic) or by id (v6); both
//     set, neither set, or the same name/id twice is INVALID_REQUEST; a name
//     that maps to an id also given fails both with INVALID_REQUEST.
//   - Unknown name: UNKNOWN_TOPIC_OR_PARTITION; unknown id: UNKNOWN_TOPIC_ID.
//   - The RemoveTopicRecord drops the topic's configs too.
//   - Answers follow the request order (Kafka shuffles them).
//
// Version notes:
//   - v5: ErrorMessage
//   - v6: Topics with TopicID (KIP-516)
func (c *replicationControl) DeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	ctx, cancel := withTimeout(ctx, req.TimeoutMillis)
	defer cancel()

	type item struct {
		name *string
		id   Uuid
		err  *apiError
		// resolved
		rname string
		rid   Uuid
	}
	var items []*item
	for _, n := range req.TopicNames {
		items = append(items, &item{name: strp(n)})
	}
	for _, t := range req.Topics {
		items = append(items, &item{name: t.Topic, id: t.TopicID})
	}
	names, ids := map[string]int{}, map[Uuid]int{}
	for _, it := range items {
		switch {
		case it.name != nil && !it.id.IsZero():
			it.err = errorf(kerr.InvalidRequest, "You may not specify both topic name and topic id.")
		case it.name == nil && it.id.IsZero():
			it.err = errorf(kerr.InvalidRequest, "Neither topic name nor id were specified.")
		case it.name != nil:
			names[*it.name]++
		default:
			ids[it.id]++
		}
	}
	for _, it := range items {
		if it.err != nil {
			continue
		}
		if it.name != nil && names[*it.name] > 1 {
			it.err = errorf(kerr.InvalidRequest, "Duplicate topic name.")
		} else if it.name == nil && ids[it.id] > 1 {
			it.err = errorf(kerr.InvalidRequest, "Duplicate topic id.")
		}
	}

	built := false
	err := c.write(ctx, func(img *Image) []Record {
		built = true
		byID := map[Uuid][]*item{}
		for _, it := range items {
			if it.err != nil {
				continue
			}
			if it.name != nil {
				t, ok := img.Topics[*it.name]
				if !ok {
					it.err = errorf(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
					continue
				}
				it.rname, it.rid = t.Name, t.ID
			} else {
				t, ok := img.TopicsByID[it.id]
				if !ok {
					it.err = errorf(kerr.UnknownTopicID, "This server does not host this topic ID.")
					continue
				}
				it.rname, it.rid = t.Name, t.ID
			}
			byID[it.rid] = append(byID[it.rid], it)
		}
		var records []Record
		for _, it := range items {
			if it.err != nil {
				continue
			}
			if len(byID[it.rid]) > 1 {
				it.err = errorf(kerr.InvalidRequest, "The provided topic name maps to an ID that was already supplied.")
				continue
			}
			records = append(records, &RemoveTopicRecord{TopicID: it.rid})
		}
		return records
	})

	var werr *apiError
	if err != nil {
		code, msg := writeErrorCode(err)
		werr = &apiError{code: code, msg: msg}
	}
	for _, it := range items {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic = it.name
		if it.rname != "" {
			st.Topic = strp(it.rname)
		}
		if req.Version >= 6 {
			st.TopicID = it.id
			if !it.rid.IsZero() {
				st.TopicID = it.rid
			}
		} else if st.Topic == nil {
			st.Topic = strp("")
		}
		e := it.err
		if e == nil && (werr != nil || !built) {
			e = werr
		}
		if e != nil {
			st.ErrorCode = e.code
			if req.Version >= 5 {
				st.ErrorMessage = e.message()
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// CreatePartitions: v0-3 (ControllerApis.createPartitions +
// ReplicationControlManager.createPartitions).
//
// Behavior:
//   - A name given twice is INVALID_REQUEST (once); unknown topics
//     UNKNOWN_TOPIC_OR_PARTITION.
//   - Count must exceed the current count: equal or lower is
//     INVALID_PARTITIONS.
//   - Assignment (when not null) needs one entry per new partition, each
//     of distinct registered brokers, as many as the topic's replication
//     factor, one of them unfenced (INVALID_REPLICA_ASSIGNMENT). Without it
//     the new partitions are placed like CreateTopics does.
//   - ValidateOnly checks and appends nothing; TimeoutMillis > 0 bounds
//     the wait.
//
// Version notes:
//   - v2: flexible
func (c *replicationControl) CreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) *kmsg.CreatePartitionsResponse {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	ctx, cancel := withTimeout(ctx, req.TimeoutMillis)
	defer cancel()

	names := make([]string, len(req.Topics))
	for i := range req.Topics {
		names[i] = req.Topics[i].Topic
	}
	build := func(img *Image, i, pending int) ([]Record, *apiError) {
		rt := &req.Topics[i]
		recs, e := c.createPartitions(img, rt)
		if e == nil && pending+len(recs) > maxRecordsPerOp {
			e = errorf(kerr.InvalidPartitions, "Adding partitions to '%s' would append more than %d metadata records in one request.", rt.Topic, maxRecordsPerOp)
		}
		return recs, e
	}
	c.writeTopics(ctx, names, req.ValidateOnly, build, func(_ int, name string, code int16, msg *string) {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic, st.ErrorCode, st.ErrorMessage = name, code, msg
		resp.Topics = append(resp.Topics, st)
	})
	return resp
}

func (c *replicationControl) createPartitions(img *Image, rt *kmsg.CreatePartitionsRequestTopic) ([]Record, *apiError) {
	t, ok := img.Topics[rt.Topic]
	if !ok {
		return nil, errorf(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
	}
	have := int32(len(t.Partitions))
	switch {
	case rt.Count == have:
		return nil, errorf(kerr.InvalidPartitions, "Topic already has %d partition(s).", have)
	case rt.Count < have:
		return nil, errorf(kerr.InvalidPartitions, "The topic %s currently has %d partition(s); %d would not be an increase.", rt.Topic, have, rt.Count)
	}
	additional := rt.Count - have
	if additional > maxRecordsPerOp {
		return nil, errorf(kerr.InvalidPartitions, "Adding %d partitions to '%s' would append more than %d metadata records in one request.", additional, rt.Topic, maxRecordsPerOp)
	}
	if rt.Assignment != nil && int32(len(rt.Assignment)) != additional {
		return nil, errorf(kerr.InvalidReplicaAssignment, "Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", additional, len(rt.Assignment))
	}
	rf := int16(len(t.Partitions[0].Replicas))
	var records []Record
	if rt.Assignment != nil {
		for i, a := range rt.Assignment {
			p := have + int32(i)
			isr, e := validateManualAssignment(img, a.Replicas, int(rf), p)
			if e != nil {
				return nil, e
			}
			records = append(records, newPartitionRecord(t.ID, p, slices.Clone(a.Replicas), isr))
		}
		return records, nil
	}
	placed, e := placeOnBrokers(img, rt.Topic, have, additional, rf)
	if e != nil {
		return nil, e
	}
	for i, replicas := range placed {
		records = append(records, newPartitionRecord(t.ID, have+int32(i), replicas, activeReplicas(img, replicas)))
	}
	return records, nil
}
