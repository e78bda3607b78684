package coordinator

import "unicode/utf16"

// JavaStringHashCode is Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over the UTF-16 code units of the string, in int32 arithmetic. Kafka
// places a group with it, so Strait must compute it exactly for groups to
// land on the partitions a Kafka cluster would use (and for tools that
// compute the coordinator partition themselves).
func JavaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s { // invalid UTF-8 reads as U+FFFD, as Java decodes it
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			r = lo
		}
		h = 31*h + r
	}
	return h
}

// kafkaAbs is Kafka's Utils.abs: the absolute value, except that
// Integer.MIN_VALUE maps to 0 instead of staying negative.
func kafkaAbs(n int32) int32 {
	if n == -n { // 0 or MinInt32
		return 0
	}
	if n < 0 {
		return -n
	}
	return n
}

// PartitionFor is the __consumer_offsets partition that coordinates
// groupID: Utils.abs(groupId.hashCode()) % numPartitions
// (GroupCoordinatorService.partitionFor).
func PartitionFor(groupID string, numPartitions int32) int32 {
	return kafkaAbs(JavaStringHashCode(groupID)) % numPartitions
}

// javaLength is a Java String's length(): UTF-16 code units. Kafka checks
// offset metadata against offset.metadata.max.bytes with it.
func javaLength(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
