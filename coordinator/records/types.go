package records

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kbin"
)

// RecordType is the int16 that starts a __consumer_offsets record key:
// Kafka's CoordinatorRecordType, the "apiKey" of the key's JSON schema.
type RecordType int16

// Kafka's record types. 0-2 are the classic group's (kmsg decodes them);
// 17-23 are streams groups' (KIP-1071), which this package does not hold.
const (
	TypeLegacyOffsetCommit                    RecordType = 0
	TypeOffsetCommit                          RecordType = 1
	TypeGroupMetadata                         RecordType = 2
	TypeConsumerGroupMetadata                 RecordType = 3
	TypeConsumerGroupPartitionMetadata        RecordType = 4
	TypeConsumerGroupMemberMetadata           RecordType = 5
	TypeConsumerGroupTargetAssignmentMetadata RecordType = 6
	TypeConsumerGroupTargetAssignmentMember   RecordType = 7
	TypeConsumerGroupCurrentMemberAssignment  RecordType = 8
	// TypeShareGroupPartitionMetadata was written by Kafka 4.0 (share
	// groups in preview) only; 4.1 dropped the schema and skips the type
	// when loading.
	TypeShareGroupPartitionMetadata        RecordType = 9
	TypeShareGroupMemberMetadata           RecordType = 10
	TypeShareGroupMetadata                 RecordType = 11
	TypeShareGroupTargetAssignmentMetadata RecordType = 12
	TypeShareGroupTargetAssignmentMember   RecordType = 13
	TypeShareGroupCurrentMemberAssignment  RecordType = 14
	TypeShareGroupStatePartitionMetadata   RecordType = 15
	TypeConsumerGroupRegularExpression     RecordType = 16
)

// ValueVersion is the only value version of every record here
// (validVersions "0"), the one Kafka writes.
const ValueVersion int16 = 0

var (
	// ErrUnknownRecordType is a key whose record type this package does
	// not decode: Kafka's loader skips such a record with a warning
	// (UnknownRecordTypeException).
	ErrUnknownRecordType = errors.New("unknown record type")
	// ErrUnknownValueVersion is a value version outside the schema's
	// validVersions: Kafka's loader fails the load on it
	// (UnknownRecordVersionException).
	ErrUnknownValueVersion = errors.New("unknown value version")
)

// keyShape is which strings follow the record type in a key.
type keyShape int8

const (
	groupKeyed  keyShape = iota + 1 // GroupId
	memberKeyed                     // GroupId, MemberId
	regexKeyed                      // GroupId, RegularExpression
)

// types holds the name and key shape of every type this package decodes,
// and the names of the others for messages.
var types = map[RecordType]struct {
	name  string
	shape keyShape // 0: not decoded here
}{
	TypeLegacyOffsetCommit:                    {"LegacyOffsetCommit", 0},
	TypeOffsetCommit:                          {"OffsetCommit", 0},
	TypeGroupMetadata:                         {"GroupMetadata", 0},
	TypeConsumerGroupMetadata:                 {"ConsumerGroupMetadata", groupKeyed},
	TypeConsumerGroupPartitionMetadata:        {"ConsumerGroupPartitionMetadata", groupKeyed},
	TypeConsumerGroupMemberMetadata:           {"ConsumerGroupMemberMetadata", memberKeyed},
	TypeConsumerGroupTargetAssignmentMetadata: {"ConsumerGroupTargetAssignmentMetadata", groupKeyed},
	TypeConsumerGroupTargetAssignmentMember:   {"ConsumerGroupTargetAssignmentMember", memberKeyed},
	TypeConsumerGroupCurrentMemberAssignment:  {"ConsumerGroupCurrentMemberAssignment", memberKeyed},
	TypeShareGroupPartitionMetadata:           {"ShareGroupPartitionMetadata", groupKeyed},
	TypeShareGroupMemberMetadata:              {"ShareGroupMemberMetadata", memberKeyed},
	TypeShareGroupMetadata:                    {"ShareGroupMetadata", groupKeyed},
	TypeShareGroupTargetAssignmentMetadata:    {"ShareGroupTargetAssignmentMetadata", groupKeyed},
	TypeShareGroupTargetAssignmentMember:      {"ShareGroupTargetAssignmentMember", memberKeyed},
	TypeShareGroupCurrentMemberAssignment:     {"ShareGroupCurrentMemberAssignment", memberKeyed},
	TypeShareGroupStatePartitionMetadata:      {"ShareGroupStatePartitionMetadata", groupKeyed},
	TypeConsumerGroupRegularExpression:        {"ConsumerGroupRegularExpression", regexKeyed},
	17:                                        {"StreamsGroupMetadata", 0},
	19:                                        {"StreamsGroupMemberMetadata", 0},
	20:                                        {"StreamsGroupTargetAssignmentMetadata", 0},
	21:                                        {"StreamsGroupTargetAssignmentMember", 0},
	22:                                        {"StreamsGroupCurrentMemberAssignment", 0},
	23:                                        {"StreamsGroupTopology", 0},
}

