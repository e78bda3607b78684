package coordinator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The byte layout of the consumer group records (Kafka 4.x message
// schemas ConsumerGroup*Key/Value): a key is its record type (int16) and
// non-flexible strings; a value is version 0 (int16) of a flexible
// schema: compact strings and arrays, a tagged-field section per struct.
// This codec is local until package coordinator/records provides the
// shared one.

const cgValueVersion int16 = 0

func encodeCGRecord(r cgRecord) coordRecord {
	if r.typ == cgRecordClassicGroup {
		return newGroupMetadataTombstone(r.group)
	}
	key := binary.BigEndian.AppendUint16(nil, uint16(r.typ))
	key = appendKeyString(key, r.group)
	switch r.typ {
	case cgRecordMemberMetadata, cgRecordTargetAssignmentMember, cgRecordCurrentAssignment:
		key = appendKeyString(key, r.member)
	case cgRecordRegularExpression:
		key = appendKeyString(key, r.regex)
	}
	if r.tombstone {
		return coordRecord{key: key}
	}
	v := binary.BigEndian.AppendUint16(nil, uint16(cgValueVersion))
	switch r.typ {
	case cgRecordGroupMetadata:
		v = binary.BigEndian.AppendUint32(v, uint32(r.epoch))
		if r.metadataHash != 0 {
			// MetadataHash is tagged field 0 (KIP-1101), written only
			// when it is not its default.
			v = binary.AppendUvarint(v, 1)
			v = binary.AppendUvarint(v, 0)
			v = binary.AppendUvarint(v, 8)
			v = binary.BigEndian.AppendUint64(v, uint64(r.metadataHash))
			return coordRecord{key: key, value: v}
		}
	case cgRecordMemberMetadata:
		m := &r.subscription
		v = appendCompactNullableString(v, m.instanceID)
		v = appendCompactNullableString(v, m.rackID)
		v = appendCompactString(v, m.clientID)
		v = appendCompactString(v, m.clientHost)
		v = binary.AppendUvarint(v, uint64(len(m.subscribedTopicNames)+1))
		for _, t := range m.subscribedTopicNames {
			v = appendCompactString(v, t)
		}
		v = appendCompactString(v, m.subscribedTopicRegex)
		v = binary.BigEndian.AppendUint32(v, uint32(m.rebalanceTimeoutMs))
		v = appendCompactNullableString(v, m.serverAssignor)
	case cgRecordTargetAssignmentMetadata:
		v = binary.BigEndian.AppendUint32(v, uint32(r.epoch))
	case cgRecordTargetAssignmentMember:
		v = appendTopicPartitions(v, r.target)
	case cgRecordCurrentAssignment:
		m := &r.subscription
		v = binary.BigEndian.AppendUint32(v, uint32(m.memberEpoch))
		v = binary.BigEndian.AppendUint32(v, uint32(m.previousMemberEpoch))
		v = append(v, byte(m.state))
		v = appendTopicPartitions(v, m.assigned)
		v = appendTopicPartitions(v, m.pendingRevocation)
	case cgRecordRegularExpression:
		v = binary.AppendUvarint(v, uint64(len(r.resolved.topics)+1))
		for _, t := range r.resolved.topics {
			v = appendCompactString(v, t)
		}
		v = binary.BigEndian.AppendUint64(v, uint64(r.resolved.version))
		v = binary.BigEndian.AppendUint64(v, uint64(r.resolved.timestamp))
	}
	v = append(v, 0) // no tagged fields
	return coordRecord{key: key, value: v}
}

func appendKeyString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func appendCompactString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)+1))
	return append(b, s...)
}

// appendCompactNullableString writes "" as null: the fields written this
// way (instance id, rack id, server assignor) are null when unset, and
// Kafka refuses them empty.
func appendCompactNullableString(b []byte, s string) []byte {
	if s == "" {
		return append(b, 0)
	}
	return appendCompactString(b, s)
}

func appendTopicPartitions(b []byte, a assignment) []byte {
	b = binary.AppendUvarint(b, uint64(len(a)+1))
	for _, t := range a.sortedTopics() {
		b = append(b, t[:]...)
		b = binary.AppendUvarint(b, uint64(len(a[t])+1))
		for _, p := range a[t] {
			b = binary.BigEndian.AppendUint32(b, uint32(p))
		}
		b = append(b, 0)
	}
	return b
}

// cgReader reads a consumer group record; the first error sticks.
type cgReader struct {
	b   []byte
	err error
}

var errShortRecord = errors.New("record too short")

