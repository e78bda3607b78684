// Package records encodes and decodes, byte for byte as Kafka 4.x does,
// the __consumer_offsets records of KIP-848 consumer groups and KIP-932
// share groups, which franz-go's kmsg does not have (kmsg has the classic
// group's OffsetCommitKey/Value and GroupMetadataKey/Value, types 0-2).
//
// # Framing
//
// Kafka's CoordinatorRecordSerde (coordinator-common) frames every
// coordinator record the same way:
//
//	key   = int16 record type, then the key message at version 0
//	value = int16 value version, then the value message at that version
//	        (a tombstone has no value at all: a null record value)
//
// The record type is the "apiKey" of the record's *Key.json schema in
// group-coordinator/src/main/resources/common/message; Kafka's build turns
// those into the generated CoordinatorRecordType enum. Before Kafka 4.0
// the same number was the key's schema version (validVersions "3", "4",
// ...), so the bytes are the same in 3.7-3.9 and 4.x. Keys are never
// flexible: their strings are int16-length strings. Every value here has
// validVersions "0" and flexibleVersions "0+": compact strings and arrays
// (unsigned varint length + 1), and a tagged-field section ending every
// struct. Kafka writes all of them at value version 0
// (GroupCoordinatorRecordHelpers: new ApiMessageAndVersion(value, 0)).
//
// # Record types (CoordinatorRecordType)
//
//	 0 LegacyOffsetCommit  1 OffsetCommit  2 GroupMetadata     (kmsg)
//	 3 ConsumerGroupMetadata                  4 ConsumerGroupPartitionMetadata
//	 5 ConsumerGroupMemberMetadata            6 ConsumerGroupTargetAssignmentMetadata
//	 7 ConsumerGroupTargetAssignmentMember    8 ConsumerGroupCurrentMemberAssignment
//	 9 ShareGroupPartitionMetadata (4.0 only) 10 ShareGroupMemberMetadata
//	11 ShareGroupMetadata                    12 ShareGroupTargetAssignmentMetadata
//	13 ShareGroupTargetAssignmentMember      14 ShareGroupCurrentMemberAssignment
//	15 ShareGroupStatePartitionMetadata      16 ConsumerGroupRegularExpression
//	17, 19-23 streams groups (KIP-1071; 18 was removed): not here.
//
// # Unknown record types and versions
//
// Kafka's loader (CoordinatorLoaderImpl) skips a record whose type its
// serde does not know with a warning ("Unknown record type N while loading
// offsets and group metadata from P. Ignoring it. It could be a left over
// from an aborted upgrade."); so does Kafka 4.1+ with type 9, whose schema
// it dropped. Any other decoding failure, including a value version
// outside the schema's validVersions (UnknownRecordVersionException),
// fails the load of the whole partition. KeyType, ErrUnknownRecordType and
// ErrUnknownValueVersion let a loader do the same.
//
// # Schema versions followed
//
// The fields are those of Apache Kafka trunk. Fields added after a
// release are tagged (the value version stays 0), so Kafka 4.0 reads what
// 4.1+ writes and the other way round: ConsumerGroupMetadataValue's
// MetadataHash (4.1, KIP-1101) and CreationTimeMs (KIP-1282),
// ConsumerGroupTargetAssignmentMetadataValue's AssignmentTimestamp (4.3,
// KIP-1263) and the AssignmentEpochs of ConsumerGroupCurrentMemberAssignment
// (KIP-1251). Such a field is written only when it differs from its
// default, as Kafka's generated code does, so a value that does not set
// them is byte for byte what Kafka 4.1 writes. The share-group schemas
// changed incompatibly while KIP-932 was in preview (4.0): these are the
// 4.1+ ones (ShareGroupMetadataValue's untagged MetadataHash,
// ShareGroupStatePartitionMetadataValue's InitializingTopics).
//
// Tagged fields this package does not know are kept (UnknownTags) and
// written back, so a record read and rewritten loses nothing.
//
// Two tagged fields declare "default": null as a JSON null, which Kafka's
// message generator reads as no default at all: ConsumerGroupMemberMetadata's
// ClassicMemberMetadata and the KIP-1251 AssignmentEpochs. Their default is
// then an empty struct or array: Kafka leaves that out, reads an absent tag
// back as it, and writes a null explicitly, so every consumer-protocol
// member's record ends with tag 0 holding a null struct. The field
// comments say how this package follows that.
//
// The golden records of the tests were checked once, byte for byte,
// against the classes Kafka's own generator makes from these schemas.
package records
