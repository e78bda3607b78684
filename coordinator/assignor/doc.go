// Package assignor holds the server-side partition assignors a group
// coordinator runs to compute a group's target assignment: Kafka 4.x's
// ConsumerGroupPartitionAssignor implementations of KIP-848 ("uniform",
// the default, and "range") and the share-group SimpleAssignor of KIP-932
// ("simple").
//
// An assignor is a pure function of its input: the members (their
// subscriptions, racks, instance ids and current target assignments) and
// a TopicDescriber giving the partition counts and replica racks of the
// subscribed topics. It keeps no state, does no I/O, and gives the same
// answer for the same input: wherever it walks a map it walks it in key
// order, where Kafka walks HashMaps in hash order. That is why a few of
// Kafka's own test expectations, which depend on the hash order of topic
// ids, come out differently here (see the tests); the properties the
// assignors promise (balance, stickiness, co-partitioning, coverage) are
// the same.
//
// The coordinator resolves subscribed topic names and regular expressions
// to topic ids before it calls an assignor, as Kafka's does; a topic the
// describer does not know is skipped, so its subscribers get nothing of
// it (Kafka's assignors throw PartitionAssignorException there, which the
// coordinator never lets happen because it only passes ids it resolved).
package assignor
