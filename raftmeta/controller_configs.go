package raftmeta

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listTopicConfigs are Kafka's LIST-typed topic configs (TopicConfig /
// LogConfig), the keys APPEND and SUBTRACT accept when no IsListConfig is
// configured.
var listTopicConfigs = map[string]bool{
	"cleanup.policy":                          true,
	"leader.replication.throttled.replicas":   true,
	"follower.replication.throttled.replicas": true,
}

func (c *configurationControl) isListConfig(t ConfigResourceType, key string) bool {
	if t == ConfigResourceMirror {
		return mirrorListConfigs[key]
	}
	if c.cfg.IsListConfig != nil {
		return c.cfg.IsListConfig(t, key)
	}
	return t == ConfigResourceTopic && listTopicConfigs[key]
}

func (c *configurationControl) configDefault(t ConfigResourceType, key string) (string, bool) {
	if t == ConfigResourceMirror {
		return MirrorConfigDefault(key)
	}
	if c.cfg.ConfigDefault != nil {
		return c.cfg.ConfigDefault(t, key)
	}
	if t == ConfigResourceTopic && key == "cleanup.policy" {
		return "delete", true
	}
	return "", false
}

// validateConfigs runs the ConfigValidator: its error is INVALID_CONFIG
// for a topic or a group, INVALID_REQUEST for a broker (ConfigAdminManager's
// validateBrokerConfigChange, KAFKA-13609), or the kerr code it wraps.
func (c *configurationControl) validateConfigs(res ConfigResource, configs map[string]*string) *apiError {
	if res.Type == ConfigResourceMirror {
		// The controller owns the mirror configs' definitions
		// (mirror_config.go), as CreateMirror validates them.
		return validateMirrorConfigChange(configs)
	}
	if c.cfg.ConfigValidator == nil {
		return nil
	}
	err := c.cfg.ConfigValidator(res, withoutMirrorName(res, configs))
	if err == nil {
		return nil
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return &apiError{code: ke.Code, msg: err.Error()}
	}
	if res.Type == ConfigResourceBroker {
		return &apiError{code: kerr.InvalidRequest.Code, msg: err.Error()}
	}
	return &apiError{code: kerr.InvalidConfig.Code, msg: err.Error()}
}

// checkConfigResource validates a resource's type and name and that it
// exists (ConfigAdminManager.preprocess, ControllerConfigurationValidator
// and ConfigurationControlManager's existence check): a topic must exist;
// a broker resource is the cluster default "" or the id of the node the
// request came from (origin); a group resource names a group, which need
// not exist.
func (c *configurationControl) checkConfigResource(img *Image, res ConfigResource, origin int32) *apiError {
	switch res.Type {
	case ConfigResourceTopic:
		if res.Name == "" {
			return errorf(kerr.InvalidRequest, "Default topic resources are not allowed.")
		}
		if err := ValidateTopicName(res.Name); err != nil {
			return errorf(kerr.InvalidTopicException, "%s", err.Error())
		}
		if _, ok := img.Topics[res.Name]; !ok {
			return errorf(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", res.Name)
		}
	case ConfigResourceBroker:
		if res.Name == "" {
			return nil
		}
		id, err := strconv.ParseInt(res.Name, 10, 32)
		if err != nil {
			return errorf(kerr.InvalidRequest, "Node id must be an integer, but it is: %s", res.Name)
		}
		if int32(id) != origin {
			return errorf(kerr.InvalidRequest, "Unexpected broker id, expected %d, but received %s", origin, res.Name)
		}
	case ConfigResourceMirror:
		return knownMirror(img, res.Name)
	case ConfigResourceGroup:
		// ControllerConfigurationValidator.validateGroupName; the group
		// need not exist (there is no existence check for groups).
		if res.Name == "" {
			return errorf(kerr.InvalidRequest, "Default group resources are not allowed.")
		}
	default:
		return errorf(kerr.InvalidRequest, "Unknown resource type %d", res.Type)
	}
	return nil
}

// resourceDuplicates returns the resources named more than once in a
// request ("Each resource must appear at most once.").
func resourceDuplicates(n int, at func(int) ConfigResource) map[ConfigResource]bool {
	seen := map[ConfigResource]int{}
	for i := 0; i < n; i++ {
		seen[at(i)]++
	}
	dups := map[ConfigResource]bool{}
	for r, k := range seen {
		if k > 1 {
			dups[r] = true
		}
	}
	return dups
}

func duplicateKeys(names []string) bool {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return true
		}
		seen[n] = true
	}
	return false
}

