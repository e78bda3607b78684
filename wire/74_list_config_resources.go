package wire

import (
	"context"
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// ListConfigResources: v0-1 (ListClientMetricsResources before KIP-1142)
//
// Behavior:
//   - The config resources of the requested types, from the metadata
//     image, in Kafka's order (KafkaApis.handleListConfigResources): GROUP
//     (the groups that have dynamic configs), CLIENT_METRICS (none: Strait
//     has no client metrics subscriptions), BROKER_LOGGER (none: Strait
//     has no runtime log levels to configure), BROKER (the unfenced
//     brokers with an endpoint on the request's listener) and TOPIC (every
//     topic, internal ones included); names sorted within a type.
//   - v1 with no types lists every type v1 supports; a type outside them
//     fails the whole request with UNSUPPORTED_VERSION and no resources.
//
// Version notes:
//   - v0: client metrics resources only (KIP-714)
//   - v1: ResourceTypes filter and each resource's Type (KIP-1142)

func init() { register(api{key: 74, min: 0, max: 1, handle: (*Server).handleListConfigResources}) }

// listConfigResourceTypes are the types v1 supports
// (ListConfigResourcesRequest.supportedResourceTypes), in the order the
// answer lists them.
var listConfigResourceTypes = []kmsg.ConfigResourceType{
	kmsg.ConfigResourceTypeGroupConfig,
	kmsg.ConfigResourceTypeClientMetrics,
	kmsg.ConfigResourceTypeBrokerLogger,
	kmsg.ConfigResourceTypeBroker,
	kmsg.ConfigResourceTypeTopic,
}

func (s *Server) handleListConfigResources(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListConfigResourcesRequest)
	resp := req.ResponseKind().(*kmsg.ListConfigResourcesResponse)
	// KIP-1142: DESCRIBE_CONFIGS on the cluster, else
	// CLUSTER_AUTHORIZATION_FAILED (KafkaApis.handleListConfigResources).
	if !s.auth(ctx).cluster(opDescribeConfigs) {
		resp.ErrorCode = errClusterAuth
		return resp, nil
	}
	wanted := map[kmsg.ConfigResourceType]bool{}
	switch {
	case req.Version == 0:
		wanted[kmsg.ConfigResourceTypeClientMetrics] = true
	case len(req.ResourceTypes) == 0:
		for _, t := range listConfigResourceTypes {
			wanted[t] = true
		}
	default:
		for _, t := range req.ResourceTypes {
			if !slices.Contains(listConfigResourceTypes, kmsg.ConfigResourceType(t)) {
				resp.ErrorCode = kerr.UnsupportedVersion.Code
				return resp, nil
			}
			wanted[kmsg.ConfigResourceType(t)] = true
		}
	}
	img := s.svc.Cluster.Image()
	for _, t := range listConfigResourceTypes {
		if !wanted[t] {
			continue
		}
		for _, name := range configResourceNames(img, t, reqctx.From(ctx).Listener) {
			r := kmsg.NewListConfigResourcesResponseConfigResource()
			r.Name, r.Type = name, int8(t)
			resp.ConfigResources = append(resp.ConfigResources, r)
		}
	}
	return resp, nil
}

// configResourceNames lists the resources of one type, sorted.
func configResourceNames(img *raftmeta.Image, t kmsg.ConfigResourceType, listener string) []string {
	var names []string
	switch t {
	case kmsg.ConfigResourceTypeGroupConfig:
		for res, configs := range img.Configs {
			if res.Type == raftmeta.ConfigResourceGroup && len(configs) > 0 {
				names = append(names, res.Name)
			}
		}
	case kmsg.ConfigResourceTypeBroker:
		for _, id := range slices.Sorted(maps.Keys(img.Brokers)) {
			if b := img.Brokers[id]; !b.Fenced {
				if _, ok := endpointFor(b, listener); ok {
					names = append(names, strconv.Itoa(int(id)))
				}
			}
		}
		return names // in node id order, as numbers
	case kmsg.ConfigResourceTypeTopic:
		names = img.TopicNames()
	}
	slices.Sort(names)
	return names
}