// String is Kafka's name of the record type, or its number.
func (t RecordType) String() string {
	if ty, ok := types[t]; ok {
		return ty.name
	}
	return strconv.Itoa(int(t))
}

// KeyType returns the record type a __consumer_offsets key starts with,
// for a loader to dispatch on: 0-2 to kmsg, the types of this package
// (Decodes) to Key and NewValue, and any other skipped as Kafka does.
func KeyType(key []byte) (RecordType, error) {
	if len(key) < 2 {
		return 0, fmt.Errorf("record key of %d bytes has no record type: %w", len(key), errTruncated)
	}
	return RecordType(int16(uint16(key[0])<<8 | uint16(key[1]))), nil
}

// Decodes reports whether this package decodes records of type t.
func (t RecordType) Decodes() bool { return types[t].shape != 0 }

// Key is the key of any record type of this package: its record type and
// the strings that type's key schema has (GroupId always; MemberId or
// RegularExpression for some). The constructors below name each type's
// key after Kafka's schema.
type Key struct {
	Type              RecordType
	GroupID           string
	MemberID          string // member-keyed types only
	RegularExpression string // TypeConsumerGroupRegularExpression only
}

// AppendTo appends the key: the record type, then the key message at
// version 0 (non-flexible strings).
func (k *Key) AppendTo(dst []byte) []byte {
	dst = kbin.AppendInt16(dst, int16(k.Type))
	dst = kbin.AppendString(dst, k.GroupID)
	switch types[k.Type].shape {
	case memberKeyed:
		dst = kbin.AppendString(dst, k.MemberID)
	case regexKeyed:
		dst = kbin.AppendString(dst, k.RegularExpression)
	}
	return dst
}

// ReadFrom decodes a key; a type this package does not decode is
// ErrUnknownRecordType.
func (k *Key) ReadFrom(b []byte) error {
	t, err := KeyType(b)
	if err != nil {
		return err
	}
	shape := types[t].shape
	if shape == 0 {
		return fmt.Errorf("%w %d (%s)", ErrUnknownRecordType, t, t)
	}
	*k = Key{Type: t}
	r := kbin.Reader{Src: b[2:]}
	k.GroupID = readKeyString(&r)
	switch shape {
	case memberKeyed:
		k.MemberID = readKeyString(&r)
	case regexKeyed:
		k.RegularExpression = readKeyString(&r)
	}
	switch {
	case !r.Ok():
		return fmt.Errorf("%s key: %w", t, errTruncated)
	case len(r.Src) != 0:
		return fmt.Errorf("%s key: %d bytes left after the last field", t, len(r.Src))
	}
	return nil
}

// readKeyString reads a non-flexible, non-nullable key string; a null
// invalidates r, as Kafka throws on it.
func readKeyString(r *kbin.Reader) string {
	n := r.Int16()
	return string(r.Span(int(n)))
}

// The keys of each record type, named after Kafka's *Key schemas.

func ConsumerGroupMetadataKey(group string) Key {
	return Key{Type: TypeConsumerGroupMetadata, GroupID: group}
}

func ConsumerGroupPartitionMetadataKey(group string) Key {
	return Key{Type: TypeConsumerGroupPartitionMetadata, GroupID: group}
}

func ConsumerGroupMemberMetadataKey(group, member string) Key {
	return Key{Type: TypeConsumerGroupMemberMetadata, GroupID: group, MemberID: member}
}

func ConsumerGroupTargetAssignmentMetadataKey(group string) Key {
	return Key{Type: TypeConsumerGroupTargetAssignmentMetadata, GroupID: group}
}

func ConsumerGroupTargetAssignmentMemberKey(group, member string) Key {
	return Key{Type: TypeConsumerGroupTargetAssignmentMember, GroupID: group, MemberID: member}
}

func ConsumerGroupCurrentMemberAssignmentKey(group, member string) Key {
	return Key{Type: TypeConsumerGroupCurrentMemberAssignment, GroupID: group, MemberID: member}
}