// configChangeRecords turns a resource's new values (nil deletes) into
// ConfigRecords in key order. Values equal to the current ones are left
// out for topics; broker records are always written, so brokers reload
// their dynamic configs (KAFKA-14136).
func configChangeRecords(img *Image, res ConfigResource, changes map[string]*string) []Record {
	cur := img.Configs[res]
	var out []Record
	for _, k := range slices.Sorted(maps.Keys(changes)) {
		v := changes[k]
		old, had := cur[k]
		if res.Type != ConfigResourceBroker && ((v == nil && !had) || (v != nil && had && old == *v)) {
			continue
		}
		out = append(out, &ConfigRecord{ResourceType: res.Type, ResourceName: res.Name, Name: k, Value: v})
	}
	return out
}

// afterChange is what the ConfigValidator sees: the resource's dynamic
// configs as they would be after the change (Kafka's validateAlterConfig
// passes the validator this "allConfigs" map).
func afterChange(img *Image, res ConfigResource, changes map[string]*string) map[string]*string {
	out := map[string]*string{}
	for k, v := range img.Configs[res] {
		out[k] = strp(v)
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// AlterConfigs: v0-2, the legacy API that replaces a resource's whole set
// of dynamic configs (ConfigurationControlManager.legacyAlterConfigs).
//
// Behavior:
//   - TOPIC, BROKER, GROUP and MIRROR resources (as
//     IncrementalAlterConfigs); another type is INVALID_REQUEST.
//   - A resource named twice fails both times, a key given twice or a null
//     value is INVALID_REQUEST.
//   - A missing topic is UNKNOWN_TOPIC_OR_PARTITION; a broker resource must
//     be "" (cluster default) or this node's id, else INVALID_REQUEST.
//   - Keys left out are deleted. The ConfigValidator sees the result.
//   - ValidateOnly appends nothing.
//
// Version notes:
//   - v2: flexible
func (c *configurationControl) AlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) *kmsg.AlterConfigsResponse {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	items := make([]configAlteration, len(req.Resources))
	for i, rr := range req.Resources {
		it := &items[i]
		it.res = ConfigResource{Type: ConfigResourceType(rr.ResourceType), Name: rr.ResourceName}
		for _, cfg := range rr.Configs {
			it.keys = append(it.keys, cfg.Name)
			if cfg.Value == nil {
				it.nulls = append(it.nulls, cfg.Name)
			}
		}
		// Keys left out are deleted (but mirror.name, which only the
		// mirror RPCs change).
		it.changes = func(img *Image) (map[string]*string, *apiError) {
			changes := map[string]*string{}
			for k := range img.Configs[it.res] {
				if !isMirrorName(it.res, k) {
					changes[k] = nil
				}
			}
			for _, cfg := range rr.Configs {
				changes[cfg.Name] = cfg.Value
			}
			return changes, nil
		}
	}
	errs, werr, built := c.alterConfigs(ctx, items, req.ValidateOnly)
	for i, rr := range req.Resources {
		st := kmsg.NewAlterConfigsResponseResource()
		st.ResourceType = rr.ResourceType
		st.ResourceName = rr.ResourceName
		st.ErrorCode, st.ErrorMessage = itemResult(errs[i], werr, built)
		resp.Resources = append(resp.Resources, st)
	}
	return resp
}

// configAlteration is one resource of an AlterConfigs or
// IncrementalAlterConfigs request.
type configAlteration struct {
	res ConfigResource
	// keys are the keys the request names, nulls those with a null value
	// where the operation needs one.
	keys, nulls []string
	// badOp is the first unknown incremental operation, if any.
	badOp *kmsg.IncrementalAlterConfigOp
	// changes is the new value of each key the request touches (nil:
	// delete), on the current image.
	changes func(img *Image) (map[string]*string, *apiError)
}

// alterConfigs is what AlterConfigs and IncrementalAlterConfigs share
// (ConfigurationControlManager's incrementalAlterConfigs and
// legacyAlterConfigs both end in validateAlterConfig): the checks that need
// no image, then per resource the resource check, its changes, the
// mirror.name guard and the ConfigValidator on the result, all the valid
// resources' records in one write. Failures are per resource.
func (c *configurationControl) alterConfigs(ctx context.Context, items []configAlteration, validateOnly bool) ([]*apiError, *apiError, bool) {
	origin := c.requestingNode(ctx)
	dups := resourceDuplicates(len(items), func(i int) ConfigResource { return items[i].res })
	pre := make([]*apiError, len(items))
	for i, it := range items {
		switch {
		case dups[it.res]:
			pre[i] = errorf(kerr.InvalidRequest, "Each resource must appear at most once.")
		case duplicateKeys(it.keys):
			pre[i] = errorf(kerr.InvalidRequest, "Error due to duplicate config keys")
		case len(it.nulls) > 0:
			pre[i] = errorf(kerr.InvalidRequest, "Null value not supported for : %s", strings.Join(it.nulls, ", "))
		case it.badOp != nil:
			pre[i] = errorf(kerr.InvalidRequest, "Unknown operations type %d", int8(*it.badOp))
		}
	}
	return c.writeItems(ctx, pre, validateOnly, func(img *Image, i, _ int) ([]Record, *apiError) {
		res := items[i].res
		if e := c.checkConfigResource(img, res, origin); e != nil {
			return nil, e
		}
		changes, e := items[i].changes(img)
		if e == nil {
			e = guardMirrorName(img, res, changes)
		}
		if e == nil {
			e = c.validateConfigs(res, afterChange(img, res, changes))
		}
		if e != nil {
			return nil, e
		}
		return configChangeRecords(img, res, changes), nil
	})
}

// IncrementalAlterConfigs: v0-1 (ConfigAdminManager.preprocess +
// ConfigurationControlManager.incrementalAlterConfigs).
//
// Behavior:
//   - TOPIC, BROKER and MIRROR resources (KIP-1279: a mirror's configs
//     are "set by CreateMirror and IncrementalAlterConfigs", digest
//     §5.1); another type (BROKER_LOGGER included: log levels are not
//     metadata) is INVALID_REQUEST. A MIRROR resource names an existing
//     mirror (UNKNOWN_CLUSTER_MIRROR), its LIST keys (mirror.*.include,
//     mirror.*.exclude, ...) take APPEND and SUBTRACT, and the result
//     must pass ValidateMirrorConfigs (INVALID_CONFIG).
//   - GROUP resources (Kafka's ConfigResource.Type.GROUP, KIP-848 and
//     KIP-932) name any group id but "" (INVALID_REQUEST); the group need
//     not exist. Their keys are not LIST-typed, so APPEND and SUBTRACT are
//     INVALID_CONFIG; the ConfigValidator checks keys and values against
//     the broker's group.* bounds (INVALID_CONFIG).
//   - A resource named twice fails both times; a key given twice, a null
//     value for SET/APPEND/SUBTRACT or an unknown op is INVALID_REQUEST.
//   - SET, DELETE, and for LIST keys APPEND (values not yet present) and
//     SUBTRACT, on the comma-separated value or the default when unset;
//     APPEND/SUBTRACT on another key is INVALID_CONFIG.
//   - A missing topic is UNKNOWN_TOPIC_OR_PARTITION; a broker resource must
//     be "" or this node's id, else INVALID_REQUEST. The ConfigValidator
//     sees the result. Failures are per resource: all of its keys or none.
//   - ValidateOnly appends nothing.
//
// Version notes:
//   - v1: flexible
func (c *configurationControl) IncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) *kmsg.IncrementalAlterConfigsResponse {
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	items := make([]configAlteration, len(req.Resources))
	for i, rr := range req.Resources {
		it := &items[i]
		it.res = ConfigResource{Type: ConfigResourceType(rr.ResourceType), Name: rr.ResourceName}
		for _, cfg := range rr.Configs {
			it.keys = append(it.keys, cfg.Name)
			if cfg.Op != kmsg.IncrementalAlterConfigOpDelete && cfg.Value == nil {
				it.nulls = append(it.nulls, cfg.Name)
			}
			if cfg.Op > kmsg.IncrementalAlterConfigOpSubtract && it.badOp == nil {
				op := cfg.Op
				it.badOp = &op
			}
		}
		it.changes = func(img *Image) (map[string]*string, *apiError) {
			return c.incrementalChanges(img, it.res, rr.Configs)
		}
	}
	errs, werr, built := c.alterConfigs(ctx, items, req.ValidateOnly)
	for i, rr := range req.Resources {
		st := kmsg.NewIncrementalAlterConfigsResponseResource()
		st.ResourceType = rr.ResourceType
		st.ResourceName = rr.ResourceName
		st.ErrorCode, st.ErrorMessage = itemResult(errs[i], werr, built)
		resp.Resources = append(resp.Resources, st)
	}
	return resp
}

