package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/configdef"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/wire"
)

// offsetsTopic is Kafka's consumer offsets topic.
const offsetsTopic = raftmeta.ConsumerOffsetsTopic

// services wires the protocol handlers to the node's components.
func (n *Node) services() wire.Services {
	svc := wire.Services{
		Cluster:      clusterView{n},
		Topics:       topicPolicy{autoCreate: n.cfg.AutoCreateTopicsEnable},
		Replicas:     replicaService{n.replicas},
		Admin:        admin{n},
		Groups:       groupsAndTransactions{GroupCoordinator: n.groups, txns: n.txns, shares: n.shares},
		Producers:    producerIDsService{groups: n.groups, txns: n.txns},
		Transactions: n.txns,
		// The share coordinator's inter-broker keys (83-87) are
		// advertised and served on every listener, as Kafka's broker
		// listener serves them.
		ShareCoordinator: n.shares,
		Mirror:           mirrorService{n},
		Quorum:           quorumService{n},
		ShareGroups:      n.shareGroupService(),
		Reassignments:    reassignService{n},
	}
	if n.sharePartitions != nil {
		svc.Share = n.sharePartitions
		// ShareFetch and ShareAcknowledge are of use with share groups
		// to join: advertised together with them.
		svc.AdvertiseShare = svc.ShareGroups != nil
	}
	return svc
}

// clusterView is wire.ClusterView over the metadata quorum.
type clusterView struct{ n *Node }

func (c clusterView) NodeID() int32          { return c.n.cfg.NodeID }
func (c clusterView) Image() *raftmeta.Image { return c.n.quorum.Image() }
func (c clusterView) ControllerID() int32    { return c.n.quorum.LeaderID() }

func (c clusterView) CatchUpMetadata(ctx context.Context) bool { return c.n.quorum.CatchUp(ctx) }

// topicPolicy is wire.TopicPolicy: Kafka's internal topics and
// auto.create.topics.enable.
type topicPolicy struct{ autoCreate bool }

// IsInternalTopic reports Kafka's internal topics (Topic.isInternal;
// raftmeta's one list of them).
func (topicPolicy) IsInternalTopic(name string) bool { return raftmeta.IsInternalTopic(name) }

// AutoCreatesTopic: with auto.create.topics.enable on, Metadata creates a
// missing topic whose name is valid and not internal; the coordinators
// create their internal topics themselves, with their own partition
// counts and configs (ensureOffsetsTopic).
func (p topicPolicy) AutoCreatesTopic(name string) bool {
	return p.autoCreate && raftmeta.ValidateTopicName(name) == nil && !p.IsInternalTopic(name)
}

// AutoCreateTopics creates missing topics with the broker defaults when
// auto.create.topics.enable is on (Kafka's AutoTopicCreationManager). It
// returns once the controller committed them, and the records are applied
// to the replica manager synchronously on this node, so a produce right
// after finds the partitions.
func (c clusterView) AutoCreateTopics(ctx context.Context, topics []string) map[string]int16 {
	out := make(map[string]int16, len(topics))
	if !c.n.cfg.AutoCreateTopicsEnable {
		for _, t := range topics {
			out[t] = kerr.UnknownTopicOrPartition.Code
		}
		return out
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	for _, t := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t, -1, -1
		req.Topics = append(req.Topics, rt)
	}
	resp := c.n.forward(ctx, req).(*kmsg.CreateTopicsResponse)
	c.n.waitForTopics(ctx, createdTopics(resp))
	for _, rt := range resp.Topics {
		code := rt.ErrorCode
		if code == kerr.TopicAlreadyExists.Code {
			code = 0
		}
		out[rt.Topic] = code
	}
	return out
}

// ensureOffsetsTopic creates __consumer_offsets the way Kafka's
// GroupCoordinator asks for it: offsets.topic.num.partitions partitions,
// compacted, offsets.topic.segment.bytes segments, and a replication
// factor of offsets.topic.replication.factor.
//
// The factor is lowered only where fewer brokers are registered
// (raftmeta's Image.InternalTopicReplicationFactor, which __mirror_state
// shares): a broker that is down or stopping gets its replica out of the
// ISR, as Kafka's controller places it.
func (n *Node) ensureOffsetsTopic(ctx context.Context) error {
	g := n.cfg.Group
	return n.ensureInternalTopic(ctx, offsetsTopic, g.OffsetsTopicNumPartitions, g.OffsetsTopicReplicationFactor,
		"offsets.topic.replication.factor", map[string]string{
			"cleanup.policy":   "compact",
			"compression.type": "producer",
			"segment.bytes":    fmt.Sprint(g.OffsetsTopicSegmentBytes),
		})
}