func (r *cgReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		if r.err == nil {
			r.err = errShortRecord
		}
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *cgReader) int16() int16 { return int16(binary.BigEndian.Uint16(pad(r.take(2), 2))) }
func (r *cgReader) int32() int32 { return int32(binary.BigEndian.Uint32(pad(r.take(4), 4))) }
func (r *cgReader) int64() int64 { return int64(binary.BigEndian.Uint64(pad(r.take(8), 8))) }
func (r *cgReader) int8() int8   { return int8(pad(r.take(1), 1)[0]) }

func pad(b []byte, n int) []byte {
	if len(b) < n {
		return make([]byte, n)
	}
	return b
}

func (r *cgReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShortRecord
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *cgReader) keyString() string { return string(r.take(int(r.int16()))) }

// compactLen reads a compact length: -1 for null.
func (r *cgReader) compactLen() int {
	n := r.uvarint()
	if n > math.MaxInt32 {
		r.err = errShortRecord
		return 0
	}
	return int(n) - 1
}

func (r *cgReader) compactString() string {
	n := r.compactLen()
	if n < 0 {
		return ""
	}
	return string(r.take(n))
}

func (r *cgReader) compactStrings() []string {
	n := r.compactLen()
	if n < 0 || n > len(r.b) {
		if n > len(r.b) {
			r.err = errShortRecord
		}
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, r.compactString())
	}
	return out
}

// skipTags skips a tagged-field section, returning tag 0's data if present.
func (r *cgReader) skipTags() []byte {
	var tag0 []byte
	for range r.uvarint() {
		tag := r.uvarint()
		data := r.take(int(r.uvarint()))
		if tag == 0 {
			tag0 = data
		}
	}
	return tag0
}

func (r *cgReader) topicPartitions() assignment {
	a := assignment{}
	n := r.compactLen()
	if n > len(r.b) {
		r.err = errShortRecord
		return a
	}
	for range max(n, 0) {
		var t topicID
		copy(t[:], r.take(16))
		np := r.compactLen()
		if np > len(r.b)/4 {
			r.err = errShortRecord
			return a
		}
		for range max(np, 0) {
			a[t] = append(a[t], r.int32())
		}
		r.skipTags()
	}
	return normalizeAssignment(a)
}

// decodeCGRecord parses a consumer group record of type typ.
func decodeCGRecord(typ cgRecordType, key, value []byte, tombstone bool) (cgRecord, error) {
	rec := cgRecord{typ: typ}
	kr := &cgReader{b: key[2:]}
	rec.group = kr.keyString()
	switch typ {
	case cgRecordMemberMetadata, cgRecordTargetAssignmentMember, cgRecordCurrentAssignment:
		rec.member = kr.keyString()
	case cgRecordRegularExpression:
		rec.regex = kr.keyString()
	}
	if kr.err != nil {
		return rec, fmt.Errorf("decoding consumer group record key of type %d: %w", typ, kr.err)
	}
	if tombstone {
		rec.tombstone = true
		return rec, nil
	}
	r := &cgReader{b: value}
	if v := r.int16(); r.err == nil && v != cgValueVersion {
		return rec, fmt.Errorf("consumer group record of type %d for %s: value version %d is not served", typ, rec.group, v)
	}
	switch typ {
	case cgRecordGroupMetadata:
		rec.epoch = r.int32()
		if hash := r.skipTags(); len(hash) == 8 {
			rec.metadataHash = int64(binary.BigEndian.Uint64(hash))
		}
		return rec, wrapDecodeErr(typ, rec.group, r.err)
	case cgRecordMemberMetadata:
		m := newConsumerMember(rec.member)
		m.instanceID = r.compactString()
		m.rackID = r.compactString()
		m.clientID = r.compactString()
		m.clientHost = r.compactString()
		m.subscribedTopicNames = sortedNames(r.compactStrings())
		m.subscribedTopicRegex = r.compactString()
		m.rebalanceTimeoutMs = r.int32()
		m.serverAssignor = r.compactString()
		rec.subscription = m
	case cgRecordTargetAssignmentMetadata:
		rec.epoch = r.int32()
	case cgRecordTargetAssignmentMember:
		rec.target = r.topicPartitions()
	case cgRecordCurrentAssignment:
		m := newConsumerMember(rec.member)
		m.memberEpoch = r.int32()
		m.previousMemberEpoch = r.int32()
		m.state = memberStateFromByte(r.int8())
		m.assigned = r.topicPartitions()
		m.pendingRevocation = r.topicPartitions()
		rec.subscription = m
	case cgRecordRegularExpression:
		rec.resolved.topics = sortedNames(r.compactStrings())
		rec.resolved.version = r.int64()
		rec.resolved.timestamp = r.int64()
	}
	r.skipTags()
	return rec, wrapDecodeErr(typ, rec.group, r.err)
}

func wrapDecodeErr(typ cgRecordType, group string, err error) error {
	if err != nil {
		return fmt.Errorf("decoding consumer group record of type %d for %s: %w", typ, group, err)
	}
	return nil
}
