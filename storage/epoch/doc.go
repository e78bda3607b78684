// Package epoch is the LeaderEpochCache of a partition (KIP-101, KIP-279):
// the start offset of every leader epoch present in the log.
//
// Replicas use it to answer OffsetsForLeaderEpoch (EndOffsetFor) and to find
// where a diverged log must be truncated; the log layer keeps it in step with
// the data by calling Assign when a batch of a new epoch is appended,
// TruncateFromEnd when the log is truncated, TruncateFromStart when the log
// start offset moves and Clear when the log is truncated fully.
//
// The cache is persisted to <partitionDir>/leader-epoch-checkpoint in the
// text format of Kafka's LeaderEpochCheckpointFile, so a partition directory
// written by Strait can be read by Kafka's tools and the other way round.
// It follows Kafka's LeaderEpochFileCache; see cache.go for where we differ.
package epoch
