package raftmeta

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Client quotas (KIP-13, KIP-55, KIP-546), as KRaft keeps them: one
// ClientQuotaRecord per key of an entity, replayed into a map of entity to
// key to value (Kafka's ClientQuotasImage).

// The quota entity types (ClientQuotaEntity.USER, CLIENT_ID, IP).
const (
	QuotaEntityUser     = "user"
	QuotaEntityClientID = "client-id"
	QuotaEntityIP       = "ip"
)

// The quota keys (QuotaConfig). The byte rates are bytes per second, the
// request percentage a share of one thread's time per quota window
// (KIP-124), the mutation rate partitions created or deleted per second
// (KIP-599), the connection creation rate connections per second (KIP-612).
const (
	QuotaProducerByteRate       = "producer_byte_rate"
	QuotaConsumerByteRate       = "consumer_byte_rate"
	QuotaRequestPercentage      = "request_percentage"
	QuotaControllerMutationRate = "controller_mutation_rate"
	QuotaConnectionCreationRate = "connection_creation_rate"
)

// QuotaEntityName is one component of a quota entity: absent, the default
// of its type (a null name, shown as <default>), or a name.
type QuotaEntityName struct {
	Set     bool
	Default bool
	Name    string
}

// Named is a component with a name; DefaultName the <default> component.
func Named(name string) QuotaEntityName { return QuotaEntityName{Set: true, Name: name} }

// DefaultName is the <default> component.
func DefaultName() QuotaEntityName { return QuotaEntityName{Set: true, Default: true} }

// ptr is the component's name as the protocol carries it: nil for the
// default. Only for a component that is set.
func (n QuotaEntityName) ptr() *string {
	if n.Default {
		return nil
	}
	s := n.Name
	return &s
}

// QuotaEntity is what a quota applies to (Kafka's ClientQuotaEntity): a
// user, a client id, both, or an IP address, each named or the default.
// It is comparable, so it keys the image's map.
type QuotaEntity struct {
	User, ClientID, IP QuotaEntityName
}

// QuotaEntityComponent is one (type, name) pair of a quota entity as the
// record and the protocol carry it; a nil name is the default.
type QuotaEntityComponent struct {
	Type string
	Name *string
}

// ParseQuotaEntity builds an entity from its components, failing on an
// empty list, an unknown type, a type given twice or an empty name (the
// checks of ClientQuotaControlManager.validateEntity).
func ParseQuotaEntity(components []QuotaEntityComponent) (QuotaEntity, error) {
	var e QuotaEntity
	if len(components) == 0 {
		return e, fmt.Errorf("Invalid empty client quota entity")
	}
	for _, c := range components {
		var f *QuotaEntityName
		switch c.Type {
		case QuotaEntityUser:
			f = &e.User
		case QuotaEntityClientID:
			f = &e.ClientID
		case QuotaEntityIP:
			f = &e.IP
		default:
			return e, &unknownQuotaEntityTypeError{c.Type}
		}
		if f.Set {
			return e, fmt.Errorf("Invalid empty client quota entity, duplicate entity entry %s", c.Type)
		}
		if c.Name != nil && *c.Name == "" {
			return e, fmt.Errorf("Empty %s not supported", c.Type)
		}
		*f = QuotaEntityName{Set: true, Default: c.Name == nil}
		if c.Name != nil {
			f.Name = *c.Name
		}
	}
	return e, nil
}

// unknownQuotaEntityTypeError is an entity type Kafka does not know; Kafka
// answers it UNSUPPORTED_VERSION, not INVALID_REQUEST.
type unknownQuotaEntityTypeError struct{ typ string }

func (e *unknownQuotaEntityTypeError) Error() string {
	return "Unhandled client quota entity type: " + e.typ
}

// Components lists the entity's components in type order (user,
// client-id, ip).
func (e QuotaEntity) Components() []QuotaEntityComponent {
	var out []QuotaEntityComponent
	for _, c := range []struct {
		typ string
		n   QuotaEntityName
	}{{QuotaEntityUser, e.User}, {QuotaEntityClientID, e.ClientID}, {QuotaEntityIP, e.IP}} {
		if c.n.Set {
			out = append(out, QuotaEntityComponent{Type: c.typ, Name: c.n.ptr()})
		}
	}
	return out
}

// String is the entity as Kafka's config paths name it, e.g.
// users/alice/clients/<default>.
func (e QuotaEntity) String() string {
	name := func(n QuotaEntityName) string {
		if n.Default {
			return "<default>"
		}
		return n.Name
	}
	var s string
	if e.User.Set {
		s = "users/" + name(e.User)
	}
	if e.ClientID.Set {
		if s != "" {
			s += "/"
		}
		s += "clients/" + name(e.ClientID)
	}
	if e.IP.Set {
		s = "ips/" + name(e.IP)
	}
	return s
}

