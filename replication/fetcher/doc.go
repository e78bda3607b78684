// Package fetcher is the replica fetcher core: Kafka's AbstractFetcherThread
// and AbstractFetcherManager, free of cluster assumptions so the cluster
// mirror (KIP-1279) can reuse it against another cluster.
//
// A Fetcher copies a set of partitions from one leader. Each partition has a
// fetch state (Kafka's PartitionFetchState): Truncating or Fetching,
// possibly delayed after an error, with its fetch offset, the leader epoch
// it follows and the epoch of the last batch it fetched. The state machine
// is driven in steps that do no network IO themselves:
//
//	PollTruncation  → OffsetForLeaderEpoch request (or nil) → CompleteTruncation
//	PollFetch       → Fetch request (or nil)                → CompleteFetch
//	CompleteFetch   → offset resets (OFFSET_OUT_OF_RANGE)   → CompleteOffsetReset
//
// DoWork runs one round of them through the LeaderEndPoint, and Run loops
// DoWork; a simulation can instead carry each request through a simulated
// network and feed the answers back in any order the network produces. The
// local side is a Replica: the log the fetched batches are appended to
// (*storage.Log satisfies it).
//
// Truncation follows KIP-101, KIP-279 and KIP-595: with truncation on fetch
// the leader answers a fetch whose LastFetchedEpoch diverges from its log
// with DivergingEpoch and the follower truncates to the smaller of that end
// offset and its own end offset for the epoch; without it, the follower asks
// OffsetForLeaderEpoch for its latest epoch and truncates the same way,
// repeating while the leader answers with an epoch the follower does not
// have. OFFSET_OUT_OF_RANGE resets the fetch offset from the leader's log
// start and end offsets.
package fetcher