// ensureInternalTopic creates a coordinator's internal topic if it is
// missing, with partitions, configs and the replication factor rf (the
// value of rfKey), lowered where fewer brokers are registered, and waits
// until this node's image has it.
func (n *Node) ensureInternalTopic(ctx context.Context, topic string, partitions int32, rf int16, rfKey string, configs map[string]string) error {
	img := n.quorum.Image()
	if _, ok := img.Topics[topic]; ok {
		return nil
	}
	if lowered := img.InternalTopicReplicationFactor(rf); lowered != rf {
		n.logger.Warn("lowering the replication factor of an internal topic to the registered broker count",
			"topic", topic, rfKey, rf, "brokers", len(img.Brokers))
		rf = lowered
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, rf
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(configs[k])
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp := n.forward(ctx, req).(*kmsg.CreateTopicsResponse)
	n.waitForTopics(ctx, createdTopics(resp))
	if len(resp.Topics) != 1 {
		return kerr.CoordinatorNotAvailable
	}
	if code := resp.Topics[0].ErrorCode; code != 0 && code != kerr.TopicAlreadyExists.Code {
		return kerr.ErrorForCode(code)
	}
	return nil
}

// allocateProducerIDs asks the active controller for a block of producer
// ids (AllocateProducerIds, KIP-730).
func (n *Node) allocateProducerIDs(ctx context.Context) (int64, int32, error) {
	req := kmsg.NewPtrAllocateProducerIDsRequest()
	req.BrokerID, req.BrokerEpoch = n.cfg.NodeID, n.brokerEpoch()
	resp := n.forward(ctx, req).(*kmsg.AllocateProducerIDsResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, 0, err
	}
	return resp.ProducerIDStart, resp.ProducerIDLen, nil
}

// createdTopics are the topics a CreateTopics answer created or found.
func createdTopics(resp *kmsg.CreateTopicsResponse) []string {
	var out []string
	for _, t := range resp.Topics {
		if t.ErrorCode == 0 || t.ErrorCode == kerr.TopicAlreadyExists.Code {
			out = append(out, t.Topic)
		}
	}
	return out
}

// sources is the static configuration plus the dynamic broker configs of
// img (the cluster default "" and this broker's own resource).
func (n *Node) sources(img *raftmeta.Image) configdef.Sources {
	return n.cfg.Sources(
		img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceBroker, Name: ""}],
		img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceBroker, Name: fmt.Sprint(n.cfg.NodeID)}],
	)
}

func (n *Node) logConfigFor(topic string, img *raftmeta.Image) (storage.LogConfig, error) {
	return configdef.EffectiveLogConfig(n.sources(img), img.TopicConfig(topic))
}

func (n *Node) minInsyncReplicasFor(topic string, img *raftmeta.Image) int32 {
	eff, err := configdef.EffectiveTopicConfigs(n.sources(img), img.TopicConfig(topic))
	if err != nil {
		return 1
	}
	var v int32
	if _, err := fmt.Sscan(eff["min.insync.replicas"], &v); err != nil || v < 1 {
		return 1
	}
	return v
}

// validateConfigs is the controller's config validator.
func (n *Node) validateConfigs(res raftmeta.ConfigResource, configs map[string]*string) error {
	switch res.Type {
	case raftmeta.ConfigResourceTopic:
		return configdef.ValidateTopicConfigsWith(n.sources(n.quorum.Image()).TopicDefaults(), configs)
	case raftmeta.ConfigResourceBroker:
		if err := configdef.ValidateBrokerConfigs(res.Name != "", configs); err != nil {
			return err
		}
		return n.validateBrokerConfigsTogether(res, configs)
	case raftmeta.ConfigResourceGroup:
		// Against this (the active controller's) group.* bounds, as
		// Kafka's ControllerConfigurationValidator checks GROUP configs
		// with the controller's GroupCoordinatorConfig.
		return configdef.ValidateGroupConfigs(n.sources(n.quorum.Image()), configs)
	}
	return fmt.Errorf("config resource type %d is not supported", res.Type)
}

func (n *Node) describeNewTopicConfigs(topic string, dynamic map[string]string) []kmsg.CreateTopicsResponseTopicConfig {
	entries := configdef.DescribeTopic(dynamic, n.sources(n.quorum.Image()), configdef.DescribeOptions{})
	out := make([]kmsg.CreateTopicsResponseTopicConfig, 0, len(entries))
	for _, e := range entries {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name, c.Value, c.ReadOnly, c.Source, c.IsSensitive = e.Name, e.Value, e.ReadOnly, int8(e.Source), e.IsSensitive
		out = append(out, c)
	}
	return out
}

// admin is wire.AdminService: changes are forwarded to the active
// controller; the image and the config definitions answer DescribeConfigs
// and DescribeAcls here.
type admin struct{ n *Node }

func (a admin) CreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) *kmsg.CreateTopicsResponse {
	resp := a.n.forward(ctx, req).(*kmsg.CreateTopicsResponse)
	if !req.ValidateOnly {
		a.n.waitForTopics(ctx, createdTopics(resp))
	}
	return resp
}

func (a admin) DeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse {
	if !a.n.cfg.DeleteTopicEnable {
		resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode = t.Topic, t.TopicID, kerr.TopicDeletionDisabled.Code
			resp.Topics = append(resp.Topics, rt)
		}
		for _, name := range req.TopicNames {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), kerr.TopicDeletionDisabled.Code
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	return a.n.forward(ctx, req).(*kmsg.DeleteTopicsResponse)
}