func compareQuotaNames(a, b QuotaEntityName) int {
	return cmp.Or(cmp.Compare(boolInt(a.Set), boolInt(b.Set)), cmp.Compare(boolInt(!a.Default), boolInt(!b.Default)), cmp.Compare(a.Name, b.Name))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CompareQuotaEntities orders entities by user, client id and IP, the
// defaults before the names, so listings are stable.
func CompareQuotaEntities(a, b QuotaEntity) int {
	return cmp.Or(compareQuotaNames(a.User, b.User), compareQuotaNames(a.ClientID, b.ClientID), compareQuotaNames(a.IP, b.IP))
}

// ClientQuotaRecord sets or removes one quota key of an entity (Kafka's
// record of the same name, apiKey 14).
type ClientQuotaRecord struct {
	Entity []QuotaEntityComponent
	Key    string
	Value  float64
	Remove bool
}

func (*ClientQuotaRecord) Type() RecordType { return ClientQuotaRecordType }
func (*ClientQuotaRecord) Version() int8    { return 0 }

func (r *ClientQuotaRecord) appendTo(b []byte) []byte {
	b = appendInt(b, int64(len(r.Entity)))
	for _, c := range r.Entity {
		b = appendString(b, c.Type)
		b = appendNullableString(b, c.Name)
	}
	b = appendString(b, r.Key)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(r.Value))
	return appendBool(b, r.Remove)
}

func decodeClientQuotaRecord(d *decoder) Record {
	n := d.varint()
	// A component takes at least two bytes.
	if n < 0 || n > int64(len(d.b))/2 {
		d.fail("quota entity component count %d", n)
		return nil
	}
	r := &ClientQuotaRecord{}
	for range n {
		r.Entity = append(r.Entity, QuotaEntityComponent{Type: d.string(), Name: d.nullableString()})
	}
	r.Key = d.string()
	if v := d.bytes(8); len(v) == 8 {
		r.Value = math.Float64frombits(binary.BigEndian.Uint64(v))
	}
	r.Remove = d.bool()
	return r
}

// --- replay (ClientQuotaControlManager.replay) ---

func (b *builder) putClientQuota(r *ClientQuotaRecord) error {
	e, err := ParseQuotaEntity(r.Entity)
	if err != nil {
		return fmt.Errorf("client quota record: %w", err)
	}
	if r.Key == "" {
		return fmt.Errorf("client quota record of %s without a key", e)
	}
	if !b.quotasCopied {
		b.next.ClientQuotas = maps.Clone(b.next.ClientQuotas)
		if b.next.ClientQuotas == nil {
			b.next.ClientQuotas = map[QuotaEntity]map[string]float64{}
		}
		b.quotasCopied = true
	}
	values := maps.Clone(b.next.ClientQuotas[e])
	if values == nil {
		values = map[string]float64{}
	}
	if r.Remove {
		delete(values, r.Key)
	} else {
		values[r.Key] = r.Value
	}
	if len(values) == 0 {
		delete(b.next.ClientQuotas, e)
	} else {
		b.next.ClientQuotas[e] = values
	}
	b.quotasChanged = true
	return nil
}

// appendClientQuotaRecords appends a ClientQuotaRecord per entity and key.
func appendClientQuotaRecords(out []Record, img *Image) []Record {
	for _, e := range slices.SortedFunc(maps.Keys(img.ClientQuotas), CompareQuotaEntities) {
		values := img.ClientQuotas[e]
		for _, k := range slices.Sorted(maps.Keys(values)) {
			out = append(out, &ClientQuotaRecord{Entity: e.Components(), Key: k, Value: values[k]})
		}
	}
	return out
}

func clientQuotasDiffer(prev, next *Image) bool {
	return !maps.EqualFunc(prev.ClientQuotas, next.ClientQuotas, maps.Equal)
}

// --- lookup (KIP-55's precedence, Kafka's DefaultQuotaCallback) ---

// ClientQuota is the quota key that applies to a client, and the entity
// whose value it is.
type ClientQuota struct {
	Value float64
	// Entity is the entity that holds the value; User and ClientID are
	// the names the client's usage is measured under (Kafka's quota
	// metric tags): the user's and client's own names where the entity
	// names them or holds their default, "" where it has no such
	// component. Clients with the same user and client tags share one
	// budget.
	Entity       QuotaEntity
	User, Client string
}

// ClientQuota finds the value of key for a client with this user (the
// principal's name) and client id, in KIP-55's order of precedence:
//
//	/config/users/<user>/clients/<client-id>
//	/config/users/<user>/clients/<default>
//	/config/users/<user>
//	/config/users/<default>/clients/<client-id>
//	/config/users/<default>/clients/<default>
//	/config/users/<default>
//	/config/clients/<client-id>
//	/config/clients/<default>
//
// ok is false when none of them sets the key: the client is unlimited.
func (img *Image) ClientQuota(user, clientID, key string) (q ClientQuota, ok bool) {
	if len(img.ClientQuotas) == 0 {
		return q, false
	}
	none := QuotaEntityName{}
	levels := []struct {
		user, client QuotaEntityName
	}{
		{Named(user), Named(clientID)},
		{Named(user), DefaultName()},
		{Named(user), none},
		{DefaultName(), Named(clientID)},
		{DefaultName(), DefaultName()},
		{DefaultName(), none},
		{none, Named(clientID)},
		{none, DefaultName()},
	}
	for _, l := range levels {
		e := QuotaEntity{User: l.user, ClientID: l.client}
		v, found := img.ClientQuotas[e][key]
		if !found {
			continue
		}
		q = ClientQuota{Value: v, Entity: e}
		if l.user.Set {
			q.User = user
		}
		if l.client.Set {
			q.Client = clientID
		}
		return q, true
	}
	return q, false
}