// incrementalChanges computes the new value of each key an incremental
// alter touches (nil: delete), as incrementalAlterConfigResource does.
func (c *configurationControl) incrementalChanges(img *Image, res ConfigResource, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]*string, *apiError) {
	cur := img.Configs[res]
	changes := map[string]*string{}
	for _, op := range ops {
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			changes[op.Name] = strp(*op.Value)
		case kmsg.IncrementalAlterConfigOpDelete:
			changes[op.Name] = nil
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if !c.isListConfig(res.Type, op.Name) {
				return nil, errorf(kerr.InvalidConfig, "Can't %s to key %s because its type is not LIST.", opName(op.Op), op.Name)
			}
			base, ok := cur[op.Name]
			if !ok {
				base, _ = c.configDefault(res.Type, op.Name)
			}
			parts := splitList(base)
			for _, v := range strings.Split(*op.Value, ",") {
				if op.Op == kmsg.IncrementalAlterConfigOpAppend {
					if !slices.Contains(parts, v) {
						parts = append(parts, v)
					}
				} else {
					parts = slices.DeleteFunc(parts, func(p string) bool { return p == v })
				}
			}
			changes[op.Name] = strp(strings.Join(parts, ","))
		default:
			return nil, errorf(kerr.InvalidRequest, "Unknown operations type %d", int8(op.Op))
		}
	}
	return changes, nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func opName(op kmsg.IncrementalAlterConfigOp) string {
	switch op {
	case kmsg.IncrementalAlterConfigOpAppend:
		return "APPEND"
	case kmsg.IncrementalAlterConfigOpSubtract:
		return "SUBTRACT"
	}
	return fmt.Sprint(int8(op))
}

// itemResult is the error code and message of one item of a request
// whose valid items went into one write: its own error, else the write's
// when the write failed or never ran (built false: not the controller).
func itemResult(own, write *apiError, built bool) (int16, *string) {
	if own == nil && (write != nil || !built) {
		own = write
	}
	if own == nil {
		return 0, nil
	}
	return own.code, own.message()
}

func writeError(err error) *apiError {
	if err == nil {
		return nil
	}
	code, msg := writeErrorCode(err)
	return &apiError{code: code, msg: msg}
}