func ConsumerGroupRegularExpressionKey(group, regex string) Key {
	return Key{Type: TypeConsumerGroupRegularExpression, GroupID: group, RegularExpression: regex}
}

func ShareGroupPartitionMetadataKey(group string) Key {
	return Key{Type: TypeShareGroupPartitionMetadata, GroupID: group}
}

func ShareGroupMemberMetadataKey(group, member string) Key {
	return Key{Type: TypeShareGroupMemberMetadata, GroupID: group, MemberID: member}
}

func ShareGroupMetadataKey(group string) Key {
	return Key{Type: TypeShareGroupMetadata, GroupID: group}
}

func ShareGroupTargetAssignmentMetadataKey(group string) Key {
	return Key{Type: TypeShareGroupTargetAssignmentMetadata, GroupID: group}
}

func ShareGroupTargetAssignmentMemberKey(group, member string) Key {
	return Key{Type: TypeShareGroupTargetAssignmentMember, GroupID: group, MemberID: member}
}

func ShareGroupCurrentMemberAssignmentKey(group, member string) Key {
	return Key{Type: TypeShareGroupCurrentMemberAssignment, GroupID: group, MemberID: member}
}

func ShareGroupStatePartitionMetadataKey(group string) Key {
	return Key{Type: TypeShareGroupStatePartitionMetadata, GroupID: group}
}

// Value is the value of a record type of this package.
type Value interface {
	// AppendTo appends the value version, then the value message.
	AppendTo(dst []byte) []byte
	// ReadFrom decodes a value (not a tombstone: that is a nil record
	// value, the caller's to see).
	ReadFrom(b []byte) error
}

// NewValue returns an empty value of type t, with Kafka's defaults, to
// decode into; a type this package does not decode is
// ErrUnknownRecordType.
func NewValue(t RecordType) (Value, error) {
	switch t {
	case TypeConsumerGroupMetadata:
		v := NewConsumerGroupMetadataValue()
		return &v, nil
	case TypeConsumerGroupPartitionMetadata:
		return new(ConsumerGroupPartitionMetadataValue), nil
	case TypeConsumerGroupMemberMetadata:
		v := NewConsumerGroupMemberMetadataValue()
		return &v, nil
	case TypeConsumerGroupTargetAssignmentMetadata:
		return new(ConsumerGroupTargetAssignmentMetadataValue), nil
	case TypeConsumerGroupTargetAssignmentMember:
		return new(ConsumerGroupTargetAssignmentMemberValue), nil
	case TypeConsumerGroupCurrentMemberAssignment:
		return new(ConsumerGroupCurrentMemberAssignmentValue), nil
	case TypeConsumerGroupRegularExpression:
		return new(ConsumerGroupRegularExpressionValue), nil
	case TypeShareGroupPartitionMetadata:
		return new(ShareGroupPartitionMetadataValue), nil
	case TypeShareGroupMemberMetadata:
		return new(ShareGroupMemberMetadataValue), nil
	case TypeShareGroupMetadata:
		return new(ShareGroupMetadataValue), nil
	case TypeShareGroupTargetAssignmentMetadata:
		return new(ShareGroupTargetAssignmentMetadataValue), nil
	case TypeShareGroupTargetAssignmentMember:
		return new(ShareGroupTargetAssignmentMemberValue), nil
	case TypeShareGroupCurrentMemberAssignment:
		return new(ShareGroupCurrentMemberAssignmentValue), nil
	case TypeShareGroupStatePartitionMetadata:
		return new(ShareGroupStatePartitionMetadataValue), nil
	}
	return nil, fmt.Errorf("%w %d (%s)", ErrUnknownRecordType, t, t)
}

// appendValue frames a value: the version, then the message body writes.
func appendValue(dst []byte, body func([]byte) []byte) []byte {
	return body(kbin.AppendInt16(dst, ValueVersion))
}

// readValue checks the value version and decodes the message with body;
// name says which record in errors.
func readValue(b []byte, name string, body func(*decoder)) error {
	d := &decoder{r: kbin.Reader{Src: b}}
	version := d.int16()
	if !d.r.Ok() {
		return fmt.Errorf("%s: value of %d bytes has no version: %w", name, len(b), errTruncated)
	}
	if version != ValueVersion {
		return fmt.Errorf("%s: %w %d", name, ErrUnknownValueVersion, version)
	}
	body(d)
	if err := d.finish(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
