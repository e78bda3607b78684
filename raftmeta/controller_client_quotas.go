package raftmeta

import (
	"context"
	"errors"
	"maps"
	"math"
	"net/netip"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// clientQuotaControl is ClientQuotaControlManager: the client quotas.
type clientQuotaControl struct{ *Controller }

// AlterClientQuotas is clientQuotaControl.AlterClientQuotas.
func (c *Controller) AlterClientQuotas(ctx context.Context, req *kmsg.AlterClientQuotasRequest) *kmsg.AlterClientQuotasResponse {
	return c.quotas.AlterClientQuotas(ctx, req)
}

// DescribeClientQuotas is clientQuotaControl.DescribeClientQuotas.
func (c *Controller) DescribeClientQuotas(ctx context.Context, req *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse {
	return c.quotas.DescribeClientQuotas(ctx, req)
}

// quotaKeyKind is the type Kafka's QuotaConfig gives a key: an integral
// one (LONG, INT) must be a whole number.
type quotaKeyKind int

const (
	quotaDouble quotaKeyKind = iota
	quotaLong
	quotaInt
)

// clientQuotaKeys are the keys of user and client-id entities
// (QuotaConfig.userAndClientQuotaConfigs), ipQuotaKeys those of ip ones
// (QuotaConfig.ipConfigs).
var (
	clientQuotaKeys = map[string]quotaKeyKind{
		QuotaProducerByteRate:       quotaLong,
		QuotaConsumerByteRate:       quotaLong,
		QuotaRequestPercentage:      quotaDouble,
		QuotaControllerMutationRate: quotaDouble,
	}
	ipQuotaKeys = map[string]quotaKeyKind{
		QuotaConnectionCreationRate: quotaInt,
	}
)

// AlterClientQuotas: v0-v1 (ClientQuotaControlManager.alterClientQuotas).
//
// Behavior:
//   - Each entry is checked on its own and gets its own result: an empty
//     entity, a type named twice, an empty name, ip combined with user or
//     client-id, an ip that is not an address, a key given twice, a key the
//     entity type does not have, a value of 0 or less, or a fractional
//     value of an integral key is INVALID_REQUEST; an unknown entity type
//     UNSUPPORTED_VERSION. Its alterations then do not happen.
//   - A value equal to the stored one, and the removal of a key that is not
//     set, append nothing. The valid entries are one atomic batch.
//   - ValidateOnly checks everything and appends nothing.
func (c *clientQuotaControl) AlterClientQuotas(ctx context.Context, req *kmsg.AlterClientQuotasRequest) *kmsg.AlterClientQuotasResponse {
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	type alteration struct {
		entity QuotaEntity
		ops    map[string]*float64 // nil: remove
		order  []string
	}
	alts := make([]*alteration, len(req.Entries))
	errs := make([]*apiError, len(req.Entries))
	for i, entry := range req.Entries {
		entity, err := AlteredQuotaEntity(entry)
		if err != nil {
			errs[i] = quotaEntityError(err)
			continue
		}
		keys, kerrv := quotaKeysFor(entity)
		if kerrv != nil {
			errs[i] = kerrv
			continue
		}
		a := &alteration{entity: entity, ops: map[string]*float64{}}
		for _, op := range entry.Ops {
			if _, dup := a.ops[op.Key]; dup {
				errs[i] = errorf(kerr.InvalidRequest, "Duplicate quota key %s not updating quota for this entity %s", op.Key, entity)
				break
			}
			a.order = append(a.order, op.Key)
			if op.Remove {
				a.ops[op.Key] = nil
				continue
			}
			if e := validateQuotaValue(keys, op.Key, op.Value); e != nil {
				errs[i] = e
				break
			}
			v := op.Value
			a.ops[op.Key] = &v
		}
		if errs[i] == nil {
			alts[i] = a
		}
	}
	built := false
	err := c.write(ctx, func(img *Image) []Record {
		built = true
		var records []Record
		for _, a := range alts {
			if a == nil {
				continue
			}
			current := img.ClientQuotas[a.entity]
			for _, k := range a.order {
				v := a.ops[k]
				old, set := current[k]
				switch {
				case v == nil && set:
					records = append(records, &ClientQuotaRecord{Entity: a.entity.Components(), Key: k, Remove: true})
				case v != nil && (!set || old != *v):
					records = append(records, &ClientQuotaRecord{Entity: a.entity.Components(), Key: k, Value: *v})
				}
			}
		}
		if req.ValidateOnly {
			return nil
		}
		return records
	})
	werr := writeError(err)
	for i, entry := range req.Entries {
		r := kmsg.NewAlterClientQuotasResponseEntry()
		for _, e := range entry.Entity {
			re := kmsg.NewAlterClientQuotasResponseEntryEntity()
			re.Type, re.Name = e.Type, e.Name
			r.Entity = append(r.Entity, re)
		}
		r.ErrorCode, r.ErrorMessage = itemResult(errs[i], werr, built)
		resp.Entries = append(resp.Entries, r)
	}
	return resp
}

// AlteredQuotaEntity is the entity an AlterClientQuotas entry names
// (ParseQuotaEntity).
func AlteredQuotaEntity(entry kmsg.AlterClientQuotasRequestEntry) (QuotaEntity, error) {
	comps := make([]QuotaEntityComponent, 0, len(entry.Entity))
	for _, e := range entry.Entity {
		comps = append(comps, QuotaEntityComponent{Type: e.Type, Name: e.Name})
	}
	return ParseQuotaEntity(comps)
}

// quotaEntityError is the answer to an entity ParseQuotaEntity refused.
func quotaEntityError(err error) *apiError {
	var unknown *unknownQuotaEntityTypeError
	if errors.As(err, &unknown) {
		return errorf(kerr.UnsupportedVersion, "%s", err.Error())
	}
	return errorf(kerr.InvalidRequest, "%s", err.Error())
}

// quotaKeysFor is ClientQuotaControlManager.configKeysForEntityType: the
// keys an entity may have, by the combination of its types.
func quotaKeysFor(e QuotaEntity) (map[string]quotaKeyKind, *apiError) {
	if e.IP.Set {
		if e.User.Set || e.ClientID.Set {
			return nil, errorf(kerr.InvalidRequest, "Invalid quota entity combination, IP entity should not be combined with User or ClientId")
		}
		if !e.IP.Default {
			if _, err := netip.ParseAddr(e.IP.Name); err != nil {
				return nil, errorf(kerr.InvalidRequest, "%s is not a valid IP or resolvable host.", e.IP.Name)
			}
		}
		return ipQuotaKeys, nil
	}
	return clientQuotaKeys, nil
}

// validateQuotaValue is ClientQuotaControlManager.validateQuotaKeyValue.
func validateQuotaValue(keys map[string]quotaKeyKind, key string, value float64) *apiError {
	kind, ok := keys[key]
	if !ok {
		return errorf(kerr.InvalidRequest, "Invalid configuration key %s", key)
	}
	if !(value > 0) || math.IsInf(value, 0) {
		return errorf(kerr.InvalidRequest, "Quota %s must be greater than 0", key)
	}
	switch kind {
	case quotaLong:
		if value > math.MaxInt64 {
			return errorf(kerr.InvalidRequest, "Proposed value for %s is too large for a LONG.", key)
		}
	case quotaInt:
		if value > math.MaxInt32 {
			return errorf(kerr.InvalidRequest, "Proposed value for %s is too large for an INT.", key)
		}
	default:
		return nil
	}
	if math.Abs(math.Mod(value, 1)) > 1e-6 {
		return errorf(kerr.InvalidRequest, "Value for %s must be an integer", key)
	}
	return nil
}

// DescribeClientQuotas: v0-v1, answered from this node's image as Kafka's
// brokers answer from their metadata cache (ClientQuotasImage.describe).
//
// Behavior:
//   - A filter component of an empty type, a type given twice, EXACT
//     without a name, DEFAULT or SPECIFIED with one, or ip combined with
//     user or client-id is INVALID_REQUEST; an unknown type or match type
//     UNSUPPORTED_VERSION: in the response's ErrorCode, with no entries.
//   - EXACT matches the named entity, DEFAULT the <default> one, SPECIFIED
//     any entity with a component of the type, default or named (as
//     KRaft's image does). Strict matches only entities with no other
//     component than the filter's.
//   - Entries are sorted by entity, values by key.
func (c *clientQuotaControl) DescribeClientQuotas(_ context.Context, req *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse {
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	filter, e := parseQuotaFilter(req.Components)
	if e != nil {
		resp.ErrorCode, resp.ErrorMessage = e.code, e.message()
		return resp
	}
	img := c.log.Image()
	for _, entity := range slices.SortedFunc(maps.Keys(img.ClientQuotas), CompareQuotaEntities) {
		if !filter.matches(entity, req.Strict) {
			continue
		}
		values := img.ClientQuotas[entity]
		entry := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, comp := range entity.Components() {
			ee := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ee.Type, ee.Name = comp.Type, comp.Name
			entry.Entity = append(entry.Entity, ee)
		}
		for _, k := range slices.Sorted(maps.Keys(values)) {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, values[k]
			entry.Values = append(entry.Values, v)
		}
		resp.Entries = append(resp.Entries, entry)
	}
	return resp
}

// quotaFilter is a DescribeClientQuotas filter by entity type: a name
// (exact), nil for the default, or specified (any component of the type).
type quotaFilter map[string]quotaMatch

type quotaMatch struct {
	specified bool
	name      *string // nil with !specified: the default
}

func parseQuotaFilter(components []kmsg.DescribeClientQuotasRequestComponent) (quotaFilter, *apiError) {
	f := quotaFilter{}
	for _, c := range components {
		if c.EntityType == "" {
			return nil, errorf(kerr.InvalidRequest, "Invalid empty entity type.")
		}
		if _, dup := f[c.EntityType]; dup {
			return nil, errorf(kerr.InvalidRequest, "Entity type %s cannot appear more than once in the filter.", c.EntityType)
		}
		switch c.EntityType {
		case QuotaEntityUser, QuotaEntityClientID, QuotaEntityIP:
		default:
			return nil, errorf(kerr.UnsupportedVersion, "Unsupported entity type %s", c.EntityType)
		}
		switch c.MatchType {
		case 0: // MATCH_TYPE_EXACT
			if c.Match == nil {
				return nil, errorf(kerr.InvalidRequest, "Request specified MATCH_TYPE_EXACT, but set match string to null.")
			}
			f[c.EntityType] = quotaMatch{name: c.Match}
		case 1: // MATCH_TYPE_DEFAULT
			if c.Match != nil {
				return nil, errorf(kerr.InvalidRequest, "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
			}
			f[c.EntityType] = quotaMatch{}
		case 2: // MATCH_TYPE_SPECIFIED
			if c.Match != nil {
				return nil, errorf(kerr.InvalidRequest, "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
			}
			f[c.EntityType] = quotaMatch{specified: true}
		default:
			return nil, errorf(kerr.UnsupportedVersion, "Unknown match type %d", c.MatchType)
		}
	}
	_, ip := f[QuotaEntityIP]
	_, user := f[QuotaEntityUser]
	_, client := f[QuotaEntityClientID]
	if ip && (user || client) {
		return nil, errorf(kerr.InvalidRequest, "Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.")
	}
	return f, nil
}

func (f quotaFilter) matches(e QuotaEntity, strict bool) bool {
	comps := e.Components()
	if strict && len(comps) != len(f) {
		return false
	}
	for typ, m := range f {
		i := slices.IndexFunc(comps, func(c QuotaEntityComponent) bool { return c.Type == typ })
		if i < 0 {
			return false
		}
		name := comps[i].Name
		switch {
		case m.specified:
			// Any entity with a component of the type, its default too,
			// as KRaft's ClientQuotasImage matches (KIP-546 speaks of
			// specified names; the ZooKeeper-era broker skipped defaults).
		case m.name == nil:
			if name != nil {
				return false
			}
		default:
			if name == nil || *name != *m.name {
				return false
			}
		}
	}
	return true
}