func (a admin) CreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) *kmsg.CreatePartitionsResponse {
	return a.n.forward(ctx, req).(*kmsg.CreatePartitionsResponse)
}

func (a admin) AlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) *kmsg.AlterConfigsResponse {
	return a.n.forward(ctx, req).(*kmsg.AlterConfigsResponse)
}

func (a admin) IncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) *kmsg.IncrementalAlterConfigsResponse {
	return a.n.forward(ctx, req).(*kmsg.IncrementalAlterConfigsResponse)
}

func (a admin) CreateACLs(ctx context.Context, req *kmsg.CreateACLsRequest) *kmsg.CreateACLsResponse {
	return a.n.forward(ctx, req).(*kmsg.CreateACLsResponse)
}

func (a admin) DescribeACLs(ctx context.Context, req *kmsg.DescribeACLsRequest) *kmsg.DescribeACLsResponse {
	return a.n.quorum.Controller().DescribeACLs(ctx, req)
}

// DescribeUserScramCredentials answers from this node's image, as Kafka's
// brokers answer from their metadata cache.
func (a admin) DescribeUserScramCredentials(ctx context.Context, req *kmsg.DescribeUserSCRAMCredentialsRequest) *kmsg.DescribeUserSCRAMCredentialsResponse {
	return a.n.quorum.Controller().DescribeUserScramCredentials(ctx, req)
}

// AlterUserScramCredentials is forwarded to the active controller; it
// returns once this node applied the alterations that succeeded, so the
// client's next request here (a DescribeUserScramCredentials, or a SCRAM
// authentication) sees them.
func (a admin) AlterUserScramCredentials(ctx context.Context, req *kmsg.AlterUserSCRAMCredentialsRequest) *kmsg.AlterUserSCRAMCredentialsResponse {
	resp := a.n.forward(ctx, req).(*kmsg.AlterUserSCRAMCredentialsResponse)
	ok := map[string]bool{}
	for _, r := range resp.Results {
		ok[r.User] = r.ErrorCode == 0
	}
	a.n.waitForImage(ctx, func(img *raftmeta.Image) bool {
		for _, d := range req.Deletions {
			if _, there := img.ScramCredential(d.Mechanism, d.Name); ok[d.Name] && there {
				return false
			}
		}
		for _, u := range req.Upsertions {
			if c, there := img.ScramCredential(u.Mechanism, u.Name); ok[u.Name] && (!there || c.Iterations != u.Iterations || !bytes.Equal(c.Salt, u.Salt)) {
				return false
			}
		}
		return true
	})
	return resp
}

func (a admin) DeleteACLs(ctx context.Context, req *kmsg.DeleteACLsRequest) *kmsg.DeleteACLsResponse {
	return a.n.forward(ctx, req).(*kmsg.DeleteACLsResponse)
}

func (a admin) ElectLeaders(ctx context.Context, req *kmsg.ElectLeadersRequest) *kmsg.ElectLeadersResponse {
	return a.n.forward(ctx, req).(*kmsg.ElectLeadersResponse)
}

// DescribeConfigs answers topic, broker, group and mirror resources from the
// image's dynamic configs, the static configuration and the definitions'
// defaults (Kafka's ConfigHelper). Any group id but "" may be described,
// whether or not the group exists or has configs.
func (a admin) DescribeConfigs(_ context.Context, req *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	img := a.n.quorum.Image()
	src := a.n.sources(img)
	for _, r := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		opts := configdef.DescribeOptions{Names: r.ConfigNames, IncludeSynonyms: req.IncludeSynonyms, IncludeDocumentation: req.IncludeDocumentation}
		switch r.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			if _, ok := img.Topics[r.ResourceName]; !ok {
				rr.ErrorCode = kerr.UnknownTopicOrPartition.Code
				rr.ErrorMessage = kmsg.StringPtr("Topic " + r.ResourceName + " does not exist")
				break
			}
			rr.Configs = configdef.DescribeTopic(img.TopicConfig(r.ResourceName), src, opts)
		case kmsg.ConfigResourceTypeBroker:
			configs, err := configdef.DescribeBroker(r.ResourceName, src, opts)
			if err != nil {
				rr.ErrorCode, rr.ErrorMessage = errorCode(err), kmsg.StringPtr(err.Error())
				break
			}
			rr.Configs = configs
		case kmsg.ConfigResourceTypeGroupConfig:
			if r.ResourceName == "" {
				rr.ErrorCode = kerr.InvalidRequest.Code
				rr.ErrorMessage = kmsg.StringPtr("Group name must not be empty")
				break
			}
			rr.Configs = configdef.DescribeGroup(img.GroupConfig(r.ResourceName), src, opts)
		case kmsg.ConfigResourceType(raftmeta.ConfigResourceMirror):
			describeMirrorConfigs(img, &rr, r.ConfigNames)
		default:
			rr.ErrorCode = kerr.InvalidRequest.Code
			rr.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("resource type %d is not supported", r.ResourceType))
		}
		if req.Version < 1 {
			for i := range rr.Configs {
				rr.Configs[i].ConfigSynonyms = nil
			}
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// errorCode is err's Kafka code, UNKNOWN_SERVER_ERROR if it has none.
func errorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}
